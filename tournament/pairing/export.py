"""Reproducible pairings: the inputs and the rounds as JSON, and re-checking a round.

A pairing input (`king-pairing/1`) holds everything the pairing depends on: the system, the
round number, the tournament seed, the fill rule, the players (for a Swiss with their standing
keys as exact fractions) and every earlier round. The runner stores it with the `round paired`
event, or anyone rebuilds it from the tournament's events with `pairing_input`; `reproduce`
pairs it again, and `verify` says whether a recorded round is exactly that pairing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any, cast

from tournament.model import Fill, PlayerId, Round, Schedule, Table
from tournament.pairing.round_robin import RoundRobinInput, schedule
from tournament.pairing.swiss import Entrant, SwissInput, pair_swiss
from tournament.standings import Standings

FORMAT = "king-pairing/1"

PairingInput = SwissInput | RoundRobinInput


class MalformedPairing(ValueError):
    """A pairing document that is not valid king-pairing/1."""


def round_to_json(rnd: Round) -> dict[str, Any]:
    return {
        "round": rnd.number,
        "tables": [
            {"table": t.number, "seats": list(t.seats), "house_seats": list(t.house)}
            for t in rnd.tables
        ],
        "byes": list(rnd.byes),
    }


def round_from_json(doc: dict[str, Any]) -> Round:
    try:
        tables = []
        for t in doc["tables"]:
            seats = [str(p) for p in t["seats"]]
            if len(seats) != 4:
                raise MalformedPairing("a table has four seats")
            tables.append(
                Table(
                    int(t["table"]),
                    (seats[0], seats[1], seats[2], seats[3]),
                    tuple(int(s) for s in t.get("house_seats", ())),
                )
            )
        return Round(int(doc["round"]), tuple(tables), tuple(str(p) for p in doc.get("byes", ())))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, MalformedPairing):
            raise
        raise MalformedPairing(f"bad round: {exc!r}") from None


def pairing_input(
    round_no: int,
    seed: str,
    active: Iterable[PlayerId],
    standings: Standings,
    history: Sequence[Round],
    fill: Fill = "bye",
) -> SwissInput:
    """The Swiss input for round `round_no` from the standings before it (a late joiner absent
    from them starts at zero) and every earlier round."""
    rows = {r.player: r for r in standings.rows}
    entrants = []
    for p in active:
        r = rows.get(p)
        entrants.append(
            Entrant(p, r.ladder, r.game_points, r.table_mates, r.wins) if r else Entrant(p)
        )
    return SwissInput(round_no, seed, tuple(entrants), tuple(history), fill)


def input_to_json(inp: PairingInput) -> dict[str, Any]:
    history = [round_to_json(r) for r in inp.history]
    if isinstance(inp, SwissInput):
        return {
            "format": FORMAT,
            "system": "swiss",
            "round": inp.round,
            "seed": inp.seed,
            "fill": inp.fill,
            "entrants": [
                {
                    "player": e.player,
                    "ladder": str(e.ladder),
                    "game_points": e.game_points,
                    "table_mates": str(e.table_mates),
                    "wins": e.wins,
                }
                for e in inp.entrants
            ],
            "history": history,
        }
    return {
        "format": FORMAT,
        "system": "round_robin",
        "seed": inp.seed,
        "fill": inp.fill,
        "rounds": inp.rounds,
        "players": list(inp.players),
        "history": history,
    }


def input_from_json(doc: dict[str, Any]) -> PairingInput:
    if doc.get("format") != FORMAT:
        raise MalformedPairing(f"not a {FORMAT} document")
    try:
        fill = doc.get("fill", "bye")
        if fill not in ("bye", "house_bot"):
            raise MalformedPairing(f"unknown fill {fill!r}")
        history = tuple(round_from_json(r) for r in doc.get("history", ()))
        if doc["system"] == "swiss":
            entrants = tuple(
                Entrant(
                    str(e["player"]),
                    Fraction(e["ladder"]),
                    int(e["game_points"]),
                    Fraction(e["table_mates"]),
                    int(e["wins"]),
                )
                for e in doc["entrants"]
            )
            return SwissInput(
                int(doc["round"]), str(doc["seed"]), entrants, history, cast(Fill, fill)
            )
        if doc["system"] == "round_robin":
            rounds = doc.get("rounds")
            return RoundRobinInput(
                tuple(str(p) for p in doc["players"]),
                str(doc["seed"]),
                None if rounds is None else int(rounds),
                cast(Fill, fill),
                history,
            )
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        if isinstance(exc, MalformedPairing):
            raise
        raise MalformedPairing(f"bad pairing input: {exc!r}") from None
    raise MalformedPairing(f"unknown system {doc.get('system')!r}")


def pair(inp: PairingInput) -> tuple[Round, ...]:
    """The rounds an input pairs: one for a Swiss, every planned one for a round-robin."""
    if isinstance(inp, SwissInput):
        return (pair_swiss(inp),)
    return schedule(inp).rounds


def schedule_to_json(s: Schedule) -> dict[str, Any]:
    b = s.balance
    return {
        "players": list(s.players),
        "seed": s.seed,
        "fill": s.fill,
        "method": s.method,
        "balance": {
            "players": b.players,
            "pairs": b.pairs,
            "ideal_low": b.ideal_low,
            "ideal_high": b.ideal_high,
            "min_meetings": b.min_meetings,
            "max_meetings": b.max_meetings,
            "never_met": b.never_met,
            "below_ideal": b.below_ideal,
            "above_ideal": b.above_ideal,
            "min_byes": b.min_byes,
            "max_byes": b.max_byes,
            "min_house_games": b.min_house_games,
            "max_house_games": b.max_house_games,
            "ideal": b.ideal,
        },
        "rounds": [round_to_json(r) for r in s.rounds],
    }


def reproduce(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Pair a king-pairing/1 input document again; the rounds as JSON."""
    return [round_to_json(r) for r in pair(input_from_json(doc))]


def verify(doc: dict[str, Any], recorded: dict[str, Any]) -> bool:
    """Whether `recorded` (a round as JSON) is exactly what the input pairs for its number."""
    wanted = round_from_json(recorded)
    return any(r == wanted for r in pair(input_from_json(doc)) if r.number == wanted.number)


def dumps(doc: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces): equal documents, equal bytes."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
