"""The value of each legal card of an open-hand deal: exact search over the rules core.

Given a `DealState` with every hand known, `card_values` gives, for each legal card of the seat
to move (the *root* seat), that seat's deal points at the end of the deal (the scale of
`scores(st)[seat]`: trump deals +50 a trick, penalty deals the negative points taken) when the
rest of the deal is played by the model:

* ``paranoid``: the root seat maximises its own result and the other three minimise it, as one
  coalition. A two-sided game, so alpha-beta applies; the value is what the root seat can
  guarantee whatever the others do (a lower bound on any other model's value for the root).
* ``maxn``: every seat maximises its own result (maxⁿ). Ties are broken against the root seat
  (then by the lower card), so the answer is deterministic. No alpha-beta: only the
  transposition table and equivalent cards cut it down, so it is affordable in small endings.

Every move goes through the domain's own `legal_mask` and `play`, so every rule option (R-DROP,
R-DISCARD, R-AKQ, R-EARLYEND, R-KING, ...) is the engine's, not a copy. A King is scored by
`scores` like any deal end (its weight in the game is the caller's business).

Search cost is cut by:
* a transposition table at trick boundaries, keyed by what decides the rest of the deal (the
  hands, the leader, whether the lead bar is broken, the R-AKQ debt and, when R-KING can end
  the deal, the tricks won); it stores bounds on the points still to come, so the same
  position reached through different earlier tricks is searched once;
* equivalent cards (`card_groups`): cards of one suit in the mover's hand with no card of
  another hand, or of the trick in progress, ranked between them play alike, so one of them
  is searched; a penalty card and a non-penalty card (QH and JH in no_queens) or an R-AKQ card
  and another never count as equivalent;
* static bounds on the points still to come (no more tricks than remain, no more penalty
  cards than are out).

With `node_budget` the search is iterative deepening by tricks: the first pass plays out the
trick in progress and estimates each position at the next trick boundary with `estimate`, each
later pass goes one trick deeper; when the budget (positions visited, over all passes) runs
out, the last completed pass gives the values. If no pass completes, each card is valued by
the estimate straight after it. Nothing here reads a clock, so the result depends only on the
inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from domain.cards import cards_of
from domain.contracts import CONTRACT_INFO, LAST_TWO_PENALTY, Contract
from domain.deal import DealState, hand_of, legal_mask, play, rollout, scores

MODELS: tuple[str, ...] = ("paranoid", "maxn")

# Estimates the four seats' final deal points from a position (used at a search horizon).
Estimate = Callable[[DealState], Sequence[float]]


class UnknownModel(ValueError):
    """A search model that is not one of MODELS."""


class _OutOfBudget(Exception):
    """Raised inside the search when the node budget is spent."""


def plain_estimate(st: DealState) -> tuple[int, int, int, int]:
    """The final scores when every seat plays its highest legal card in a trump deal and its
    lowest in a penalty deal: crude, cheap and deterministic (strategies pass a better one)."""
    trump = st.setup.trump >= 0

    def pick(_seat: int, legal: int) -> int:
        if trump:
            return legal.bit_length() - 1
        return (legal & -legal).bit_length() - 1

    return scores(rollout(st, pick))


def card_groups(st: DealState) -> tuple[int, ...]:
    """The legal cards of the seat to move in groups of equivalent cards (masks), low first.

    Two cards of a suit are equivalent when every card ranked between them has been played in
    a completed trick or is in the mover's own hand (so no other hand and no card of the trick
    in progress separates them), and they, and the mover's cards between them, are all penalty
    cards or all not, and all R-AKQ cards or all not. Equivalent cards lead to the same result.
    """
    legal = legal_mask(st)
    if not legal:
        return ()
    setup = st.setup
    pen = CONTRACT_INFO[setup.contract].penalty_cards
    akq = setup.akq
    hand = hand_of(st.hands, st.to_move)
    gone = st.played | hand
    groups: list[int] = []
    group = 0
    prev = -1
    m = legal
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if prev >= 0 and prev // 13 == c // 13:
            between = low - (2 << prev)
            span = between & hand | low | (1 << prev)
            if (
                not between & ~gone
                and (not span & pen or span & pen == span)
                and (not span & akq or span & akq == span)
            ):
                group |= low
                prev = c
                continue
        if group:
            groups.append(group)
        group = low
        prev = c
    groups.append(group)
    return tuple(groups)


class Solution(NamedTuple):
    """What a search found: per legal card the root seat's final points, whether they are exact
    (no estimate was used), and how many positions were visited. Under maxⁿ, `outcomes` gives
    per legal card all four seats' final points (the root's is its value): a caller scoring
    the deal by placement needs to know who takes the rest, not only how much. Paranoid has no
    such line of play for the others (they only minimise the root), so its `outcomes` is empty.
    """

    values: dict[int, int | float]
    exact: bool
    nodes: int
    outcomes: dict[int, tuple[float, ...]]


def solve(
    st: DealState,
    *,
    model: str = "paranoid",
    node_budget: int | None = None,
    estimate: Estimate | None = None,
    transpositions: bool = True,
    equivalences: bool = True,
    deepen: bool = True,
) -> Solution:
    """`card_values` with how it was found. `transpositions=False` and `equivalences=False`
    turn the transposition table (with its static bounds) and the equivalent-card groups off:
    the plain search the benchmark compares with. `deepen=False` makes a budget a plain cap on
    one exact pass (no iterative deepening): out of budget, the values are the estimate after
    each card, with exact False."""
    if model not in MODELS:
        raise UnknownModel(f"unknown model {model!r} (one of {', '.join(MODELS)})")
    if node_budget is not None and node_budget < 0:
        raise ValueError("node_budget must be at least 0")
    groups = card_groups(st) if equivalences else _singletons(st)
    if not groups:
        return Solution({}, True, 0, {})
    reps = [(g & -g).bit_length() - 1 for g in groups]
    search = _Search(st, model, estimate or plain_estimate, transpositions, equivalences)
    by_rep, exact = search.solve(st, reps, node_budget, deepen)
    root = st.to_move
    values: dict[int, int | float] = {}
    outcomes: dict[int, tuple[float, ...]] = {}
    for rep, g in zip(reps, groups, strict=True):
        v = by_rep[rep][root] if search.maxn else by_rep[rep][0]
        for c in cards_of(g):
            values[c] = int(v) if float(v).is_integer() else v
            if search.maxn:
                outcomes[c] = by_rep[rep]
    return Solution(values, exact, search.nodes, outcomes)


def card_values(
    st: DealState,
    *,
    model: str = "paranoid",
    node_budget: int | None = None,
    estimate: Estimate | None = None,
) -> dict[int, int | float]:
    """Each legal card of the seat to move -> that seat's deal points at the end of the deal
    (same scale as scores(st)[seat]) under best play by the model.

    Exact (ints) without a budget or when the budget suffices; otherwise the values of the
    deepest completed pass, from `estimate` at its horizon (default `plain_estimate`).
    An empty dict once the deal is over.
    """
    return solve(st, model=model, node_budget=node_budget, estimate=estimate).values


def _singletons(st: DealState) -> tuple[int, ...]:
    """Each legal card in a group of its own (no equivalences)."""
    return tuple(1 << c for c in cards_of(legal_mask(st)))


def best_cards(values: Mapping[int, float]) -> tuple[int, ...]:
    """The cards of highest value, lowest card first (empty only for empty values)."""
    if not values:
        return ()
    top = max(values.values())
    return tuple(sorted(c for c, v in values.items() if v == top))


def _future_bounds(st: DealState, seat: int) -> tuple[int, int]:
    """Bounds on the points `seat` can still add from a trick boundary to the end."""
    setup = st.setup
    info = CONTRACT_INFO[setup.contract]
    left = 13 - len(st.winners)
    if setup.contract is Contract.LAST_TWO:
        return LAST_TWO_PENALTY * min(2, left), 0
    if info.per_trick > 0:
        return 0, info.per_trick * left
    if info.per_trick < 0:
        return info.per_trick * left, 0
    out = info.penalty_cards & (st.hands[0] | st.hands[1] | st.hands[2] | st.hands[3])
    return info.per_card * out.bit_count(), 0


class _Search:
    """One search from a root position: its model, node count and transposition table."""

    def __init__(
        self,
        root: DealState,
        model: str,
        estimate: Estimate,
        transpositions: bool = True,
        equivalences: bool = True,
    ) -> None:
        self.root = root.to_move
        self.use_tt = transpositions
        self.use_groups = equivalences
        self.maxn = model == "maxn"
        self.estimate = estimate
        self.king = root.setup.king_tricks > 0
        self.bar = root.setup.lead_bar
        self.nodes = 0
        self.limit = -1
        self.horizon = 13
        self.leaves = 0
        self.tt: dict[tuple[object, ...], tuple[float, float, int]] = {}
        self.tt_maxn: dict[tuple[object, ...], tuple[tuple[float, ...], int]] = {}
        self.hints: dict[tuple[object, ...], int] = {}

    def solve(
        self, st: DealState, reps: list[int], budget: int | None, deepen: bool = True
    ) -> tuple[dict[int, tuple[float, ...]], bool]:
        """Per root card its outcome (maxⁿ: the four seats' final points; paranoid: the root
        seat's alone, as a 1-tuple), and whether they are exact."""
        if budget is None:
            return self._pass(st, reps), True
        self.limit = budget
        best: dict[int, tuple[float, ...]] = {}
        exact = False
        first = len(st.winners) + 1 if deepen else 13
        for horizon in range(first, 14):
            self.horizon = horizon
            self.leaves = 0
            self.tt.clear()
            self.tt_maxn.clear()
            try:
                best = self._pass(st, reps)
            except _OutOfBudget:
                break
            exact = not self.leaves  # no position was estimated
            if exact:
                break
        if not best:
            for c in reps:  # not even one pass: the estimate straight after each card
                child = play(st, c)
                end = tuple(
                    float(x) for x in (scores(child) if child.over else self.estimate(child))
                )
                best[c] = end if self.maxn else (end[self.root],)
        return best, exact

    def _pass(self, st: DealState, reps: list[int]) -> dict[int, tuple[float, ...]]:
        out: dict[int, tuple[float, ...]] = {}
        for c in reps:
            child = play(st, c)
            out[c] = self._maxn(child) if self.maxn else (self._ab(child, -math.inf, math.inf),)
        return out

    def _key(self, st: DealState) -> tuple[object, ...]:
        return (
            st.hands,
            st.leader,
            bool(st.played & self.bar),
            st.akq_seat,
            st.akq_owed,
            st.tricks_won if self.king else None,
        )

    def _count(self) -> None:
        self.nodes += 1
        if self.nodes > self.limit >= 0:
            raise _OutOfBudget

    def _moves(self, st: DealState, hint: int) -> list[int]:
        """One card of each equivalent group, the transposition table's best card first."""
        if self.use_groups:
            reps = [(g & -g).bit_length() - 1 for g in card_groups(st)]
        else:
            reps = list(cards_of(legal_mask(st)))
        if hint >= 0 and hint in reps:
            reps.remove(hint)
            reps.insert(0, hint)
        return reps

    def _ab(self, st: DealState, alpha: float, beta: float) -> float:
        """Paranoid alpha-beta: the root seat's final points, fail-soft within (alpha, beta)."""
        if st.over:
            return scores(st)[self.root]
        self._count()
        at_boundary = not st.trick
        hint = -1
        base = 0
        key: tuple[object, ...] = ()
        lo = hi = 0.0
        if at_boundary and len(st.winners) >= self.horizon:
            self.leaves += 1
            return self.estimate(st)[self.root]
        if at_boundary and self.use_tt:
            base = scores(st)[self.root]
            key = self._key(st)
            low, high = _future_bounds(st, self.root)
            lo, hi = float(low), float(high)
            entry = self.tt.get(key)
            if entry is not None:
                lo, hi, hint = max(lo, entry[0]), min(hi, entry[1]), entry[2]
            if lo >= hi or base + lo >= beta:
                return base + lo
            if base + hi <= alpha:
                return base + hi
            alpha = max(alpha, base + lo)
            beta = min(beta, base + hi)
        if hint < 0 and at_boundary and self.use_tt:
            hint = self.hints.get(key, -1)
        a0, b0 = alpha, beta
        maximise = st.to_move == self.root
        best = -math.inf if maximise else math.inf
        best_card = -1
        for c in self._moves(st, hint):
            v = self._ab(play(st, c), alpha, beta)
            if maximise:
                if v > best:
                    best, best_card = v, c
                    if v > alpha:
                        alpha = v
            elif v < best:
                best, best_card = v, c
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        if at_boundary and self.use_tt:
            f = best - base
            if best <= a0:
                hi = min(hi, f)
            elif best >= b0:
                lo = max(lo, f)
            else:
                lo = hi = f
            self.tt[key] = (lo, hi, best_card)
            self.hints[key] = best_card
        return best

    def _maxn(self, st: DealState) -> tuple[float, ...]:
        """maxⁿ: the four seats' final points when each maximises its own (ties against the
        root seat, then the lower card)."""
        if st.over:
            return tuple(float(x) for x in scores(st))
        self._count()
        at_boundary = not st.trick
        key: tuple[object, ...] = ()
        base: tuple[int, ...] = ()
        hint = -1
        if at_boundary and len(st.winners) >= self.horizon:
            self.leaves += 1
            return tuple(float(x) for x in self.estimate(st))
        if at_boundary and self.use_tt:
            key = self._key(st)
            base = scores(st)
            entry = self.tt_maxn.get(key)
            if entry is not None:
                return tuple(b + f for b, f in zip(base, entry[0], strict=True))
            hint = self.hints.get(key, -1)
        mover, root = st.to_move, self.root
        best: tuple[float, ...] = ()
        best_card = -1
        for c in sorted(self._moves(st, -1), key=lambda x: x != hint):
            v = self._maxn(play(st, c))
            if (
                not best
                or v[mover] > best[mover]
                or (v[mover] == best[mover] and v[root] < best[root])
                or (v[mover] == best[mover] and v[root] == best[root] and c < best_card)
            ):
                best, best_card = v, c
        if at_boundary and self.use_tt:
            self.tt_maxn[key] = (tuple(v - b for v, b in zip(best, base, strict=True)), best_card)
            self.hints[key] = best_card
        return best


__all__ = [
    "MODELS",
    "Estimate",
    "Solution",
    "UnknownModel",
    "best_cards",
    "card_groups",
    "card_values",
    "plain_estimate",
    "solve",
]
