"""Readable builders for the rule tests.

Hands are written as card names (``"AS KS 2H"``); a hand that ends in ``...`` is filled up to 13
cards with cards nobody else was given, deterministically, so a test names only the cards that
matter and keeps them visible. ``fill_without={seat: "SH"}`` keeps the filler from giving that
seat any card of those suits: the seat then holds exactly the spades and hearts shown (none if
none is shown). Use it whenever a test depends on what a seat holds, or lacks, in a suit.

Plays are written the same way, in play order; ``|`` between tricks is only for the reader.
Every play of a test's set-up is checked with ``check_card`` first, so a set-up that breaks a rule
fails loudly instead of building an impossible position.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain.cards import FULL_DECK, SUITS, card_name, cards_of, names_of, parse_card
from domain.commands import Command, CreateGame, Declare, Play, StartDeal
from domain.contracts import Contract
from domain.deal import DealState, check_card, legal_mask, new_deal, play
from domain.game import CompletedDeal, GameState, Phase, legal_contracts, run
from domain.rules import Rules
from domain.shuffle import deal_hands
from domain.view import Action, SeatView
from domain.violations import Violation

Hands = tuple[int, int, int, int]
PLAYERS = ("ada", "bora", "cem", "deniz")
GAME_ID = "test-game"
SEED = bytes(range(32))
FILL = "..."


# --- cards and hands ------------------------------------------------------------------------


def cards(text: str) -> list[int]:
    """The cards named in ``text`` in order (``|`` and ``...`` are ignored)."""
    return [parse_card(tok) for tok in text.split() if tok not in ("|", FILL)]


def names(m: int) -> str:
    """A mask as card names in canonical order, e.g. ``"QS 4S"`` -> ``"4S QS"``."""
    return " ".join(names_of(m))


def hands(*specs: str, fill_without: Mapping[int, str] | None = None) -> Hands:
    """Four hands (seat 0 to 3) from readable strings; see the module docstring."""
    if len(specs) != 4:
        raise ValueError("four hands, seat 0 to 3")
    without = fill_without or {}
    named = [cards(s) for s in specs]
    fill = [s.split()[-1:] == [FILL] for s in specs]
    seen = 0
    for seat, hand in enumerate(named):
        for c in hand:
            if seen >> c & 1:
                raise ValueError(f"{card_name(c)} is given twice")
            seen |= 1 << c
        if len(hand) > 13 or (len(hand) < 13 and not fill[seat]):
            raise ValueError(f"hand {seat} has {len(hand)} cards (end it with ... to fill it)")
    need = [13 - len(h) for h in named]
    if sum(need) != 52 - seen.bit_count():
        raise ValueError("the hands to fill do not take exactly the cards left")
    # Deal the unnamed cards round the table in canonical order (2S 3S ... AC): every filled
    # hand gets a spread of suits and ranks.
    free = list(cards_of(FULL_DECK & ~seen))
    ok = [[SUITS[c // 13] not in without.get(s, "") for s in range(4)] for c in range(52)]
    assigned = _assign(free, need, ok)
    if assigned is None:
        raise ValueError("cannot fill these hands with the suits left out")
    out = [sum(1 << c for c in hand) for hand in named]
    for c, seat in zip(free, assigned, strict=True):
        out[seat] |= 1 << c
    return out[0], out[1], out[2], out[3]


def _assign(free: list[int], need: list[int], ok: list[list[bool]]) -> list[int] | None:
    """A seat for each free card: round the table in turn, skipping a seat whenever giving it
    the card would leave the other cards impossible to place (Hall's condition on suits)."""
    need = list(need)
    left = [0, 0, 0, 0]  # free cards per suit not yet placed
    for c in free:
        left[c // 13] += 1
    takes = [[ok[s * 13][seat] for s in range(4)] for seat in range(4)]

    def placeable() -> bool:
        for subset in range(1, 16):
            seats = [seat for seat in range(4) if subset >> seat & 1]
            supply = sum(left[s] for s in range(4) if any(takes[seat][s] for seat in seats))
            if sum(need[seat] for seat in seats) > supply:
                return False
        return True

    if not placeable():
        return None
    out: list[int] = []
    for i, c in enumerate(free):
        left[c // 13] -= 1
        for k in range(4):
            seat = (i + k) % 4
            if need[seat] and ok[c][seat]:
                need[seat] -= 1
                if placeable():
                    out.append(seat)
                    break
                need[seat] += 1
        else:
            return None
    return out


# --- one deal -------------------------------------------------------------------------------


def deal(
    contract: str,
    hs: Hands,
    *,
    declarer: int = 0,
    plays: str = "",
    **options: Any,
) -> DealState:
    """A deal of ``contract`` on hands ``hs`` after the (legal) ``plays``."""
    st = new_deal(Rules(**options), Contract(contract), declarer, hs)
    return play_cards(st, plays)


def play_cards(st: DealState, plays: str) -> DealState:
    for c in cards(plays):
        why = check_card(st, c)
        if why is not None:
            raise AssertionError(
                f"set-up play {card_name(c)} by seat {st.to_move} refused: "
                f"{why.code} ({why.message})"
            )
        st = play(st, c)
    return st


def why(st: DealState, name: str) -> Violation | None:
    """Why the seat to move may not play ``name`` now (None: it may)."""
    return check_card(st, parse_card(name))


def legal(st: DealState) -> str:
    """The legal cards of the seat to move, as names in canonical order."""
    return names(legal_mask(st))


Pick = Callable[[int], int]


def lowest(m: int) -> int:
    """The lowest legal card (canonical order: spades first, low rank first)."""
    return cards_of(m)[0]


def play_lowest(st: DealState, n: int = 1) -> DealState:
    """Let the next ``n`` seats play their lowest legal card."""
    for _ in range(n):
        st = play(st, lowest(legal_mask(st)))
    return st


def finish_trick(st: DealState) -> DealState:
    """The seats still to play to this trick play their lowest legal cards."""
    return play_lowest(st, 4 - len(st.trick))


def finish(st: DealState, pick: Pick = lowest) -> DealState:
    """Play the deal to its end, each seat playing ``pick(legal mask)``."""
    while not st.over:
        st = play(st, pick(legal_mask(st)))
    return st


def trick_by_trick(st: DealState, pick: Pick = lowest) -> list[DealState]:
    """Every state right after a completed trick, up to the end of the deal."""
    out = []
    while not st.over:
        before = st.tricks
        st = play(st, pick(legal_mask(st)))
        if st.tricks != before:
            out.append(st)
    return out


def shuffled(deal_no: int, attempt: int = 0, game_id: str = GAME_ID) -> Hands:
    return deal_hands(SEED, game_id, deal_no, attempt, "")


# --- a whole game ---------------------------------------------------------------------------


def new_game(**options: Any) -> GameState:
    """A created game (no deal yet) with the given rule options."""
    state, out = run(GameState(), CreateGame(GAME_ID, PLAYERS, Rules(**options)))
    assert not isinstance(out, Violation)
    return state


def ok(state: GameState, command: Command) -> GameState:
    """Run a command that must be accepted."""
    new, out = run(state, command)
    if isinstance(out, Violation):
        raise AssertionError(f"{command} refused: {out.code} ({out.message})")
    return new


def refused(state: GameState, command: Command) -> Violation:
    """Run a command that must be refused; the state must not change."""
    new, out = run(state, command)
    assert isinstance(out, Violation), f"{command} was accepted: {out}"
    assert new is state
    return out


def any_card(hand: int) -> int:
    """The lowest card of a hand mask."""
    return (hand & -hand).bit_length() - 1


def first_legal(view: SeatView) -> Action:
    """A playout policy: the first legal action (penalty contracts before trumps)."""
    return view.legal[0]


def trumps_first(view: SeatView) -> Action:
    """A playout policy: declare a trump while one may, else the first legal action."""
    for action in view.legal:
        if action.contract is not None and action.contract.is_trump:
            return action
    return view.legal[0]


def play_deal_out(state: GameState, pick: Pick = lowest) -> GameState:
    """Play the current deal to its end, each seat playing ``pick(legal mask)``."""
    while state.phase is Phase.PLAYING and state.deal is not None and not state.deal.over:
        seat = state.deal.to_move
        state = ok(state, Play(seat, pick(legal_mask(state.deal))))
    return state


def start_deal(state: GameState, hs: Hands | None = None) -> GameState:
    """Deal ``hs`` (default: king-shuffle/1 hands of this deal and attempt)."""
    if hs is None:
        hs = shuffled(state.deal_no, state.attempt)
    return ok(state, StartDeal(hs))


def whole_deal(state: GameState, contract: str | None = None, hs: Hands | None = None) -> GameState:
    """Deal, declare ``contract`` (default: the first contract the declarer may declare), play."""
    state = start_deal(state, hs)
    chosen = contract if contract is not None else legal_contracts(state)[0].value
    state = ok(state, Declare(state.declarer, chosen))
    return play_deal_out(state)


def deals_until(state: GameState, deal_no: int) -> GameState:
    """Play whole deals (first legal contract, lowest cards) until deal ``deal_no`` is due."""
    while state.deal_no < deal_no:
        state = whole_deal(state)
    assert state.phase is Phase.AWAITING_DEAL
    return state


def declared_by(state: GameState) -> list[tuple[int, str]]:
    """(declarer, contract) of each completed deal."""
    return [(d.declarer, d.contract.value) for d in state.completed if isinstance(d, CompletedDeal)]
