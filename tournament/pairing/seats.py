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

from tournament.model import PlayerId, Table, house_bot_id

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
