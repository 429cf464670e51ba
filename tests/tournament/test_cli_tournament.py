"""`king tournament`: bot URL entrants over HTTP, the round-robin balance line, and re-checking
exported pairings."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from domain.playout import new_game
from domain.rules import Rules
from domain.view import seat_view
from eventstore import EventStore
from services.botkit import PushBotServer, strategy_decider
from services.botkit.remote import RemoteBotError
from services.cli import main
from services.commands.tournament import BotPolicies
from tournament.events import Registration, RoundPaired, TournamentState, apply, from_payload
from tournament.pairing.export import input_to_json, round_to_json
from tournament.planning import swiss_input
from tournament.runner import TournamentRunner

UNREACHABLE = "http://127.0.0.1:1/"  # port 1 on loopback: nothing listens, refused at once


@pytest.fixture(autouse=True)
def _fast_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KING_SQLITE_SYNCHRONOUS", "OFF")  # test databases need no fsync


def king(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def run(db: Path, tid: str, players: str, *extra: str) -> tuple[int, str, str]:
    return king(
        "tournament", "run", "--id", tid, "--db", f"sqlite:///{db}", "--players", players,
        "--mode", "short12", "--seed", tid, *extra,
    )  # fmt: skip


class CountingBot:
    """A push bot (the bot kit's server) that counts the decisions it was asked for."""

    def __init__(self, strategy: str, seed: int) -> None:
        self.asked = 0
        self.lock = threading.Lock()
        decide = strategy_decider(strategy, seed)

        def counted(request: dict[str, Any]) -> dict[str, Any]:
            with self.lock:
                self.asked += 1
            return decide(request)

        self.server = PushBotServer(counted).start()


def test_a_bot_url_entrant_plays_its_games_over_http(tmp_path: Path) -> None:
    bot = CountingBot("heuristic", 3)
    try:
        status, out, err = run(
            tmp_path / "b.db", "b", f"pushy={bot.server.url},random*3", "--rounds", "2", "--json"
        )
    finally:
        bot.server.stop()
    assert status == 0, err
    doc = json.loads(out)
    assert doc["audit"] == {"games": 2, "failed": []}
    [report] = doc["bots"]
    assert report == {
        "player": "pushy",
        "url": bot.server.url,
        "games": 2,
        "strikes": 0,
        "forfeits": 0,
        "last_error": None,
    }
    with EventStore.open(f"sqlite:///{tmp_path / 'b.db'}") as store:
        runner = TournamentRunner(store)
        state = runner.load("b")
        decisions = 0
        for result in state.results:
            seat = result.seats.index("pushy")
            game = runner.games.load(result.game_id)
            # pushy held its seat to the end (no substitute) and decided every one of its moves.
            assert game.occupants[seat] == ("pushy",) and not game.abandoned
            decisions += sum(
                1
                for r in runner.games.events(result.game_id)
                if r.payload.get("seat") == seat
                and r.type in ("contract_declared", "redeal_asked", "card_played")
            )
    assert bot.asked > 0 and bot.asked >= decisions


def test_an_unreachable_bot_url_gets_strikes_and_forfeits_with_a_clear_message(
    tmp_path: Path,
) -> None:
    status, out, err = run(
        tmp_path / "u.db", "u", f"dead={UNREACHABLE},random*3", "--rounds", "2", "--json"
    )
    assert status == 0 and "Traceback" not in err
    doc = json.loads(out)
    assert doc["audit"] == {"games": 2, "failed": []}
    [report] = doc["bots"]
    assert report["games"] == 2 and report["forfeits"] == 2 and report["strikes"] == 6
    assert "ConnectError" in report["last_error"] and UNREACHABLE in report["last_error"]
    assert f"king: bot dead ({UNREACHABLE}): 2 games, 6 strikes, forfeited 2" in " ".join(
        err.split()
    )
    # The standings charge the forfeits (R-ABANDON: −30 a game), and the text output says so.
    dead = next(r for r in doc["standings"] if r["player"] == "dead")
    assert dead["ladder"] == "-60"
    status, out, _ = king("tournament", "run", "--id", "u", "--db", f"sqlite:///{tmp_path}/u.db")
    assert status == 0 and "bot dead" in out and "forfeited 2" in out


def test_a_bot_too_slow_for_the_decision_time_limit_fails_the_decision() -> None:
    release = threading.Event()

    def stalls(request: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return request["legal"][0]

    server = PushBotServer(stalls).start()
    try:
        policies = BotPolicies(seconds=0.2)
        reg = Registration("slow", "slow", "bot", server.url)
        policy = policies(reg, "g", 0, "heuristic")
        game, _ = new_game("g", ("a", "b", "c", "d"), bytes(32), Rules(mode="short12"))
        view = seat_view(game, 0)
        with pytest.raises(RemoteBotError, match="Timeout"):
            policy(view)
        assert "Timeout" in policies.last_error["slow"]
    finally:
        release.set()
        server.stop()


def test_builtin_players_and_house_bots_keep_their_strategies() -> None:
    policies = BotPolicies(seconds=1)
    assert policies(None, "g", 0, "random").name == "random"
    reg = Registration("h", "h", "builtin", "heuristic")
    assert policies(reg, "g", 1, "random").name == "heuristic"


@pytest.mark.parametrize(
    ("players", "summary"),
    [
        ("random*5", "schedule: cyclic design on GF(5), every pair meets exactly 3 times; "
         "byes 1 each"),
        ("random*6", "schedule: search (no known design fits this field and number of rounds), "
         "pairs meet 1–2 times (as evenly as possible); byes 1 each"),
    ],
)  # fmt: skip
def test_a_round_robin_says_how_balanced_its_schedule_is(
    tmp_path: Path, players: str, summary: str
) -> None:
    status, out, err = run(tmp_path / "rr.db", "rr", players, "--format", "round_robin", "--json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["schedule"]["summary"] == summary
    balance = doc["schedule"]["balance"]
    assert balance["ideal"] and balance["players"] == len(doc["standings"])
    status, out, _ = king("tournament", "run", "--id", "rr", "--db", f"sqlite:///{tmp_path}/rr.db")
    assert status == 0 and summary in " ".join(out.split())


def test_a_swiss_has_no_schedule_line(tmp_path: Path) -> None:
    status, out, _ = run(tmp_path / "s.db", "s", "random*4", "--rounds", "1", "--json")
    assert status == 0 and json.loads(out)["schedule"] is None


def test_the_last_line_links_the_tournaments_page(tmp_path: Path) -> None:
    """The demo's last line says where to watch: the tournament's page, whole on one line."""
    status, out, _ = run(tmp_path / "w.db", "w-1", "random*4", "--rounds", "1")
    last = out.strip().splitlines()[-1]
    assert status == 0
    assert last.startswith("Watch it: run king serve --db ")
    assert last.endswith(" and open http://127.0.0.1:8000/tournaments/w-1"), last


def exported_pairings(url: str, tid: str) -> list[dict[str, Any]]:
    """The rounds as GET /api/v1/tournaments/{id}/pairings exports them: tables, byes, the
    pairing and the king-pairing/1 input, each input taken from the events before its round."""
    out: list[dict[str, Any]] = []
    state = TournamentState()
    with EventStore.open(url) as store:
        for r in store.read_stream(f"tournament-{tid}"):
            event = from_payload(r.type, r.payload)
            if isinstance(event, RoundPaired):
                doc = input_to_json(swiss_input(state))
                state = apply(state, event)
                tables = [
                    {
                        "table": t["table"],
                        "game_id": t["game_id"],
                        "seats": list(t["seats"]),
                        "house_seats": list(t.get("house", ())),
                    }
                    for t in event.tables
                ]
                out.append(
                    {
                        "round": event.round,
                        "tables": tables,
                        "byes": list(event.byes),
                        "manual": False,
                        "pairing": round_to_json(state.rounds[-1]),
                        "input": doc,
                    }
                )
            else:
                state = apply(state, event)
    return out


def test_exported_pairings_are_checked_again(tmp_path: Path) -> None:
    status, _, err = run(tmp_path / "p.db", "p", "random*6", "--rounds", "2", "--json")
    assert status == 0, err
    export = exported_pairings(f"sqlite:///{tmp_path / 'p.db'}", "p")
    assert [r["round"] for r in export] == [1, 2]

    def check(doc: Any) -> tuple[int, str, str]:
        path = tmp_path / "check.json"
        path.write_text(json.dumps(doc))
        return king("tournament", "pairings", "--check", str(path))

    status, out, _ = check(export)
    assert status == 0 and "2 of 2 rounds reproduced exactly" in out
    assert check(export[1])[0] == 0  # one round alone
    # Swapping two seats in the pairing (and its listed table) no longer reproduces.
    forged = copy.deepcopy(export)
    for seats in (forged[1]["pairing"]["tables"][0]["seats"], forged[1]["tables"][0]["seats"]):
        seats[0], seats[1] = seats[1], seats[0]
    status, out, _ = check(forged)
    assert status == 1 and "round 2: DIFFERS" in out and "round 1: matches" in out
    # A listed table that disagrees with an untouched pairing is caught too.
    listed = copy.deepcopy(export)
    listed[0]["byes"] = []
    status, out, _ = check(listed)
    assert status == 1 and "round 1: DIFFERS" in out
    # A round paired by hand has no input: it is said so, and is no failure.
    by_hand = copy.deepcopy(export)
    by_hand[0].update(manual=True, input=None)
    status, out, _ = check(by_hand)
    assert status == 0 and "round 1: paired by hand" in out
    assert "1 of 2 rounds reproduced exactly, 1 paired by hand" in out


@pytest.mark.parametrize(
    "doc",
    [
        {"x": 1},
        [],
        [{"input": {}, "pairing": {}}],
        {"rounds": [{"round": 1}]},
        [{"input": None, "pairing": {"round": 1, "tables": [], "byes": []}}],
    ],
)
def test_a_file_that_is_no_pairing_export_is_refused_clearly(tmp_path: Path, doc: Any) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    status, _, err = king("tournament", "pairings", "--check", str(path))
    assert status == 2 and err.startswith("king: ") and "Traceback" not in err
