"""Deal the unseen cards to the other three seats, consistently with everything known.

Each unseen card may go only to the seats whose `possible` mask holds it, and each seat must end
with exactly the number of cards it still holds. Cards are placed one by one in random order;
a seat is drawn in proportion to the room it has left, and only among the seats that keep the
rest of the deal possible (Hall's condition over the seven sets of seats), so a draw never
fails and never needs a retry.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# For each 3-bit set of seats S, the 3-bit sets T that are subsets of S.
_SUBSETS: tuple[tuple[int, ...], ...] = tuple(
    tuple(t for t in range(1, 8) if t & s == t) for s in range(8)
)


def _feasible(kinds: list[int], room: list[int]) -> bool:
    """Hall's condition: for every set S of seats, the cards only S may take fit into S."""
    for s in range(1, 8):
        need = 0
        for t in _SUBSETS[s]:
            need += kinds[t]
        have = 0
        for i in range(3):
            if s >> i & 1:
                have += room[i]
        if need > have:
            return False
    return True


class NoConsistentDeal(ValueError):
    """The constraints admit no deal (a bug in the inference, never expected)."""


def sample_hands(
    seat: int,
    hand: int,
    out: int,
    possible: Sequence[int],
    counts: Sequence[int],
    rng: random.Random,
) -> tuple[int, int, int, int]:
    """Four hands: `hand` for `seat`, and the `out` cards spread over the others."""
    others = [s for s in range(4) if s != seat]
    room = [counts[s] for s in others]
    cards: list[tuple[int, int]] = []
    kinds = [0] * 8
    m = out
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        kind = 0
        for i, s in enumerate(others):
            if possible[s] >> c & 1:
                kind |= 1 << i
        cards.append((c, kind))
        kinds[kind] += 1
    if sum(room) != len(cards) or kinds[0] or not _feasible(kinds, room):
        raise NoConsistentDeal("no deal fits what is known")
    rng.shuffle(cards)
    # Place the most constrained cards first: fewer checks fail, draws stay near uniform.
    cards.sort(key=lambda ck: (ck[1] & -ck[1]) == ck[1], reverse=True)
    dealt = [0, 0, 0]
    for c, kind in cards:
        kinds[kind] -= 1
        choices = [i for i in range(3) if kind >> i & 1 and room[i]]
        while True:
            total = sum(room[i] for i in choices)
            r = rng.random() * total
            pick = choices[-1]
            for i in choices:
                r -= room[i]
                if r < 0:
                    pick = i
                    break
            room[pick] -= 1
            if len(choices) == 1 or _feasible(kinds, room):
                break
            room[pick] += 1
            choices.remove(pick)
        dealt[pick] |= 1 << c
    hands = [0, 0, 0, 0]
    hands[seat] = hand
    for i, s in enumerate(others):
        hands[s] = dealt[i]
    return hands[0], hands[1], hands[2], hands[3]
