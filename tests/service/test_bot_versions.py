"""Which version of a bot a game counts for (services.accounts.versions) and each version's
results on the bot's page (services.web.accounts.version_results)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from services.accounts.versions import BotVersion, current_at
from services.web.accounts import version_results
from services.web.lists import GameLine

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def versions(offsets: list[int]) -> list[BotVersion]:
    return [
        BotVersion("b", i + 1, str(i + 1), None, T0 + timedelta(minutes=m))
        for i, m in enumerate(offsets)
    ]


@given(
    st.lists(st.integers(0, 1000), min_size=1, max_size=8, unique=True).map(sorted),
    st.integers(-10, 1100),
)
def test_a_game_counts_for_the_latest_version_made_before_it(
    offsets: list[int], minute: int
) -> None:
    vs = versions(offsets)
    when = T0 + timedelta(minutes=minute)
    found = current_at(vs, when)
    made = [v for v in vs if v.created_at <= when]
    assert found == (made[-1] if made else None)
    assert current_at(vs, None) == vs[0] and current_at([], when) is None


def test_each_versions_finished_games_wins_and_mean_points() -> None:
    vs = versions([0, 100])

    def game(gid: str, minute: int, seat_totals: list[int], winners: list[int]) -> GameLine:
        seats = ["b", "x", "y", "z"]
        return GameLine(
            gid, "over", seats, seat_totals, winners, created_at=T0 + timedelta(minutes=minute)
        )

    games = [
        game("g1", 10, [30, 0, 0, 0], [0]),
        game("g2", 20, [-10, 5, 0, 0], [1]),
        game("g3", 150, [50, 0, 0, 0], [0]),
        GameLine("g4", "live", ["b", "x", "y", "z"], created_at=T0 + timedelta(minutes=160)),
        game("g5", 170, [0, 10, 0, 0], [1]),
    ]
    newest, first = version_results(vs, games, "b")
    assert (newest.version.number, newest.games, newest.wins, newest.mean) == (2, 2, 1, 25.0)
    assert (first.version.number, first.games, first.wins, first.mean) == (1, 2, 1, 10.0)
    assert version_results(vs, [], "b")[0].mean is None
