"""Round-robin for tables of four: every pair of players shares a table as equally often as
the number of rounds allows.

Where a design exists it is used as is (tournament.pairing.designs):
* n = 4^k players (16, 64, 256): AG(k, 4), every pair meets exactly once in (n − 1)/3 rounds
  (16 players: the affine plane of order 4, 5 rounds); with `fill="house_bot"` also
  n = 4^k − 1, −2, −3, the missing points being house bots;
* n = 28 and 40 (27 and 39 with a house bot): a stored resolvable design on Z_t × 3 ∪ {∞},
  every pair exactly once in (n − 1)/3 rounds;
* n = q ≡ 1 (mod 4) a prime power (5, 9, 13, 17, 25, 29, …) with byes: the cyclic design on
  GF(q), q rounds, one bye a round, every pair meets exactly 3 times.
* n = 8, 12, 20, 24, 28, 32, 36 (and 16) players, or one fewer with a house bot, and n = 21, 33
  with byes: a stored 1-rotational design, n − 1 (or n) rounds, every pair meets 3 times.
Asked for a different number of rounds, the design's rounds are repeated in order; that is
ideal for a once-each design (affine or resolvable) whatever the number of rounds (each pair
meets ⌊R/L⌋ or ⌈R/L⌉ times), and for the others when the number of rounds is a multiple of
their length;
otherwise the search below is used.

Otherwise (or when the design's prefix is not ideal, or earlier rounds must be taken into
account after late joins and withdrawals) a search: byes are fixed first (fewest byes first, in
seed order, so nobody has a second bye before everyone had one), each round starts from a
seeded shuffle, then simulated annealing swaps two players of different tables of one round,
minimising Σ meetings² over pairs (least when every pair meets ⌊T/P⌋ or ⌈T/P⌉ times) plus
Σ house-bot games² over players. The random numbers come from `random.Random` seeded from the
tournament seed and the iterations are a fixed count, so the schedule is reproducible.

Seats: each round is seated table by table (tournament.pairing.seats), then, the schedule
being known in full, `equalize_seats` re-colours the seats so that every player holds every
seat ⌊g/4⌋ or ⌈g/4⌉ times (de Werra's equitable edge colouring). When re-planning after
earlier rounds, only the per-table seating is used (it counts the earlier rounds' seats).

Players are first put in seed order (`model.seed_key`), so the schedule does not depend on the
order in which they are listed.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tournament.model import Balance, Fill, PlayerId, Round, Schedule, seed_key
from tournament.pairing.byes import table_caps
from tournament.pairing.designs import (
    KIRKMAN_BASES,
    ROTATIONAL_BASES,
    Design,
    affine_order,
    affine_space,
    cyclic_bye_design,
    kirkman_design,
    rotational_design,
)
from tournament.pairing.gf import prime_power
from tournament.pairing.history import absorb, empty_history, history_of
from tournament.pairing.seats import equalize_seats, seat_tables

AFFINE_BOT_POINTS = (0, 1, 4)
"""Points of AG(k, 4) given to house bots: not on one line, so no table gets three bots."""

ANNEAL_STEPS_PER_SLOT = 600
ANNEAL_MAX_STEPS = 400_000
T_START, T_END = 2.0, 0.05


@dataclass(frozen=True, slots=True)
class RoundRobinInput:
    """Everything a round-robin schedule depends on. `history` holds the rounds already played
    (re-planning the rest after a late join or a withdrawal); new rounds are numbered after
    them. `rounds=None` asks for `default_rounds`."""

    players: tuple[PlayerId, ...]
    seed: str
    rounds: int | None = None
    fill: Fill = "bye"
    history: tuple[Round, ...] = ()


def default_rounds(n: int, fill: Fill = "bye") -> int:
    """The fewest rounds in which every player can meet every other, byes shared equally.

    With b byes a round, R must make every player sit out equally often (R·b a multiple of n)
    and leave each at least ⌈(n − 1)/3⌉ games. For 16 players: 5; for 5 with byes: 5.
    """
    caps, b = table_caps(n, fill)
    if n < 2 or not caps:
        return 0
    games = -(-(n - 1) // 3)
    if b == 0:
        return games
    step = n // math.gcd(n, b)
    r = step
    while r - r * b // n < games:
        r += step
    return r


def round_robin(
    players: Sequence[PlayerId],
    seed: str,
    rounds: int | None = None,
    fill: Fill = "bye",
    history: Sequence[Round] = (),
) -> Schedule:
    """The schedule of a round-robin (see the module docstring for how it is built)."""
    return schedule(RoundRobinInput(tuple(players), seed, rounds, fill, tuple(history)))


def schedule(inp: RoundRobinInput) -> Schedule:
    if len(set(inp.players)) != len(inp.players):
        raise ValueError("a player is listed twice")
    order = sorted(inp.players, key=lambda p: seed_key(inp.seed, p))
    n = len(order)
    total = default_rounds(n, inp.fill) if inp.rounds is None else inp.rounds
    if total < 0:
        raise ValueError("a round-robin cannot have a negative number of rounds")
    caps, n_byes = table_caps(n, inp.fill)
    prior = history_of(inp.history)
    found = _design_plan(n, inp.fill, total) if not inp.history and total > 0 else None
    if found is not None and found[2]:
        method, planned = found[0], found[1]
    else:
        method = "search"
        byes = _bye_plan(order, n_byes, total, prior.byes)
        planned = _seeded_start(n, caps, byes, inp.seed)
        counts = [[prior.met(a, b) for b in order] for a in order]
        house = [prior.house_games.get(p, 0) for p in order]
        planned = _anneal(planned, counts, house, inp.seed)
    first = len(inp.history) + 1
    rounds = _seat(order, planned, inp, first)
    return Schedule(
        players=tuple(order),
        seed=inp.seed,
        fill=inp.fill,
        rounds=rounds,
        method=method,
        balance=balance_of(order, (*inp.history, *rounds)),
    )


def _design_plan(
    n: int, fill: Fill, total: int
) -> tuple[str, list[tuple[list[list[int]], list[int]]], bool] | None:
    """A known design on the players (as positions in seed order), or None.

    Returns (name, plan, ideal); a plan is ideal when every pair meets ⌊T/P⌋ or ⌈T/P⌉ times.
    """
    design: Design | None = None
    bots: tuple[int, ...] = ()
    k = affine_order(n + (-n) % 4) if fill == "house_bot" else affine_order(n)
    if k is not None:
        design = affine_space(k)
        spare = [x for x in range(design.points - 1, -1, -1) if x not in AFFINE_BOT_POINTS]
        candidates = [x for x in AFFINE_BOT_POINTS if x < design.points] + spare
        bots = tuple(candidates[: design.points - n])
    elif n in KIRKMAN_BASES:
        design = kirkman_design(n)
    elif fill == "house_bot" and n + 1 in KIRKMAN_BASES:
        design = kirkman_design(n + 1)
        bots = (n,)  # the point ∞ is the house bot
    elif fill == "bye" and n % 4 == 1 and prime_power(n) is not None:
        design = cyclic_bye_design(n)
    elif n in ROTATIONAL_BASES and (fill == "bye" or n % 4 == 0):
        design = rotational_design(n)
    elif fill == "house_bot" and n % 4 == 3 and n + 1 in ROTATIONAL_BASES:
        design = rotational_design(n + 1)
        bots = (n,)  # the point ∞ is the house bot: one bot a round, met 3 times by everyone
    if design is None:
        return None
    label: dict[int, int] = {}
    for point in range(design.points):
        if point not in bots:
            label[point] = len(label)
    plan = []
    for r in range(total):
        blocks = design.rounds[r % len(design.rounds)]
        tables = [[label[x] for x in b if x in label] for b in blocks]
        tables.sort(key=lambda t: (-len(t), min(t)))
        plan.append((tables, [label[x] for x in design.byes[r % len(design.rounds)]]))
    ideal = design.lam == 1 or total % len(design.rounds) == 0
    return design.name, plan, ideal


def _bye_plan(
    order: list[PlayerId], n_byes: int, total: int, prior: dict[PlayerId, int]
) -> list[list[int]]:
    """Byes for every round: fewest byes first, ties in seed order, continuing cyclically."""
    counts = [prior.get(p, 0) for p in order]
    out = []
    for _ in range(total):
        chosen = sorted(range(len(order)), key=lambda i: (counts[i], i))[:n_byes]
        for i in chosen:
            counts[i] += 1
        out.append(sorted(chosen))
    return out


def _rng(seed: str, what: str) -> random.Random:
    digest = hashlib.sha256(f"king-round-robin/1|{seed}|{what}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _seeded_start(
    n: int, caps: Sequence[int], byes: list[list[int]], seed: str
) -> list[tuple[list[list[int]], list[int]]]:
    rng = _rng(seed, "start")
    plan = []
    for out in byes:
        sitting = set(out)
        playing = [i for i in range(n) if i not in sitting]
        rng.shuffle(playing)
        tables, at = [], 0
        for cap in caps:
            tables.append(playing[at : at + cap])
            at += cap
        plan.append((tables, out))
    return plan


def _below(rng: random.Random) -> Callable[[int], int]:
    """`rng.randrange` for a stop n >= 1, drawn from `rng` exactly as it draws (getrandbits of
    n's bit length until one is below n), so a seed gives the schedules it always gave; without
    randrange's argument handling, which took half of the search's time."""
    getrandbits = rng.getrandbits

    def below(n: int) -> int:
        k = n.bit_length()
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    return below


def _anneal(
    plan: list[tuple[list[list[int]], list[int]]],
    counts: list[list[int]],
    house: list[int],
    seed: str,
) -> list[tuple[list[list[int]], list[int]]]:
    """Simulated annealing over swaps of two players of different tables in one round."""
    n = len(counts)
    for tables, _ in plan:
        bot_table = [len(t) < 4 for t in tables]
        for t, table in enumerate(tables):
            for i, a in enumerate(table):
                if bot_table[t]:
                    house[a] += 1
                for b in table[i + 1 :]:
                    counts[a][b] += 1
                    counts[b][a] += 1
    pairs = n * (n - 1) // 2
    if pairs == 0:
        return plan
    top = 2 + max(max(row, default=0) for row in counts) + len(plan)
    f = [pair_cost(c) for c in range(top + 1)]
    cost = sum(f[c] for a in range(n) for c in counts[a][a + 1 :]) + sum(h * h for h in house)
    met = sum(c for a in range(n) for c in counts[a][a + 1 :])
    floor = _least_cost(met, pairs, pair_cost) + _least_cost(sum(house), n, lambda h: h * h)
    movable = [r for r, (tables, _) in enumerate(plan) if len(tables) > 1]
    slots = sum(sum(len(t) for t in plan[r][0]) for r in movable)
    steps = min(ANNEAL_MAX_STEPS, ANNEAL_STEPS_PER_SLOT * slots)
    if not movable or cost == floor or steps == 0:
        return plan
    rng = _rng(seed, "anneal")
    below = _below(rng)
    best_cost, best = cost, [([list(t) for t in tables], out) for tables, out in plan]
    cool = (T_END / T_START) ** (1.0 / steps)
    temp = T_START
    for _ in range(steps):
        temp *= cool
        tables = plan[movable[below(len(movable))]][0]
        ta = below(len(tables))
        tb = below(len(tables) - 1)
        tb += tb >= ta
        A, B = tables[ta], tables[tb]
        i, j = below(len(A)), below(len(B))
        a, b = A[i], B[j]
        ca, cb = counts[a], counts[b]
        delta = 0
        for x in A:
            if x != a:
                c, d = ca[x], cb[x]
                delta += f[c - 1] - f[c] + f[d + 1] - f[d]
        for y in B:
            if y != b:
                c, d = cb[y], ca[y]
                delta += f[c - 1] - f[c] + f[d + 1] - f[d]
        bot_a, bot_b = len(A) < 4, len(B) < 4
        if bot_a != bot_b:
            if bot_a:  # a leaves a bot table, b joins one
                delta += 2 * (house[b] - house[a]) + 2
            else:
                delta += 2 * (house[a] - house[b]) + 2
        if delta > 0 and rng.random() >= math.exp(-delta / temp):
            continue
        for x in A:
            if x != a:
                ca[x] -= 1
                counts[x][a] -= 1
                cb[x] += 1
                counts[x][b] += 1
        for y in B:
            if y != b:
                cb[y] -= 1
                counts[y][b] -= 1
                ca[y] += 1
                counts[y][a] += 1
        if bot_a != bot_b:
            house[a] += -1 if bot_a else 1
            house[b] += 1 if bot_a else -1
        A[i], B[j] = b, a
        cost += delta
        if cost < best_cost:
            best_cost = cost
            best = [([list(t) for t in ts], out) for ts, out in plan]
            if cost == floor:
                break
    return best


def pair_cost(c: int) -> int:
    """What a pair meeting c times costs the search: c², convex, so the least total over a
    fixed number of meetings is the most even spread."""
    return c * c


def _least_cost(total: int, parts: int, f: Callable[[int], int]) -> int:
    """The least Σf(x) over `parts` non-negative integers summing to `total` (f convex)."""
    low, extra = divmod(total, parts)
    return (parts - extra) * f(low) + extra * f(low + 1)


def _seat(
    order: list[PlayerId],
    plan: list[tuple[list[list[int]], list[int]]],
    inp: RoundRobinInput,
    first: int,
) -> tuple[Round, ...]:
    acc = empty_history()
    for rnd in inp.history:
        absorb(acc, rnd)
    rounds = []
    for k, (tables, out) in enumerate(plan):
        number = first + k
        ordered = sorted((sorted(t) for t in tables), key=lambda t: (-len(t), t))
        groups = [[order[i] for i in t] for t in ordered]
        seated = seat_tables(groups, acc.seats, acc.neighbours, number, inp.seed)
        rnd = Round(number, seated, tuple(order[i] for i in sorted(out)))
        absorb(acc, rnd)
        rounds.append(rnd)
    # The whole schedule is known: make every player's seat counts equitable (within one).
    return equalize_seats(rounds) if not inp.history else tuple(rounds)


def balance_of(players: Sequence[PlayerId], rounds: Sequence[Round]) -> Balance:
    """How evenly `rounds` spread the meetings of every pair of `players` (and their byes and
    house-bot games); rounds before a late join count for what they hold."""
    h = history_of(rounds)
    ps = list(players)
    n = len(ps)
    pairs = n * (n - 1) // 2
    values = [h.met(ps[i], ps[j]) for i in range(n) for j in range(i + 1, n)]
    met = sum(values)
    low, extra = divmod(met, pairs) if pairs else (0, 0)
    high = low + (1 if extra else 0)
    byes = [h.byes.get(p, 0) for p in ps] or [0]
    house = [h.house_games.get(p, 0) for p in ps] or [0]
    return Balance(
        players=n,
        pairs=pairs,
        ideal_low=low,
        ideal_high=high,
        min_meetings=min(values, default=0),
        max_meetings=max(values, default=0),
        never_met=sum(1 for v in values if v == 0),
        below_ideal=sum(1 for v in values if v < low),
        above_ideal=sum(1 for v in values if v > high),
        min_byes=min(byes),
        max_byes=max(byes),
        min_house_games=min(house),
        max_house_games=max(house),
    )
