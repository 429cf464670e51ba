"""The strong strategy: perfect-information Monte Carlo over sampled deals.

For a card decision it deals the unseen cards many times, consistently with everything the
seat knows (knowledge.py, sampling.py), and in each sampled deal plays every distinct legal
card and then the rest of the deal with the rollout policy on the bitmask DealState. All
candidate cards see the same sampled deals, so their difference is measured, not their luck.
Each end of deal is scored in expected ladder points for the game (objective.py: it knows
the totals, the rights left and how many deals remain), and the card with the best mean is
played.

A contract is chosen the same way: each legal contract is played out on sampled deals and its
mean result in expected ladder points, blended with the fitted hand model's estimate
(bidding.py, objective.contract_outlook) as a prior worth PRIOR_SAMPLES samples, is compared
with what an average hand would get from that contract (the heuristic's rule, sampled).

Search stops at a time budget per decision (read with time.perf_counter: the strategy may read
the clock, the domain may not) or, for exact reproducibility, after a fixed number of samples.
The budget is a cap: no sample starts that the slowest so far says would overrun it, once one
is done. So with a budget the play depends on the machine's speed and load; with `rollouts`
it depends only on the seed.
"""

from __future__ import annotations

import math
import random
import time

from domain.cards import FULL_DECK
from domain.contracts import CONTRACT_INFO
from domain.deal import new_deal, play, scores
from domain.game import Phase
from domain.view import Action, SeatView
from tournament.strategies.base import register
from tournament.strategies.bidding import model_key, worth
from tournament.strategies.bidding_model import BASELINES
from tournament.strategies.knowledge import Knowledge, knowledge_of
from tournament.strategies.objective import (
    after_declaring,
    contract_outlook,
    expected_ladder,
    game_context,
)
from tournament.strategies.rollout import deal_value, rollout
from tournament.strategies.sampling import sample_hands

DEFAULT_BUDGET_MS = 200.0
# Stop early once the best card leads the runner-up by this many standard errors, from
# 2 * MIN_SAMPLES paired samples on (fewer give no usable estimate of the spread).
MIN_SAMPLES = 4
CLEAR_LEAD_Z = 3.0
TIE_BREAK = 1e-4
# The fitted hand model counts as this many rollout samples in a contract's estimate.
PRIOR_SAMPLES = 5.0


def distinct_cards(k: Knowledge, legal: int) -> list[int]:
    """One card of each group of equivalent legal cards, lowest first.

    Two cards of a suit are equivalent when no card still in play lies between them (one in
    another hand, or one on the trick in progress: 7S and 9S differ over an 8S led) and both
    are, or both are not, penalty cards: whichever is played, the deal goes the same way.
    """
    pen = CONTRACT_INFO[k.state.contract].penalty_cards
    out = k.out | k.state.trick_bits
    reps: list[int] = []
    prev = -1
    m = legal
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if (
            prev >= 0
            and prev // 13 == c // 13
            and not out & (low - (2 << prev))
            and bool(pen >> prev & 1) == bool(pen & low)
        ):
            prev = c
            continue
        reps.append(c)
        prev = c
    return reps


