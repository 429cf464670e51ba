"""Duplicate deals: every table of a round gets the same seed input and shuffle id, so the
same secret gives the same hands (and the same commitment) everywhere; otherwise all differ."""

from __future__ import annotations

import pytest

from domain.shuffle import commitment, deal_hands
from tournament.model import Round, Table
from tournament.pairing.duplicate import deal_plans, derive_server_seed, table_game_id

SECRET = bytes(range(32))
ROUND = Round(
    3,
    (
        Table(1, ("a", "b", "c", "d")),
        Table(2, ("e", "f", "g", "h")),
        Table(3, ("i", "j", "k", "house-bot-1"), (3,)),
    ),
    ("z",),
)


def test_duplicate_tables_share_seed_and_cards() -> None:
    plans = deal_plans(ROUND, "t42", "seed", duplicate=True)
    assert [p.game_id for p in plans] == ["t42-r3-t1", "t42-r3-t2", "t42-r3-t3"]
    assert len({p.seed_input for p in plans}) == 1
    assert len({p.shuffle_game_id for p in plans}) == 1
    seeds = {derive_server_seed(SECRET, p) for p in plans}
    assert len(seeds) == 1
    assert len({commitment(s) for s in seeds}) == 1
    hands = {deal_hands(derive_server_seed(SECRET, p), p.shuffle_game_id, 1, 0) for p in plans}
    assert len(hands) == 1


def test_plain_tables_all_differ() -> None:
    plans = deal_plans(ROUND, "t42", "seed")
    assert len({p.seed_input for p in plans}) == 3
    assert [p.shuffle_game_id for p in plans] == [p.game_id for p in plans]
    assert len({derive_server_seed(SECRET, p) for p in plans}) == 3
    assert not any(p.duplicate for p in plans)


def test_rounds_and_tournaments_never_share_seeds() -> None:
    other_round = Round(4, ROUND.tables)
    inputs = {
        p.seed_input
        for r in (ROUND, other_round)
        for t in ("t42", "t43")
        for dup in (False, True)
        for p in deal_plans(r, t, "seed", dup)
    }
    assert len(inputs) == 2 * 2 * (3 + 1)


def test_deterministic_and_documented_format() -> None:
    assert deal_plans(ROUND, "t42", "s", True) == deal_plans(ROUND, "t42", "s", True)
    plan = deal_plans(ROUND, "t42", "s")[1]
    assert plan.seed_input == "king-deal/1|t42|s|round=3|table=2"
    assert table_game_id("t42", 3, 2) == plan.game_id
    assert len(derive_server_seed(SECRET, plan)) == 32


def test_short_secret_refused() -> None:
    with pytest.raises(ValueError):
        derive_server_seed(b"short", deal_plans(ROUND, "t", "s")[0])
