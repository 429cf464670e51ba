"""The fast event path (`domain.game.apply`) agrees with a plain reference fold
(reference_fold.py) on random games under random rule options, event by event: the same
state after every event, the same cards legal at every turn, and the same answer to a card
that may not be played. And `run`, which works a legal card's events and state out once,
agrees with `decide` then `apply` one event at a time, at every command."""

from __future__ import annotations

import random
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_fold import Reference, Refused

from domain.cards import CARD_NAMES, cards_of
from domain.commands import Play
from domain.deal import legal_mask
from domain.deal import scores as deal_scores
from domain.events import CardPlayed, Event
from domain.game import (
    CompletedDeal,
    GameState,
    InconsistentEvent,
    Phase,
    apply,
    decide,
    replay,
    run,
)
from domain.playout import deal_if_due, new_game, play_game
from domain.rules import Rules
from domain.view import SeatView, seat_view
from domain.violations import Violation
from tests.random_rules import random_rules

PLAYERS = ("ada", "bora", "cem", "deniz")


def few_random_games(test: Callable[[Rules, bytes, int], None]) -> Callable[[], None]:
    """Fifteen random games' rule options, seed and policy seed (king_tricks off, 11 or 8)."""
    games = given(
        rules=random_rules(king_tricks=[0, 11, 8]),
        seed=st.binary(min_size=32, max_size=32),
        rng=st.integers(0, 2**32 - 1),
    )
    few = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    return few(games(test))


def agree(fast: GameState, ref: Reference) -> None:
    """Every fact the reference keeps, read off the fast state."""
    assert fast.phase.value == {"awaiting": "awaiting_deal"}.get(ref.phase, ref.phase)
    assert fast.version == ref.version
    assert (fast.deal_no, fast.attempt, fast.declarer) == (ref.deal_no, ref.attempt, ref.declarer)
    if len(ref.trick) < 4:  # (with trick_taken due, the deal may be over before the game knows)
        assert fast.to_move == ref.to_move
    assert list(fast.trump_left) == ref.trump_left and list(fast.penalty_left) == ref.penalty_left
    assert list(fast.uses) == list(ref.uses.values())
    assert list(fast.totals) == ref.totals and fast.king == ref.king
    assert list(fast.strikes) == ref.strikes and fast.seed == ref.seed
    deal = fast.deal
    if fast.phase is Phase.PLAYING:
        assert deal is not None and deal.contract is ref.contract
        assert [set(cards_of(h)) for h in deal.hands] == ref.hands
        assert list(fast.trick_cards) == ref.trick
        assert [(t.leader, t.cards, t.winner) for t in fast.tricks] == ref.tricks
        if len(ref.trick) < 4:  # (a full trick is the deal's already, the game's at trick_taken)
            assert list(deal.tricks_won) == ref.won and list(deal_scores(deal)) == ref.scores()
            assert deal.over == ref.deal_over
            assert set(cards_of(legal_mask(deal))) == ref.legal()
    elif fast.phase is Phase.DECLARING:
        assert fast.hands == ref.dealt


def refuses_alike(fast: GameState, ref: Reference, event: Event) -> None:
    """An event both folds must refuse, or both accept; neither changes the fast state."""
    try:
        apply(fast, event)
        fast_ok = True
    except InconsistentEvent:
        fast_ok = False
    probe = Reference(**{k: getattr(ref, k) for k in ref.__dataclass_fields__})
    probe.hands = [set(h) for h in ref.hands]
    probe.trick = list(ref.trick)
    try:
        probe.fold(event)
        ref_ok = True
    except Refused:
        ref_ok = False
    assert fast_ok == ref_ok, event


@few_random_games
def test_the_fast_path_and_the_reference_fold_agree_event_by_event(
    rules: Rules, seed: bytes, rng: int
) -> None:
    pick = random.Random(rng)

    def policy(view: SeatView):  # type: ignore[no-untyped-def]
        return pick.choice(view.legal)

    _, events = play_game("ref", PLAYERS, seed, [policy] * 4, rules=rules)
    fast, ref = GameState(), Reference()
    for event in events:
        if isinstance(event, CardPlayed) and pick.random() < 0.2:
            # Some other card, from the seat to move or another: legal or not, both agree.
            stray = CardPlayed(event.deal, pick.randrange(4), pick.randrange(52))
            refuses_alike(fast, ref, stray)
        fast = apply(fast, event)
        ref.fold(event)
        agree(fast, ref)
    assert fast.phase is Phase.OVER
    assert sum(1 for d in fast.completed if isinstance(d, CompletedDeal) and not d.void) <= 20


def decided_then_applied(state: GameState, command: Play) -> tuple[GameState, object]:
    """What `run` must give: `decide`, then each event through `apply` (the reference)."""
    decided = decide(state, command)
    if isinstance(decided, Violation):
        return state, decided
    return replay(decided, state), decided


@few_random_games
def test_run_gives_what_decide_then_apply_give_at_every_command(
    rules: Rules, seed: bytes, rng: int
) -> None:
    pick = random.Random(rng)
    state, _ = new_game("run", PLAYERS, seed, rules)
    while state.phase is not Phase.OVER:
        if state.phase is Phase.AWAITING_DEAL:
            state, _ = deal_if_due(state, seed)
            continue
        seat = state.to_move
        assert seat is not None
        if state.phase is Phase.PLAYING and pick.random() < 0.3:
            # A card that may or may not be playable, by index or by name, from any seat, or
            # a seat that is no seat: `run` answers it as `decide` does and changes nothing.
            card = pick.randrange(52)
            seats: list[object] = [0, 1, 2, 3, seat, True, -1, "0"]
            cards: list[object] = [card, CARD_NAMES[card], card + 52, "XX"]
            stray = Play(pick.choice(seats), pick.choice(cards))  # type: ignore[arg-type]
            assert run(state, stray) == decided_then_applied(state, stray)
        command = pick.choice(seat_view(state, seat).legal).command(seat)
        expected = decided_then_applied(state, command)  # type: ignore[arg-type]
        got = run(state, command)
        assert got == expected
        state = got[0]
    assert state.result is not None
