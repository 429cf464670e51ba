"""`seat_view` (built positionally, its tricks converted once per trick, its plays from a memo
by legal mask) gives the view a plain keyword build of every field gives, for every seat and
the public, after every event."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.cards import cards_of
from domain.deal import legal_mask
from domain.deal import scores as deal_scores
from domain.game import CompletedDeal, GameState, Phase, replay
from domain.playout import play_game
from domain.rules import Rules
from domain.view import Action, PlayedTrick, SeatView, legal_actions, seat_view

PLAYERS = ("ada", "bora", "cem", "deniz")


def plain_legal(state: GameState, seat: int) -> tuple[Action, ...]:
    """The legal actions made afresh (seat_view's come from a memo of each mask's plays)."""
    if state.phase is Phase.PLAYING and state.deal is not None and seat == state.to_move:
        return tuple(Action("play", card=c) for c in cards_of(legal_mask(state.deal)))
    return legal_actions(state, seat)


def plain_view(state: GameState, seat: int) -> SeatView:
    st = state.deal
    tricks = tuple(PlayedTrick(t.leader, t.cards, t.winner) for t in state.tricks)
    if state.trick_cards and len(state.trick_cards) < 4 and st is not None:
        tricks += (PlayedTrick(st.leader, state.trick_cards, None),)
    hand = 0
    if 0 <= seat < 4 and state.phase in (Phase.DECLARING, Phase.PLAYING):
        hand = st.hands[seat] if st is not None else state.hands[seat]
    deal_no = state.deal_no
    if state.phase is Phase.OVER:
        deal_no = [d.deal for d in state.completed if isinstance(d, CompletedDeal)][-1]
    result = state.result
    return SeatView(
        game_id=state.game_id,
        seat=seat,
        players=tuple(occ[-1] for occ in state.occupants) or state.players,
        rules=state.rules,
        phase=state.phase,
        deal_no=deal_no,
        attempt=state.attempt,
        declarer=state.declarer,
        hand=hand,
        contract=st.contract if st is not None else None,
        tricks=tricks,
        tricks_won=st.tricks_won if st is not None else (0, 0, 0, 0),
        deal_scores=deal_scores(st) if st is not None else (0, 0, 0, 0),
        totals=state.totals,
        trump_left=state.trump_left,
        penalty_left=state.penalty_left,
        uses=state.uses,
        history=state.completed,
        to_move=state.to_move,
        legal=plain_legal(state, seat) if seat >= 0 else (),
        strikes=state.strikes,
        winners=result.winners if result else None,
        ladder_points=result.ladder_points if result else None,
        king=state.king,
        commitment=state.commitment,
        seed=state.seed,
    )


@settings(max_examples=10, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), pick=st.integers(0, 2**32))
def test_seat_view_is_the_plain_view(seed: bytes, pick: int) -> None:
    rng = random.Random(pick)
    policies = [lambda view: rng.choice(view.legal)] * 4
    _, events = play_game("v", PLAYERS, seed, policies, rules=Rules(mode="short12"))
    state = GameState()
    for event in events:
        state = replay([event], state)
        for seat in (-1, 0, 1, 2, 3):
            view = seat_view(state, seat)
            assert view == plain_view(state, seat)
            assert type(view) is SeatView
