"""The expert strategy: strong's sampling, weighted by inference, and exact endgames.

For a card decision it deals the unseen cards consistently with everything the seat knows
(knowledge.py, sampling.py), as strong does, and then:

* **Inference.** Each sampled deal is weighted by how likely the other seats' plays of this deal
  were, had that deal been the real one: the deal is replayed from its start with the sampled
  hands (each seat's current cards plus the cards it has played), and at every play of another
  seat that had a choice the rollout policy (the heuristic with every hand known) is asked what
  it would have played. A play the policy agrees with (the same card or one equivalent to it)
  counts 1, any other play MISS. So the policy is treated as a noisy model of the opponents:
  samples that explain their play get more say, none is ruled out (a wrong model must not
  exclude the real deal).
* **Exact endgames.** With `exact_tricks` tricks or fewer left, each sample is solved with the
  open-hand solver (domain/solver.py; maxⁿ, each seat playing for its own points, as the other
  bots do; with `maxn=0` paranoid, the seat's points when the others play against it), within
  EXACT_NODES positions (under a time budget, no more than the time left pays for at
  NODE_SECONDS a position); if that is not enough, the solver's deepest finished pass with
  rollouts at its horizon. Before that, each candidate card is played out with the rollout
  policy, as strong does (a 13-trick deal is far beyond an exact search in the time of a move).
* **Racing.** Strong plays every candidate card out on every sample. Here a card that falls
  clearly behind the leader (DROP_Z standard errors of the paired difference) is dropped, and
  the samples that follow are spent on the cards still in contention; the decision ends when
  one is left (strong's early stop, for the top two) or the time is up.

Cards are compared by their weighted mean in expected ladder points for the game
(objective.py, as strong): a rollout's four scores go in as they are, and so do the four
scores of a maxⁿ solve's line of play (placement depends on who takes the points, not only on
how many one takes oneself); a paranoid solve gives only the seat's own points, so the rest
of the deal's points are split evenly over the others. maxⁿ is the default because it
measured stronger: against strong, on the same 100 standard20 deals at 20 samples each,
+1.32 ± 1.29 ladder points a game against +0.25 ± 1.38 with paranoid (docs/STRATEGIES.md).

Contracts are chosen as strong chooses them (each contract played out on sampled deals, blended
with the fitted hand model). `evaluate_contracts` gives each contract's expected deal points
for the declaring seat on its own, for analysis.

Time: the same cap as strong (`budget_ms`, default 200, so under 250 ms a decision): no sample
starts that the slowest so far says would overrun it. `rollouts` fixes the sample count
instead, for reproducible play.
"""

from __future__ import annotations

from domain.cards import FULL_DECK, SUIT_MASKS
from domain.contracts import CONTRACT_INFO
from domain.deal import DealState, legal_mask, new_deal, play, scores
from domain.game import Phase
from domain.solver import Solution, card_groups, solve
from domain.view import Action, SeatView
from tournament.strategies.base import register
from tournament.strategies.cardplay import rollout_card
from tournament.strategies.knowledge import Knowledge, knowledge_of
from tournament.strategies.objective import GameContext, expected_ladder, game_context
from tournament.strategies.rollout import rollout
from tournament.strategies.sampling import sample_hands
from tournament.strategies.strong import (
    DEFAULT_BUDGET_MS,
    MIN_SAMPLES,
    TIE_BREAK,
    StrongStrategy,
    _Clock,
    paired_gap,
)

# Solve each sample exactly from this many tricks left (a 4-trick ending takes a few
# milliseconds with the solver's pruning, a 6-trick one up to a second).
EXACT_TRICKS = 4
# Positions the solver may visit per sample before it falls back to its deepest finished pass.
EXACT_NODES = 4000
# The slowest a position has cost in these solves (a pass whose horizon positions are each
# estimated by a rollout: 6 to 100 µs a position, measured on the 2-core machine). Under a
# time budget a sample may visit only as many positions as the time left pays for at this
# rate, so no single solve carries a decision past its budget (it once took 303 ms).
NODE_SECONDS = 100e-6
# The likelihood factor of a play the rollout policy would not have made.
MISS = 0.7
# Samples for evaluate_contracts when no fixed count is given (each plays every contract).
CONTRACT_SAMPLES = 32
# Racing: every RACE_EVERY samples (from 2 * MIN_SAMPLES on), a card whose deficit to the
# leader is beyond DROP_Z standard errors (paired over the samples both saw) is dropped, and
# the rest of the time goes to the cards still in contention.
RACE_EVERY = 2
DROP_Z = 2.5


