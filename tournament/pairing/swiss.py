"""Swiss pairing for tables of four.

Players are ranked by standing: ladder points, total game points, the sum of table-mates'
ladder points, wins (all higher first), then the stable seed order (`model.seed_key`). Byes go
to the players with the fewest byes, the lowest-ranked first. Tables are then filled from the
top: the best unseated player heads a table, and each next seat goes to the highest-ranked
unseated player who has met none of the table so far ("eligible") — or, looking at most
`SEAT_WINDOW` (8) eligible players down, the first whose least-held seats still fit the
table's, so that everyone can be seated where they have sat least (as a chess Swiss weighs
colour preferences in its pairing). Round 1 is plain seed order from the top.

Greedy bound. Let d be the largest number of distinct earlier table-mates of any active
player. While m ≥ 3d + 4 players remain unseated, the greedy always completes a table with no
repeat: the j-th seat (j = 1, 2, 3) excludes at most j·d met players and j seated ones, and
m − j > j·d. So the greedy can only get stuck in the last 3d + 3 players (the "tail"), and a
round holds at most `repeat_bound(d, caps)` repeat pairs: the pairs of the bottom tables that
seat 3d + 3 players, 6·⌊(3d + 3)/4⌋ with full tables. (In round r, d ≤ 3(r − 1).)

When the greedy is stuck, it backtracks: the tables it formed within the tail are undone and
the tail is re-solved, minimising, in order, the repeats (a pair's k-th meeting costs more
than all pairs' earlier meetings together, so the repeat limit is relaxed only where it must
be), the tables where not everyone can get a least-held seat, and the rank spread: from the
greedy's own completion, a local search swaps players between tables (steepest descent,
seeded kicks), then a depth-first branch and bound improves on it. If repeats remain, the same
is tried once on a tail twice as wide (at least 48 players) and kept only when it has fewer
repeats and stays within the bound. Budgets are counts, not times: every machine pairs alike.

Cost: O(n·d) for the greedy plus a bounded tail search, then 24 seatings per table.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from tournament.model import Fill, PlayerId, Round, seed_key
from tournament.pairing.byes import choose_byes, table_caps
from tournament.pairing.history import History, history_of
from tournament.pairing.seats import seat_tables

SEAT_WINDOW = 8
"""How many eligible players, in rank order, a seat may look through for one whose least-held
seats fit the table's (so that everyone can be seated where they have sat least)."""

TAIL_BUDGET = 20_000
WIDE_TAIL = 48
"""Candidates the tail search may weigh (a count, not a time: every machine pairs alike)."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """An active player as the pairing sees them: the standing keys, best first when higher."""

    player: PlayerId
    ladder: Fraction = Fraction(0)
    game_points: int = 0
    table_mates: Fraction = Fraction(0)
    wins: int = 0


@dataclass(frozen=True, slots=True)
class SwissInput:
    """Everything one Swiss round depends on; `pair_swiss` of equal inputs gives equal rounds.

    `entrants` are the active players (any order), `history` every earlier round in order.
    """

    round: int
    seed: str
    entrants: tuple[Entrant, ...]
    history: tuple[Round, ...] = ()
    fill: Fill = "bye"


def ranking(entrants: Sequence[Entrant], seed: str) -> list[PlayerId]:
    """Players best first: ladder, game points, table-mates' ladder, wins, then seed order."""
    ranked = sorted(
        entrants,
        key=lambda e: (
            -e.ladder,
            -e.game_points,
            -e.table_mates,
            -e.wins,
            seed_key(seed, e.player),
        ),
    )
    return [e.player for e in ranked]


def repeat_bound(d: int, caps: Sequence[int]) -> int:
    """The most repeat pairs a round can hold: the pairs of the last tables (registered players
    per table `caps`, top first) that together seat at most 3d + 3 players, where d is the most
    distinct earlier table-mates of any active player: 6·⌊(3d + 3)/4⌋ for full tables.
    """
    room, pairs = safe_remaining(d) - 1, 0
    for cap in reversed(caps):
        if cap > room:
            break
        room -= cap
        pairs += cap * (cap - 1) // 2
    return pairs


def safe_remaining(d: int) -> int:
    """A table formed while at least this many players are unseated has no repeat."""
    return 3 * d + 4


def pair_swiss(inp: SwissInput) -> Round:
    """Pair one Swiss round: byes, tables from the top, then seats."""
    if len({e.player for e in inp.entrants}) != len(inp.entrants):
        raise ValueError("an entrant is listed twice")
    history = history_of(inp.history)
    order = ranking(inp.entrants, inp.seed)
    caps, n_byes = table_caps(len(order), inp.fill)
    byes = choose_byes(order, n_byes, history.byes)
    out = set(byes)
    players = [p for p in order if p not in out]
    groups = group_tables(players, caps, history)
    tables = seat_tables(
        [[players[i] for i in g] for g in groups],
        history.seats,
        history.neighbours,
        inp.round,
        inp.seed,
    )
    return Round(inp.round, tables, byes)


