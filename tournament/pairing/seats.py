"""Seats at each table: balance every player's seat counts, then vary who sits next to whom.

In King the seat fixes the play order (seat s+1 plays after seat s), so each player should
hold every seat about equally often, and should not always follow the same opponent. A table
has only 4! = 24 seatings, so each table is solved exactly, in order of:

1. seat balance: the sum over the table's players of (count of the seat given − the player's
   smallest seat count)²; zero whenever every player can be given a seat they have held least,
   which keeps each player's counts within one of each other;
2. neighbours: how often each ordered pair (who sits just before whom) has occurred before;
3. a seed-based rotation of the 24 seatings, so ties do not always favour the same seat.

Tables are independent within a round, so this is the best seating for the given tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from itertools import permutations

from tournament.model import PlayerId, Round, Table, house_bot_id

PERMS: tuple[tuple[int, int, int, int], ...] = tuple(
    (p[0], p[1], p[2], p[3]) for p in permutations(range(4))
)
_NO_SEATS = (0, 0, 0, 0)


def _rotation(seed: str, round_no: int, table_no: int) -> int:
    digest = hashlib.sha256(f"king-seats/1|{seed}|{round_no}|{table_no}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % len(PERMS)


def best_seating(
    players: Sequence[PlayerId],
    seat_counts: Mapping[PlayerId, Sequence[int]],
    neighbours: Mapping[tuple[PlayerId, PlayerId], int],
    rotation: int = 0,
) -> tuple[int, ...]:
    """The seat of each of `players` (1 to 4 people; the other seats go to house bots)."""
    k = len(players)
    if not 1 <= k <= 4:
        raise ValueError("a table seats one to four registered players")
    excess = []
    for p in players:
        c = seat_counts.get(p, _NO_SEATS)
        low = min(c)
        excess.append([(c[s] - low) ** 2 for s in range(4)])
    best: tuple[int, int] | None = None
    choice: tuple[int, ...] = ()
    seen: set[tuple[int, ...]] = set()
    for i in range(len(PERMS)):
        perm = PERMS[(i + rotation) % len(PERMS)]
        mine = perm[:k]
        if mine in seen:  # the same seats for the people, only bots swapped
            continue
        seen.add(mine)
        primary = sum(excess[j][mine[j]] for j in range(k))
        if best is not None and primary > best[0]:
            continue
        at: list[PlayerId | None] = [None, None, None, None]
        for j in range(k):
            at[mine[j]] = players[j]
        secondary = 0
        for s in range(4):
            a, b = at[s], at[(s + 1) % 4]
            if a is not None and b is not None:
                secondary += neighbours.get((a, b), 0)
        if best is None or (primary, secondary) < best:
            best, choice = (primary, secondary), mine
    return choice


def seat_tables(
    groups: Sequence[Sequence[PlayerId]],
    seat_counts: Mapping[PlayerId, Sequence[int]],
    neighbours: Mapping[tuple[PlayerId, PlayerId], int],
    round_no: int,
    seed: str,
) -> tuple[Table, ...]:
    """Seat every group (the registered players of one table, top table first) and complete
    short tables with house bots, numbered house-bot-1, -2, … through the round."""
    tables = []
    bots = 0
    for number, group in enumerate(groups, start=1):
        seats_of = best_seating(group, seat_counts, neighbours, _rotation(seed, round_no, number))
        at: list[PlayerId | None] = [None, None, None, None]
        for p, s in zip(group, seats_of, strict=True):
            at[s] = p
        house = [s for s in range(4) if at[s] is None]
        seats: list[PlayerId] = []
        for s in range(4):
            who = at[s]
            if who is None:
                bots += 1
                who = house_bot_id(bots)
            seats.append(who)
        tables.append(Table(number, (seats[0], seats[1], seats[2], seats[3]), tuple(house)))
    return tuple(tables)


def equalize_seats(rounds: Sequence[Round]) -> tuple[Round, ...]:
    """Re-seat a whole known schedule so that every player holds every seat ⌊g/4⌋ or ⌈g/4⌉
    times over their g games (used for a round-robin, whose rounds are all known up front).

    Seats are the colours of an edge colouring of the bipartite multigraph tables–players in
    which every table has each colour once; de Werra's theorem says an *equitable* colouring
    exists. While some player holds seat a at least twice more than seat b, the edges coloured
    a or b in that player's part of the graph are split into trails (first from odd-degree
    vertices) and recoloured alternately a, b: every table keeps one a and one b, every vertex
    ends within one between a and b, and Σ count² falls, so it ends. The seating chosen per
    table (with its neighbour variety) is kept wherever it is already balanced.
    """
    # Vertices: ("t", round index, table index) and player ids; edges carry a seat colour.
    ends: list[tuple[tuple[int, int], str]] = []
    colour: list[int] = []
    at: dict[object, list[int]] = {}
    for r, rnd in enumerate(rounds):
        for t, table in enumerate(rnd.tables):
            for s, p in enumerate(table.seats):
                e = len(ends)
                who = p if s not in table.house else f"\0bot/{r}/{t}/{s}"
                ends.append(((r, t), who))
                colour.append(s)
                at.setdefault((r, t), []).append(e)
                at.setdefault(who, []).append(e)
    players = [v for v in at if isinstance(v, str)]
    while True:
        found = None
        for p in players:
            c = [0, 0, 0, 0]
            for e in at[p]:
                c[colour[e]] += 1
            hi, lo = max(range(4), key=c.__getitem__), min(range(4), key=c.__getitem__)
            if c[hi] - c[lo] >= 2:
                found = (p, hi, lo)
                break
        if found is None:
            break
        _alternate(found[0], found[1], found[2], ends, colour, at)
    out = []
    for r, rnd in enumerate(rounds):
        tables = []
        for t, table in enumerate(rnd.tables):
            seats: list[PlayerId] = [""] * 4
            house = []
            for e in at[(r, t)]:
                s = colour[e]
                who = ends[e][1]
                if who.startswith("\0bot/"):
                    house.append(s)
                seats[s] = who
            bots = iter(sorted(table.seats[s] for s in table.house))
            for s in sorted(house):
                seats[s] = next(bots)
            tables.append(
                Table(table.number, (seats[0], seats[1], seats[2], seats[3]), tuple(sorted(house)))
            )
        out.append(Round(rnd.number, tuple(tables), rnd.byes))
    return tuple(out)


def _alternate(
    start: str,
    a: int,
    b: int,
    ends: list[tuple[tuple[int, int], str]],
    colour: list[int],
    at: dict[object, list[int]],
) -> None:
    """Recolour the a/b edges of `start`'s component alternately along trails."""
    comp: set[object] = {start}
    stack: list[object] = [start]
    edges: set[int] = set()
    while stack:
        v = stack.pop()
        for e in at[v]:
            if colour[e] in (a, b) and e not in edges:
                edges.add(e)
                t, p = ends[e]
                for w in (t, p):
                    if w not in comp:
                        comp.add(w)
                        stack.append(w)
    free: dict[object, list[int]] = {v: [] for v in comp}
    for e in sorted(edges):
        t, p = ends[e]
        free[t].append(e)
        free[p].append(e)
    used: set[int] = set()

    def trail(v: object) -> None:
        c = a
        while True:
            options = free[v]
            while options and options[-1] in used:
                options.pop()
            if not options:
                return
            e = options.pop()
            used.add(e)
            colour[e] = c
            c = b if c == a else a
            t, p = ends[e]
            v = p if v == t else t

    order = sorted(comp, key=lambda v: (not isinstance(v, str), str(v)))
    for v in order:
        if sum(1 for e in free[v] if e not in used) % 2:
            trail(v)
    for v in order:
        while any(e not in used for e in free[v]):
            trail(v)
