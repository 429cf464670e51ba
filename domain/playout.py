"""Play a whole game with given policies: the loop that tests, bots, matches and demos share.

Pure: the seed is an input and each policy is a function of its seat's view, so the same seed
and policies give the same events on every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from domain.commands import CreateGame, RevealSeed, StartDeal
from domain.events import Event
from domain.game import GameState, Phase, run
from domain.rules import Rules
from domain.shuffle import ALGORITHM, commitment, deal_hands
from domain.view import Action, SeatView, seat_view
from domain.violations import IllegalAction, Violation

Policy = Callable[[SeatView], Action]
# The phases this loop tests at every step, as constants (an enum's class attribute costs more
# to look up).
_AWAITING_DEAL: Final = Phase.AWAITING_DEAL
_OVER: Final = Phase.OVER


class PolicyError(ValueError):
    """A policy returned an action the rules refuse (a bug in the policy, not in the game)."""


def new_game(
    game_id: str,
    players: Sequence[str],
    server_seed: bytes,
    rules: Rules | None = None,
    client_seed: str = "",
    shuffle_id: str = "",
) -> tuple[GameState, list[Event]]:
    """A created game whose shuffle is committed to `server_seed`, and its events."""
    create = CreateGame(
        game_id=game_id,
        players=tuple(players),
        rules=rules or Rules(),
        commitment=commitment(server_seed),
        client_seed=client_seed,
        shuffle=ALGORITHM,
        shuffle_id=shuffle_id,
    )
    state, events = run(GameState(), create)
    assert not isinstance(events, Violation)
    return state, events


def deal_if_due(state: GameState, server_seed: bytes) -> tuple[GameState, list[Event]]:
    """Deal the next hands with king-shuffle/1 when the game awaits a deal; else nothing."""
    if state.phase is not _AWAITING_DEAL:
        return state, []
    hands = deal_hands(
        server_seed, state.shuffle_id, state.deal_no, state.attempt, state.client_seed
    )
    state, events = run(state, StartDeal(hands))
    assert not isinstance(events, Violation)
    return state, events


def advance(
    state: GameState, server_seed: bytes, policies: Sequence[Policy]
) -> tuple[GameState, list[Event]]:
    """One step: deal if due, else ask the seat to move for its action and apply it."""
    if state.phase is _AWAITING_DEAL:
        return deal_if_due(state, server_seed)
    seat = state.to_move
    assert seat is not None, "advance() on a game that waits for nobody"
    action = policies[seat](seat_view(state, seat))
    new_state, out = run(state, action.command(seat))
    if isinstance(out, Violation):
        raise PolicyError(f"seat {seat} chose {action.to_dict()}") from IllegalAction(out)
    return new_state, out


def play_to_end(
    state: GameState, server_seed: bytes, policies: Sequence[Policy], reveal: bool = True
) -> tuple[GameState, list[Event]]:
    """Play `state` on to the end of the game, and reveal the seed when `reveal`: the new state
    and the events that took it there."""
    events: list[Event] = []
    while state.phase is not _OVER:
        state, new = advance(state, server_seed, policies)
        events += new
    if reveal:
        state, out = run(state, RevealSeed(server_seed.hex()))
        assert not isinstance(out, Violation)
        events += out
    return state, events


def play_game(
    game_id: str,
    players: Sequence[str],
    server_seed: bytes,
    policies: Sequence[Policy],
    rules: Rules | None = None,
    client_seed: str = "",
    reveal: bool = True,
) -> tuple[GameState, list[Event]]:
    """A whole game from creation to the end (and the seed revealed), with every event."""
    state, created = new_game(game_id, players, server_seed, rules, client_seed)
    state, played = play_to_end(state, server_seed, policies, reveal)
    return state, created + played
