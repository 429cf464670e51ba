"""king-pairing/1: a round can be re-checked from its input document alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest

from tournament.model import GameResult, Round, Table
from tournament.pairing.export import (
    MalformedPairing,
    dumps,
    input_from_json,
    input_to_json,
    pair,
    pairing_input,
    reproduce,
    round_from_json,
    round_to_json,
    schedule_to_json,
    verify,
)
from tournament.pairing.round_robin import RoundRobinInput, round_robin
from tournament.pairing.swiss import pair_swiss
from tournament.standings import standings

PLAYERS = [f"p{i}" for i in range(10)]


def swiss_round_two() -> tuple[dict[str, object], Round]:
    r1 = Round(
        1,
        (Table(1, ("p0", "p1", "p2", "p3")), Table(2, ("p4", "p5", "p6", "p7"))),
        ("p8", "p9"),
    )
    results = [
        GameResult(
            "g1",
            1,
            ("p0", "p1", "p2", "p3"),
            (450, 0, -130, -320),
            (0, 1),
            (("p0", Fraction(9)), ("p1", Fraction(6)), ("p2", Fraction(-6)), ("p3", Fraction(-6))),
        ),
        GameResult(
            "g2",
            1,
            ("p4", "p5", "p6", "p7"),
            (200, 200, 10, -410),
            (0, 1, 2),
            (
                ("p4", Fraction(11, 2)),
                ("p5", Fraction(11, 2)),
                ("p6", Fraction(4)),
                ("p7", Fraction(-12)),
            ),
        ),
    ]
    table = standings(PLAYERS, results, [r1], seed="s")
    active = [p for p in PLAYERS if p != "p3"] + ["late"]  # a withdrawal and a late join
    inp = pairing_input(2, "s", active, table, [r1])
    return input_to_json(inp), pair_swiss(inp)


def test_swiss_round_reproduced_from_its_document() -> None:
    doc, rnd = swiss_round_two()
    text = dumps(doc)
    again = json.loads(text)
    assert reproduce(again) == [round_to_json(rnd)]
    assert verify(again, round_to_json(rnd))
    assert dumps(input_to_json(input_from_json(again))) == text
    entrants = {e["player"]: e for e in again["entrants"]}
    assert entrants["p4"]["ladder"] == "11/2"
    assert entrants["late"]["ladder"] == "0"


def test_a_changed_round_fails_verification() -> None:
    doc, rnd = swiss_round_two()
    recorded = round_to_json(rnd)
    t0 = recorded["tables"][0]
    t0["seats"] = [t0["seats"][1], t0["seats"][0], *t0["seats"][2:]]
    assert not verify(doc, recorded)


def test_round_robin_document() -> None:
    inp = RoundRobinInput(tuple(PLAYERS), "s", 3, "house_bot")
    doc = json.loads(dumps(input_to_json(inp)))
    s = round_robin(PLAYERS, "s", 3, "house_bot")
    assert reproduce(doc) == [round_to_json(r) for r in s.rounds]
    assert all(verify(doc, round_to_json(r)) for r in s.rounds)
    out = schedule_to_json(s)
    assert out["balance"]["players"] == 10 and len(out["rounds"]) == 3
    assert pair(input_from_json(doc)) == s.rounds


def test_round_json_roundtrip_keeps_house_seats() -> None:
    rnd = Round(5, (Table(1, ("a", "house-bot-1", "b", "c"), (1,)),), ("d",))
    assert round_from_json(json.loads(dumps(round_to_json(rnd)))) == rnd


@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"format": "king-pairing/1", "system": "chess"},
        {"format": "king-pairing/1", "system": "swiss", "round": 1, "seed": "s", "entrants": [{}]},
        {"format": "king-pairing/1", "system": "swiss", "round": 1, "seed": "", "fill": "x"},
        {
            "format": "king-pairing/1",
            "system": "round_robin",
            "seed": "",
            "players": ["a"],
            "history": [{"round": 1, "tables": [{"table": 1, "seats": ["a"]}]}],
        },
    ],
)
def test_malformed_documents_are_refused(doc: dict[str, object]) -> None:
    with pytest.raises(MalformedPairing):
        input_from_json(doc)


SCRIPT = """
from tournament.pairing.export import dumps, round_to_json, schedule_to_json
from tournament.pairing.round_robin import round_robin
from tournament.pairing.swiss import Entrant, SwissInput, pair_swiss
s = round_robin([f"p{i}" for i in range(22)], "x", 6, "house_bot")
e = tuple(Entrant(f"p{i}", i % 5) for i in range(22))
r = pair_swiss(SwissInput(7, "x", e, s.rounds))
print(dumps([schedule_to_json(s), round_to_json(r)]))
"""


def test_same_pairings_in_any_process() -> None:
    """Nothing depends on string hashing or set order: other hash seeds, same bytes."""
    outputs = set()
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