def group_tables(
    players: Sequence[PlayerId], caps: Sequence[int], history: History
) -> list[list[int]]:
    """Split ranked `players` into tables of `caps` sizes (positions into `players`)."""
    index = {p: i for i, p in enumerate(players)}
    met: list[dict[int, int]] = []
    for p in players:
        mine = history.meetings.get(p)
        met.append({index[q]: c for q, c in mine.items() if q in index} if mine else {})
    d = max((len(m) for m in met), default=0)
    need = [_need_mask(history.seats.get(p)) for p in players]
    return _group(met, list(caps), d, need)


def _need_mask(counts: Sequence[int] | None) -> int:
    """The seats a player has held least, as a bit mask (all four before their first game)."""
    if not counts:
        return 0b1111
    low = min(counts)
    return sum(1 << s for s in range(4) if counts[s] == low)


@cache
def seat_compatible(masks: tuple[int, ...]) -> bool:
    """Whether each player can get one of their least-held seats, all different (Hall)."""
    k = len(masks)
    for subset in range(1, 1 << k):
        union = 0
        for i in range(k):
            if subset >> i & 1:
                union |= masks[i]
        if union.bit_count() < subset.bit_count():
            return False
    return True


def _group(met: list[dict[int, int]], caps: list[int], d: int, need: list[int]) -> list[list[int]]:
    n = len(met)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    head: int = 0

    def unlink(i: int) -> None:
        nonlocal head
        a, b = prv[i], nxt[i]
        if a >= 0:
            nxt[a] = b
        else:
            head = b
        if b < n:
            prv[b] = a

    formed: list[list[int]] = []
    stuck: list[int] | None = None
    for cap in caps:
        members = [head]
        masks: tuple[int, ...] = (need[head],)
        unlink(head)
        for _ in range(cap - 1):
            c, first, seen = head, n, 0
            while c < n:
                if not any(m in met[c] for m in members):
                    if first == n:
                        first = c
                    if seat_compatible(tuple(sorted((*masks, need[c])))):
                        break
                    seen += 1
                    if seen >= SEAT_WINDOW:
                        c = n
                        break
                c = nxt[c]
            pick = c if c < n else first
            if pick == n:
                break
            members.append(pick)
            masks = (*masks, need[pick])
            unlink(pick)
        if len(members) < cap:
            stuck = members
            break
        formed.append(members)
    if stuck is None:
        return formed
    tail = list(stuck)
    c = head
    while c < n:
        tail.append(c)
        c = nxt[c]
    base = 6 * len(caps) + 1
    limit = max(len(tail), min(n, safe_remaining(d) - 1))
    near = list(formed)
    while near and len(tail) + len(near[-1]) <= limit:
        tail.extend(near.pop())
    tables, pen = _solve_tail(sorted(tail), caps[len(near) :], met, base, need)
    if pen and near:
        # Repeats left: try again over a wider tail; keep it only if it stays within the bound.
        wide = list(near)
        while wide and len(tail) + len(wide[-1]) <= max(2 * limit, WIDE_TAIL):
            tail.extend(wide.pop())
        wide_tables, wide_pen = _solve_tail(sorted(tail), caps[len(wide) :], met, base, need)
        if wide_pen < pen and repeat_pairs(wide_tables, met) <= repeat_bound(d, caps):
            return wide + wide_tables
    return near + tables


def repeat_pairs(tables: Sequence[Sequence[int]], met: Sequence[dict[int, int]]) -> int:
    """Pairs seated together that had met before."""
    return sum(1 for t in tables for i, a in enumerate(t) for b in t[i + 1 :] if b in met[a])