@register("strong", options=("budget_ms", "rollouts", "linear", "early_stop"))
class StrongStrategy:
    """Sampling plus rollouts within `budget_ms` per decision, or exactly `rollouts` samples."""

    name = "strong"

    def __init__(
        self,
        seed: int,
        budget_ms: float = DEFAULT_BUDGET_MS,
        rollouts: float = 0,
        linear: float = 0,
        early_stop: float = 1,
    ) -> None:
        self.rng = random.Random(seed)
        self.budget = budget_ms / 1000.0
        self.samples = int(rollouts)
        self.linear = bool(linear)
        self.early_stop = bool(early_stop)

    def __call__(self, view: SeatView) -> Action:
        if len(view.legal) == 1:
            return view.legal[0]
        if view.phase is Phase.DECLARING:
            return self.declare(view)
        return self.play(view)

    def _out_of_time(self, clock: _Clock, done: int) -> bool:
        """Whether to stop sampling: the fixed count reached, or one more sample as slow as
        the slowest so far would overrun the time budget (a decision needs one sample)."""
        if self.samples:
            return done >= self.samples
        spent, slowest = clock.tick()
        return spent + slowest >= self.budget

    def declare(self, view: SeatView) -> Action:
        clock = _Clock()
        redeal = [a for a in view.legal if a.kind == "redeal"]
        if redeal:
            # Offered only for a hand with no card above ten that must declare trump.
            return redeal[0]
        seat, hand = view.seat, view.hand
        contracts = [a.contract for a in view.legal if a.contract is not None]
        actions = [a for a in view.legal if a.contract is not None]
        ctx = game_context(view)
        afters = [after_declaring(ctx, seat, c) for c in contracts]
        totals = [0.0] * len(actions)
        ladder = [0.0] * len(actions)
        done = 0
        counts = (13, 13, 13, 13)
        out = FULL_DECK & ~hand
        possible = (out, out, out, out)
        while True:
            hands = sample_hands(seat, hand, out, possible, counts, self.rng)
            for i, c in enumerate(contracts):
                end = rollout(new_deal(view.rules, c, seat, hands))
                totals[i] += deal_value(end, seat)
                if not self.linear:
                    ladder[i] += expected_ladder(afters[i], seat, scores(end), end.king)
            done += 1
            if self._out_of_time(clock, done):
                break

        def score(i: int) -> float:
            # Against the contract's usual result, as in heuristic: the right is spent anyway.
            c = contracts[i]
            model, usual = worth(hand, c), BASELINES[model_key(c)]
            points = (PRIOR_SAMPLES * model + totals[i]) / (PRIOR_SAMPLES + done) - usual
            if self.linear:
                return points
            prior = contract_outlook(ctx, seat, c, model)
            mean = (PRIOR_SAMPLES * prior + ladder[i]) / (PRIOR_SAMPLES + done)
            return mean - contract_outlook(ctx, seat, c, usual) + TIE_BREAK * points

        return actions[max(range(len(actions)), key=score)]

    def play(self, view: SeatView) -> Action:
        clock = _Clock()
        legal = 0
        by_card: dict[int, Action] = {}
        for action in view.legal:
            legal |= 1 << action.card
            by_card[action.card] = action
        k = knowledge_of(view)
        cards = distinct_cards(k, legal)
        if len(cards) == 1:
            return by_card[cards[0]]
        seat = k.seat
        ctx = game_context(view)
        values: list[list[float]] = [[] for _ in cards]
        totals = [0.0] * len(cards)
        done = 0
        base = k.state
        while True:
            hands = sample_hands(seat, view.hand, k.out, k.possible, k.counts, self.rng)
            world = base._replace(hands=hands)
            for i, c in enumerate(cards):
                end = rollout(play(world, c))
                v = deal_value(end, seat)
                if not self.linear:
                    # Ladder points, with deal points as a tie-break where the game is decided.
                    v = expected_ladder(ctx, seat, scores(end), end.king) + TIE_BREAK * v
                values[i].append(v)
                totals[i] += v
            done += 1
            if self._out_of_time(clock, done):
                break
            if self.early_stop and done >= 2 * MIN_SAMPLES and _clear_lead(values, totals):
                break
        best = max(range(len(cards)), key=lambda i: totals[i])
        return by_card[cards[best]]


class _Clock:
    """Time spent on a decision, and the slowest sample so far (time.perf_counter)."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.slowest = 0.0

    def spent(self) -> float:
        return time.perf_counter() - self.start

    def tick(self) -> tuple[float, float]:
        now = time.perf_counter()
        self.slowest = max(self.slowest, now - self.last)
        self.last = now
        return now - self.start, self.slowest


def _clear_lead(values: list[list[float]], totals: list[float]) -> bool:
    """Whether the best card's lead over the runner-up is beyond sampling noise."""
    order = sorted(range(len(totals)), key=lambda i: totals[i], reverse=True)
    mean, se = paired_gap(values[order[0]], values[order[1]])
    if se == 0.0:
        return True  # the same margin in every sample (often none: the choice does not matter)
    return mean > CLEAR_LEAD_Z * se


def paired_gap(a: list[float], b: list[float]) -> tuple[float, float]:
    """The mean of a - b over samples both saw (two or more), and its standard error."""
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean, math.sqrt(var / n)
