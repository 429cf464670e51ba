"""Who sits out, and how many house-bot seats complete the tables.

A field of n players makes n // 4 full tables. The n % 4 left over either get a bye (a
published score, see tournament.standings) or play at tables completed by house bots; the bots
are spread one per table over the lowest tables where possible, so no human meets two bots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tournament.model import Fill, PlayerId


def table_caps(n: int, fill: Fill) -> tuple[tuple[int, ...], int]:
    """(registered players per table, top table first; number of byes) for n players."""
    if n < 0:
        raise ValueError("a field cannot have fewer than no players")
    if fill == "bye":
        return (4,) * (n // 4), n % 4
    tables = -(-n // 4)
    caps = [4] * tables
    for i in range(4 * tables - n):
        caps[tables - 1 - (i % tables)] -= 1
    return tuple(caps), 0


def choose_byes(
    ranked: Sequence[PlayerId], count: int, byes_so_far: Mapping[PlayerId, int]
) -> tuple[PlayerId, ...]:
    """The `count` players to sit out: fewest byes so far first, then the lowest-ranked.

    `ranked` is best first. Taking the fewest byes first means nobody gets a second bye
    before every active player has had one (a late joiner starts at zero, so is next).
    """
    if count <= 0:
        return ()
    pos = {p: i for i, p in enumerate(ranked)}
    chosen = sorted(ranked, key=lambda p: (byes_so_far.get(p, 0), -pos[p]))[:count]
    return tuple(sorted(chosen, key=pos.__getitem__))
