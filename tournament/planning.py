"""What a tournament does next, decided from its events alone (pure).

The next round's pairing, the standings and the seating all follow from the tournament's own
stream, so anyone holding it can recompute and check them.
"""

from __future__ import annotations

from fractions import Fraction

from tournament.events import TournamentState
from tournament.model import Round
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
    if s.format == "swiss":
        return pair_swiss(swiss_input(state))
    since = state.field_changed_after
    total = s.rounds or 0
    plan = round_robin(state.active, s.seed, total - since, s.fill, state.rounds[:since])
    return plan.rounds[number - 1 - since]


def is_last_round(state: TournamentState) -> bool:
    return len(state.rounds) >= (state.settings.rounds or 0)


def bye_points_text(value: Fraction | str) -> str:
    return value if isinstance(value, str) else str(value)