def _solve_tail(
    tail: list[int], caps: list[int], met: list[dict[int, int]], base: int, need: list[int]
) -> tuple[list[list[int]], int]:
    """Tables for the tail minimising (repeat penalty, tables whose players cannot all get a
    least-held seat, rank spread), best first, and their penalty: a pair's k-th meeting costs
    base**(k−1), more than all pairs' earlier meetings together."""

    def pen(k: int) -> int:
        return 0 if k == 0 else base ** (k - 1)

    def cost(c: int, members: list[int]) -> int:
        mine = met[c]
        total = 0
        for m in members:  # (a loop, not sum over a generator: the search's innermost step)
            k = mine.get(m, 0)
            if k:
                total += pen(k)
        return total

    def clash(members: list[int]) -> int:
        return 0 if seat_compatible(tuple(sorted(need[m] for m in members))) else 1

    def score(tables: list[list[int]]) -> tuple[int, int, int]:
        return (
            sum(_table_pen(x, met, pen) for x in tables),
            sum(clash(x) for x in tables),
            sum(sum(x) - len(x) * min(x) for x in tables),
        )

    # The greedy completion: each seat to the cheapest candidate, ties to the higher-ranked.
    rest = list(tail)
    incumbent: list[list[int]] = []
    for cap in caps:
        members = [rest.pop(0)]
        for _ in range(cap - 1):
            pick = min(rest, key=lambda c: (cost(c, members), c))
            rest.remove(pick)
            members.append(pick)
        incumbent.append(members)
    first = score(incumbent)
    if first[0] or first[1]:
        weight = len(caps) + 1  # one more repeat costs more than every seat clash
        known: dict[tuple[int, ...], int] = {}

        def table_cost(t: list[int]) -> int:
            # The descent weighs the same tables again and again (every pair of tables a move
            # left alone): a table's cost depends only on who sits at it.
            key = tuple(sorted(t))
            c = known.get(key)
            if c is None:
                c = known[key] = _table_pen(t, met, pen) * weight + clash(t)
            return c

        incumbent = _untangle(incumbent, table_cost)
    best = score(incumbent)
    # Table sizes stay in `caps` order (house bots at the bottom); within a size, by best player.
    best_tables = sorted((sorted(x) for x in incumbent), key=lambda x: (-len(x), x[0]))
    nodes = 0

    def search(
        remaining: list[int], t: int, acc_score: tuple[int, int, int], acc: list[list[int]]
    ) -> None:
        nonlocal best, best_tables, nodes
        if not remaining:
            if acc_score < best:
                best, best_tables = acc_score, [list(x) for x in acc]
            return
        cap = caps[t]
        head, rest = remaining[0], remaining[1:]
        p0, c0, s0 = acc_score

        def choose(start: int, members: list[int], p: int, s: int) -> None:
            nonlocal nodes
            if len(members) == cap:
                done = (p, c0 + clash(members), s)
                if done >= best:
                    return
                chosen = set(members)
                left = [x for x in rest if x not in chosen]
                # A repeat-free completion is needed only to beat a repeat-free best.
                if best[0] > 0 or not _starved(left, caps[t + 1 :], met):
                    acc.append(members)
                    search(left, t + 1, done, acc)
                    acc.pop()
                return
            slots = cap - len(members)
            for j in range(start, len(rest) - slots + 1):
                if nodes >= TAIL_BUDGET:
                    return
                nodes += 1
                c = rest[j]
                np_, ns = p + cost(c, members), s + c - head
                if (np_, c0, ns) < best:
                    choose(j + 1, [*members, c], np_, ns)

        choose(0, [head], p0, s0)

    search(list(tail), 0, (0, 0, 0), [])
    return best_tables, best[0]


def _starved(left: list[int], caps: list[int], met: list[dict[int, int]]) -> bool:
    """Forward check: some player has too few unmet players left to fill a repeat-free table."""
    if not caps:
        return False
    need = min(caps) - 1
    for x in left:
        mine = met[x]
        free = 0
        for y in left:
            if y != x and y not in mine:
                free += 1
                if free >= need:
                    break
        if free < need:
            return True
    return False


LOCAL_ROUNDS = 40
"""Descents (each to a local optimum, then a seeded kick) of the tail's local search."""


def _table_pen(table: list[int], met: list[dict[int, int]], pen: Callable[[int], int]) -> int:
    total = 0
    for i, a in enumerate(table):
        mine = met[a]
        for b in table[i + 1 :]:
            k = mine.get(b, 0)
            if k:
                total += pen(k)
    return total


def _untangle(tables: list[list[int]], cost: Callable[[list[int]], int]) -> list[list[int]]:
    """Swap players between tables to lower the summed table cost (steepest descent with
    seeded kicks out of local optima); table sizes stay as they are. Returns the best seen."""
    if len(tables) < 2:
        return tables
    rng = random.Random(len(tables))
    cur = [list(t) for t in tables]
    costs = [cost(t) for t in cur]
    best_total, best = sum(costs), [list(t) for t in cur]
    for _ in range(LOCAL_ROUNDS):
        while True:
            move: tuple[int, int, int, int, int, int] | None = None
            gain_best = 0
            for a, ta in enumerate(cur):
                if not costs[a]:
                    continue
                for i, x in enumerate(ta):
                    for b, tb in enumerate(cur):
                        if b == a:
                            continue
                        for j, y in enumerate(tb):
                            ta[i], tb[j] = y, x
                            ca, cb = cost(ta), cost(tb)
                            ta[i], tb[j] = x, y
                            gain = costs[a] + costs[b] - ca - cb
                            if gain > gain_best:
                                gain_best, move = gain, (a, i, b, j, ca, cb)
            if move is None:
                break
            a, i, b, j, ca, cb = move
            cur[a][i], cur[b][j] = cur[b][j], cur[a][i]
            costs[a], costs[b] = ca, cb
        total = sum(costs)
        if total < best_total:
            best_total, best = total, [list(t) for t in cur]
        if best_total == 0:
            break
        # Kick: swap a player of a costly table with a random player elsewhere.
        bad = [a for a, c in enumerate(costs) if c]
        a = bad[rng.randrange(len(bad))]
        b = rng.randrange(len(cur) - 1)
        b += b >= a
        i, j = rng.randrange(len(cur[a])), rng.randrange(len(cur[b]))
        cur[a][i], cur[b][j] = cur[b][j], cur[a][i]
        costs[a], costs[b] = cost(cur[a]), cost(cur[b])
    return best