def _rollout_scores(st: DealState) -> tuple[int, int, int, int]:
    """The solver's horizon estimate: the deal played out by the rollout policy."""
    return scores(rollout(st))


def play_likelihood(k: Knowledge, view: SeatView, hands: tuple[int, int, int, int]) -> float:
    """How likely the other seats' plays of this deal are under the rollout policy, had
    `hands` been the deal (1 per play it agrees with, MISS per play it does not)."""
    start = list(hands)
    order: list[int] = []
    for t in view.tricks:
        for i, c in enumerate(t.cards):
            start[(t.leader + i) & 3] |= 1 << c
            order.append(c)
    contract = k.state.contract
    st = new_deal(view.rules, contract, view.declarer, (start[0], start[1], start[2], start[3]))
    weight = 1.0
    for c in order:
        seat = st.to_move
        if seat != k.seat:
            legal = legal_mask(st)
            if legal & (legal - 1):
                guess = rollout_card(st, legal)
                if guess != c and not _alike(st, seat, guess, c):
                    weight *= MISS
        st = play(st, c)
    return weight


def _alike(st: DealState, seat: int, a: int, b: int) -> bool:
    """Whether two cards of a hand are equivalent here (same suit, nothing of another hand or
    of the trick between them, both penalty cards or neither)."""
    if a // 13 != b // 13:
        return False
    lo, hi = min(a, b), max(a, b)
    between = ((1 << hi) - 1) & ~((2 << lo) - 1) & SUIT_MASKS[a // 13]
    pen = CONTRACT_INFO[st.contract].penalty_cards
    return not between & ~(st.played | st.hands[seat]) and bool(pen >> a & 1) == bool(pen >> b & 1)


def _still_in_the_race(
    alive: list[int], values: list[list[float]], totals: list[float]
) -> list[int]:
    """The cards of `alive` not clearly behind the leader (by weighted total). The test reads
    the unweighted paired differences, as strong's stopping rule does: a heuristic."""
    lead = max(alive, key=lambda i: totals[i])
    kept = [lead]
    for j in alive:
        if j == lead:
            continue
        mean, se = paired_gap(values[lead], values[j])
        if not (mean > DROP_Z * se if se > 0.0 else mean > 0.0):
            kept.append(j)
    return sorted(kept)


def _ladder_of_own(ctx: GameContext, seat: int, contract_total: int, own: float) -> float:
    """Expected ladder points when the seat ends with `own` and the others share the rest."""
    other = (contract_total - own) / 3.0
    return expected_ladder(ctx, seat, tuple(own if i == seat else other for i in range(4)), -1)


def solved_ladder(
    ctx: GameContext, seat: int, contract_total: int, found: Solution, card: int
) -> float:
    """A solved card's worth in expected ladder points (own deal points as a tie-break): under
    maxⁿ from the four seats' points at the end of its line, as a rollout's; under paranoid,
    which has no line for the others, from the seat's own points with the rest shared evenly."""
    own = found.values[card]
    line = found.outcomes.get(card)
    if line is not None:
        return expected_ladder(ctx, seat, line, -1) + TIE_BREAK * own
    return _ladder_of_own(ctx, seat, contract_total, own) + TIE_BREAK * own


@register("expert", options=("budget_ms", "rollouts", "infer", "exact_tricks", "maxn"))
class ExpertStrategy(StrongStrategy):
    """Inference-weighted sampling, exact solving of the last `exact_tricks` tricks."""

    name = "expert"

    def __init__(
        self,
        seed: int,
        budget_ms: float = DEFAULT_BUDGET_MS,
        rollouts: float = 0,
        infer: float = 1,
        exact_tricks: float = EXACT_TRICKS,
        maxn: float = 1,
    ) -> None:
        super().__init__(seed, budget_ms=budget_ms, rollouts=rollouts)
        self.infer = bool(infer)
        self.exact_tricks = int(exact_tricks)
        # The endgame's model of the others: maxn (each plays for its own points, as the
        # other bots do; about 3x paranoid's positions, and stronger) or paranoid (they all
        # play against this seat).
        self.model = "maxn" if maxn else "paranoid"

    def _affordable_nodes(self, clock: _Clock) -> int:
        """The solver positions the time left in this decision pays for (at most
        EXACT_NODES; 0 leaves each card to a rollout, as strong values it)."""
        left = self.budget - clock.spent()
        return max(0, min(EXACT_NODES, int(left / NODE_SECONDS)))

    def evaluate_contracts(self, view: SeatView) -> dict[Action, float]:
        """For a declaring view: each legal declaration -> the declaring seat's expected deal
        points (its own score at the deal's end, the scale of domain.deal.scores: +50 a trick
        in trump, the negative penalty points taken otherwise), over deals sampled for the
        unseen cards and played out by the rollout policy. A redeal action is left out."""
        if view.phase is not Phase.DECLARING:
            raise ValueError("evaluate_contracts needs a view of the declaring seat")
        clock = _Clock()
        seat, hand = view.seat, view.hand
        actions = [a for a in view.legal if a.contract is not None]
        totals = [0.0] * len(actions)
        out = FULL_DECK & ~hand
        n = self.samples or CONTRACT_SAMPLES
        done = 0
        while done < n:
            hands = sample_hands(seat, hand, out, (out, out, out, out), (13, 13, 13, 13), self.rng)
            for i, a in enumerate(actions):
                assert a.contract is not None
                totals[i] += scores(rollout(new_deal(view.rules, a.contract, seat, hands)))[seat]
            done += 1
            if not self.samples and self._out_of_time(clock, done):
                break
        return {a: totals[i] / done for i, a in enumerate(actions)}

    def play(self, view: SeatView) -> Action:
        clock = _Clock()
        by_card = {a.card: a for a in view.legal if a.card is not None}
        k = knowledge_of(view)
        groups = card_groups(k.state)
        cards = [(g & -g).bit_length() - 1 for g in groups]
        if len(cards) == 1:
            return by_card[cards[0]]
        seat, base = k.seat, k.state
        ctx = game_context(view)
        total = CONTRACT_INFO[base.contract].deal_total
        exact = 13 - base.tricks <= self.exact_tricks
        values: list[list[float]] = [[] for _ in cards]
        totals = [0.0] * len(cards)
        alive = list(range(len(cards)))
        done = 0
        while True:
            hands = sample_hands(seat, view.hand, k.out, k.possible, k.counts, self.rng)
            w = play_likelihood(k, view, hands) if self.infer else 1.0
            world = base._replace(hands=hands)
            if exact:
                nodes = EXACT_NODES if self.samples else self._affordable_nodes(clock)
                found = solve(world, model=self.model, node_budget=nodes, estimate=_rollout_scores)
                for i in alive:
                    v = solved_ladder(ctx, seat, total, found, cards[i])
                    values[i].append(v)
                    totals[i] += w * v
            else:
                for i in alive:
                    end = rollout(play(world, cards[i]))
                    pts = scores(end)
                    v = expected_ladder(ctx, seat, pts, end.king) + TIE_BREAK * pts[seat]
                    values[i].append(v)
                    totals[i] += w * v
            done += 1
            if self._out_of_time(clock, done):
                break
            if self.early_stop and done >= 2 * MIN_SAMPLES and done % RACE_EVERY == 0:
                alive = _still_in_the_race(alive, values, totals)
                if len(alive) == 1:
                    break
        best = max(alive, key=lambda i: totals[i])
        return by_card[cards[best]]
