"""What a tournament does next, decided from its events alone (pure).

The next round's pairing, the standings and the seating all follow from the tournament's own
stream, so anyone holding it can recompute and check them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

from tournament.events import TournamentState
from tournament.model import HOUSE_BOT_PREFIX, PlayerId, Round, Table
from tournament.pairing.round_robin import round_robin
from tournament.pairing.swiss import Entrant, SwissInput, pair_swiss
from tournament.standings import Standings, standings


def current_standings(state: TournamentState) -> Standings:
    s = state.settings
    return standings(
        [p.player_id for p in state.players],
        state.results,
        state.rounds,
        s.bye_points,
        s.seed,
    )


def swiss_input(state: TournamentState) -> SwissInput:
    """The inputs of the next Swiss round: the active players' standing keys and the history."""
    s = state.settings
    table = current_standings(state)
    active = set(state.active)
    entrants = tuple(
        Entrant(r.player, r.ladder, r.game_points, r.table_mates, r.wins)
        for r in table.rows
        if r.player in active
    )
    return SwissInput(len(state.rounds) + 1, s.seed, entrants, state.rounds, s.fill)


def next_round(state: TournamentState) -> Round:
    """The pairing of the next round.

    Swiss pairs from the current standings. A round-robin is planned once for the whole field
    (a known design where one exists) and re-planned for the remaining rounds when the field
    changes (a late join or a withdrawal), with the rounds already played as history.
    """
    s = state.settings
    number = len(state.rounds) + 1
    if state.manual is not None and state.manual.number == number:
        return state.manual  # the organiser's pairing, checked when it was set
    if s.format == "swiss":
        return pair_swiss(swiss_input(state))
    since = state.field_changed_after
    total = s.rounds or 0
    plan = round_robin(state.active, s.seed, total - since, s.fill, state.rounds[:since])
    return plan.rounds[number - 1 - since]


class BadPairing(ValueError):
    """A hand pairing that cannot be played; the message gives every reason."""


_HOUSE_SEAT = re.compile(re.escape(HOUSE_BOT_PREFIX) + r"[1-9][0-9]{0,3}")


def check_manual(
    state: TournamentState,
    round_no: int,
    tables: Sequence[Sequence[PlayerId]],
    byes: Sequence[PlayerId] = (),
) -> Round:
    """The organiser's pairing of round `round_no` as a Round, or BadPairing saying why not.

    It must be the next round to pair, and every active player must sit at exactly one table
    or have exactly one bye. Tables are numbered in the order given, seats are in play order; a
    `house-bot-<n>` seat (distinct within the round) is a house bot's.
    """
    total = state.settings.rounds or 0
    if state.finished is not None:
        raise BadPairing("the tournament is finished")
    if round_no <= len(state.rounds):
        raise BadPairing(f"round {round_no} is paired already")
    if round_no != len(state.rounds) + 1:
        raise BadPairing(f"round {len(state.rounds) + 1} is the next round to pair, not {round_no}")
    if round_no > total:
        raise BadPairing(f"the tournament has {total} rounds")
    if not tables:
        raise BadPairing("a round needs at least one table")
    reasons: list[str] = []
    registered = {p.player_id for p in state.players}
    seen: dict[PlayerId, int] = {}
    built: list[Table] = []
    for n, seats in enumerate(tables, start=1):
        if len(seats) != 4:
            reasons.append(f"table {n} has {len(seats)} seats, not four")
            continue
        house = tuple(s for s, p in enumerate(seats) if _HOUSE_SEAT.fullmatch(p))
        if len(house) == 4:
            reasons.append(f"table {n} has no registered player")
        built.append(Table(n, (seats[0], seats[1], seats[2], seats[3]), house))
        for p in seats:
            seen[p] = seen.get(p, 0) + 1
    for p in byes:
        seen[p] = seen.get(p, 0) + 1
        if _HOUSE_SEAT.fullmatch(p):
            reasons.append(f"{p} is a house-bot seat and cannot have a bye")
    for p, count in seen.items():
        if count > 1:
            reasons.append(f"{p} appears {count} times")
        if p in state.withdrawn:
            reasons.append(f"{p} has withdrawn")
        elif p not in registered and not _HOUSE_SEAT.fullmatch(p):
            reasons.append(f"{p} is not registered")
    missing = [p for p in state.active if p not in seen]
    if missing:
        reasons.append("not seated and without a bye: " + ", ".join(missing))
    if reasons:
        raise BadPairing("; ".join(reasons))
    return Round(round_no, tuple(built), tuple(byes))


def is_last_round(state: TournamentState) -> bool:
    return len(state.rounds) >= (state.settings.rounds or 0)


def bye_points_text(value: Fraction | str) -> str:
    return value if isinstance(value, str) else str(value)
