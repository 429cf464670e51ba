"""What earlier rounds tell the next pairing: who met whom, seats held, neighbours, byes.

Derived from the rounds alone (the tournament's `round paired` events), so a pairing can be
re-checked by anyone holding them. House-bot seats are not people: they meet no one, hold no
seat count and are nobody's neighbour, but a player's games beside a house bot are counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tournament.model import PlayerId, Round


@dataclass(frozen=True, slots=True)
class History:
    """Counts from earlier rounds. The dicts are built once by `history_of` and only read
    afterwards (they are not copied, for speed at 10,000 players)."""

    meetings: dict[PlayerId, dict[PlayerId, int]]
    seats: dict[PlayerId, list[int]]
    neighbours: dict[tuple[PlayerId, PlayerId], int]
    byes: dict[PlayerId, int]
    house_games: dict[PlayerId, int]
    rounds: int

    def met(self, a: PlayerId, b: PlayerId) -> int:
        return self.meetings.get(a, {}).get(b, 0)

    def seat_counts(self, player: PlayerId) -> tuple[int, ...]:
        return tuple(self.seats.get(player, (0, 0, 0, 0)))


def empty_history() -> History:
    return History({}, {}, {}, {}, {}, 0)


def absorb(h: History, rnd: Round) -> None:
    """Add one round to counts being built (only for a History not yet handed out)."""
    meetings, seats, neighbours, house_games = h.meetings, h.seats, h.neighbours, h.house_games
    for p in rnd.byes:
        h.byes[p] = h.byes.get(p, 0) + 1
    for table in rnd.tables:
        people = [(s, p) for s, p in enumerate(table.seats) if s not in table.house]
        for s, p in people:
            counts = seats.get(p)
            if counts is None:
                counts = seats[p] = [0, 0, 0, 0]
            counts[s] += 1
            if table.house:
                house_games[p] = house_games.get(p, 0) + 1
            mine = meetings.get(p)
            if mine is None:
                mine = meetings[p] = {}
            for _, q in people:
                if q != p:
                    mine[q] = mine.get(q, 0) + 1
            nxt = (s + 1) % 4
            if nxt not in table.house:
                key = (p, table.seats[nxt])
                neighbours[key] = neighbours.get(key, 0) + 1


def history_of(rounds: Iterable[Round]) -> History:
    """Fold earlier rounds into counts (pairs, seats, ordered neighbours, byes, bot games)."""
    h = empty_history()
    n = 0
    for rnd in rounds:
        absorb(h, rnd)
        n += 1
    return History(h.meetings, h.seats, h.neighbours, h.byes, h.house_games, n)
