"""`python -m bench solver` on a few small positions: both searches answer, and agree."""

from __future__ import annotations

from bench.solver import measure, positions


def test_positions_have_the_tricks_left_asked_for() -> None:
    for st in positions(4, 5, 1):
        assert st.tricks == 9 and not st.trick and not st.over


def test_the_solver_and_the_plain_search_agree_where_both_finish() -> None:
    (row,) = measure({4: 3}, 100_000, 1)["rows"]
    assert row["solver"]["solved"] == 3
    solved_by_both = min(row["solver"]["solved"], row["plain"]["solved"])
    assert row["both_solved_and_agree"] == f"{solved_by_both}/{solved_by_both}"
    assert row["plain"]["median_nodes"] >= row["solver"]["median_nodes"]
