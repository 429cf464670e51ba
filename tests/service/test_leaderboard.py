"""The leaderboard is folded again only when a tournament's stream has moved: a new
tournament's games show at once, and an unchanged store gives the same answer. Its rows are
bot identities: every entrant of a strategy, in every tournament, is one row."""

from __future__ import annotations

from domain.rules import Rules
from services.container import build_services
from services.database import open_store
from tests.service.conftest import SettingsFactory
from tournament.runner import TournamentRunner, parse_players

SHORT = Rules(mode="short12")  # the leaderboard is not about the length of a game


def test_the_leaderboard_follows_new_tournaments(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    with open_store(settings) as store:  # the ratings are a projection: the service's tables
        desk = build_services(settings, store).tournaments
        assert desk is not None
        local = TournamentRunner(store)  # tournaments played here, read by the service's desk
        players = parse_players("random*2,heuristic*2")
        local.create("first", players, rounds=1, rules=SHORT, seed="a")
        local.run("first")
        once = desk.leaderboard(100, 0)
        assert {(r.player, r.name, r.kind, r.games) for r in once} == {
            ("house:random", "random", "strategy", 1),
            ("house:heuristic", "heuristic", "strategy", 1),
        }
        assert desk.leaderboard(100, 0) == once
        local.create("second", players, rounds=2, rules=SHORT, seed="b")
        local.run("second")
        twice = desk.leaderboard(100, 0)
        assert sorted((r.player, r.games) for r in twice) == [
            ("house:heuristic", 3),
            ("house:random", 3),
        ]
        fresh = build_services(settings, store).tournaments
        assert fresh is not None and fresh.leaderboard(100, 0) == twice
