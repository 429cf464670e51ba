"""What a deal's outcome is worth in ladder points, given the game so far.

Ladder points depend on the final totals, not on deal points: in standard20 a player wins with
a total of at least 0 (+12 split among the winners, +3 more for the top winner, -12 split among
the losers); in short12 the leaders win. A deal's points therefore matter most to a player near
a threshold and late in the game. We model what the remaining deals add to each total as
normal noise around a known drift: the points the remaining contracts will hand out are public
(each trump right left brings +650, each penalty slot left its penalty total), shared evenly
but for the players who still hold more trump rights; the spread grows with the square root of
the deals left. Both figures were measured over heuristic self-play (spread DEAL_SD per deal,
TRUMP_RIGHT points per extra trump right). Each player's chance to win is then a normal
probability, and the expected ladder points follow from those chances.
Early in a game this is close to "own points minus the others' mean"; late in it, it knows
that 10 points that carry a total over zero are worth more than 300 that do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from domain.contracts import CONTRACT_INFO, PENALTY_CONTRACTS, Contract
from domain.rules import Rules
from domain.view import SeatView

# Spread of a player's total over the deals still to come, per sqrt(deal), and what one trump
# right more than the table's mean adds (both measured over 150 heuristic self-play games).
DEAL_SD = 103.0
TRUMP_RIGHT = 80.0
# The spread left when no deal remains: a step, smoothed so sampling noise does not dominate.
MIN_SD = 10.0
# Scores come in tens and a total of exactly 0 wins: the threshold sits half a step below 0.
WIN_OFFSET = 5.0
KING_WIN = 12.0
KING_LOSS = -4.0
_SQRT2 = math.sqrt(2.0)


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / _SQRT2))


@dataclass(frozen=True, slots=True)
class GameContext:
    """The game around the deal in play: each total before it plus the drift still expected
    after it, and the number of deals after it."""

    rules: Rules
    totals: tuple[float, ...]
    deals_left: int

    @property
    def sd(self) -> float:
        return max(MIN_SD, DEAL_SD * math.sqrt(self.deals_left))


def game_context(view: SeatView) -> GameContext:
    """The context of the deal in play in `view` (its contract's right is already used)."""
    rules = view.rules
    uses_left = [2 - u for u in view.uses]
    if rules.mode == "standard20":
        penalty = sum(
            float(n * CONTRACT_INFO[c].deal_total)
            for c, n in zip(PENALTY_CONTRACTS, uses_left, strict=True)
        )
    else:
        open_ = [
            CONTRACT_INFO[c].deal_total
            for c, n in zip(PENALTY_CONTRACTS, uses_left, strict=True)
            if n
        ]
        penalty = sum(view.penalty_left) * (sum(open_) / len(open_) if open_ else 0.0)
    remaining = 650.0 * sum(view.trump_left) + penalty
    mean_rights = sum(view.trump_left) / 4.0
    totals = tuple(
        view.totals[i] + remaining / 4.0 + TRUMP_RIGHT * (view.trump_left[i] - mean_rights)
        for i in range(4)
    )
    return GameContext(rules, totals, max(0, rules.deals - view.deal_no))


def after_declaring(ctx: GameContext, seat: int, contract: Contract) -> GameContext:
    """The context once `seat` declares `contract` (read during the declaration): that slot's
    points leave the drift still to come, and a trump right used lowers the declarer's."""
    share = CONTRACT_INFO[contract].deal_total / 4.0
    shift = [-share] * 4
    if contract.is_trump:
        shift = [s + TRUMP_RIGHT / 4.0 for s in shift]
        shift[seat] -= TRUMP_RIGHT
    totals = tuple(t + s for t, s in zip(ctx.totals, shift, strict=True))
    return GameContext(ctx.rules, totals, ctx.deals_left)


def contract_outlook(ctx: GameContext, seat: int, contract: Contract, relative: float) -> float:
    """The seat's expected ladder points if it declares `contract` and ends the deal `relative`
    points above the others' mean (the rest shared evenly), the deal's own spread still to come.

    `ctx` is the declaration's context (game_context before the contract is chosen)."""
    total = CONTRACT_INFO[contract].deal_total
    own = 0.75 * relative + total / 4.0  # own - (total - own) / 3 == relative
    other = (total - own) / 3.0
    after = after_declaring(ctx, seat, contract)
    pending = GameContext(ctx.rules, after.totals, ctx.deals_left + 1)
    return expected_ladder(pending, seat, tuple(own if i == seat else other for i in range(4)), -1)


def expected_ladder(
    ctx: GameContext, seat: int, deal_scores: tuple[float, ...], king: int
) -> float:
    """The seat's expected ladder points for the game if this deal ends with `deal_scores`."""
    if king >= 0:
        return KING_WIN if king == seat else KING_LOSS
    sd = ctx.sd
    x = [ctx.totals[i] + deal_scores[i] for i in range(4)]
    me = x[seat]
    others = [x[i] for i in range(4) if i != seat]
    if ctx.rules.mode == "short12":
        # The leaders win: +12 split among them, -12 split among the rest.
        lead = 1.0
        for o in others:
            lead *= _phi((me - o) / (sd * _SQRT2))
        return 16.0 * lead - 4.0
    p_me = _phi((me + WIN_OFFSET) / sd)
    # Poisson-binomial distribution of how many others win.
    dist = [1.0, 0.0, 0.0, 0.0]
    for o in others:
        p = _phi((o + WIN_OFFSET) / sd)
        for k in (3, 2, 1):
            dist[k] = dist[k] * (1.0 - p) + dist[k - 1] * p
        dist[0] *= 1.0 - p
    win = sum(dist[k] * 12.0 / (k + 1) for k in range(4))
    lose = sum(dist[k] * -12.0 / (4 - k) for k in range(4))
    top = 1.0
    for o in others:
        top *= _phi((me - o) / (sd * _SQRT2))
    return p_me * (win + 3.0 * top) + (1.0 - p_me) * lose
