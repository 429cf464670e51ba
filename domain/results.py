"""End of game: winners and ladder points (docs/RULES.md, "End of game" and "Ladder points"), as
exact fractions."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction

from domain.rules import Rules

LADDER_POOL = Fraction(12)
TOP_BONUS = Fraction(3)
ABANDON_POINTS = Fraction(-30)
SUBSTITUTE_LOSS_POINTS = Fraction(1)


def points_number(x: Fraction) -> int | float:
    """Ladder points of one game as a JSON number: an integer, else a decimal. Exact: a share
    of 12 or of 3 among at most four seats has a denominator of 1, 2 or 4, and every such
    fraction is a binary float. (Standings are sums with byes that may be a mean, so any
    fraction: they keep the exact "17/3" text instead.)"""
    return int(x) if x.denominator == 1 else float(x)


def points_from_json(value: object) -> Fraction:
    """Ladder points read back from JSON: a number (this form) or a fraction's text ("-30",
    "15/2": the form stored before numbers were the one form). ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"ladder points must be a number, not {value!r}")
    try:
        return Fraction(value)
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        raise ValueError(f"ladder points must be a number, not {value!r}") from exc


def winners(rules: Rules, totals: Sequence[int], king: int | None) -> tuple[int, ...]:
    """R-KINGEND, R-RESULT20 (total >= 0 wins) and R-RESULT12 (the tied leaders win)."""
    if king is not None:
        return (king,)
    if rules.mode == "standard20":
        return tuple(s for s in range(4) if totals[s] >= 0)
    best = max(totals)
    return tuple(s for s in range(4) if totals[s] == best)


def ladder_points(
    rules: Rules, totals: Sequence[int], king: int | None
) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Each seat's ladder points for one finished game (R-LADDER20, R-LADDER12, R-LADDERKING)."""
    won = winners(rules, totals, king)
    lost = [s for s in range(4) if s not in won]
    points = [Fraction(0)] * 4
    for s in won:
        points[s] += LADDER_POOL / len(won)
    for s in lost:
        points[s] -= LADDER_POOL / len(lost)
    if king is None and rules.mode == "standard20":
        best = max(totals[s] for s in won)
        top = [s for s in won if totals[s] == best]
        for s in top:
            points[s] += TOP_BONUS / len(top)
    return points[0], points[1], points[2], points[3]


def seat_results(
    seat_points: Sequence[Fraction],
    won: Sequence[int],
    occupants: Sequence[Sequence[str]],
    abandoned: Collection[tuple[str, int]],
) -> list[tuple[int, str, Fraction]]:
    """Ladder points per seat and person, with R-ABANDON and R-SUBSTITUTE.

    occupants[seat] lists who sat there in order (the first is the original player, later ones
    substitutes); abandoned holds the (person, seat) pairs of those who left. A leaver gets -30
    whatever the outcome; the seat's last occupant, if a substitute, gets +1 instead of a
    deduction on a loss and the normal points on a win. One row per (seat, person).
    """
    rows: list[tuple[int, str, Fraction]] = []
    for seat in range(4):
        people = occupants[seat]
        for i, person in enumerate(dict.fromkeys(people)):
            if (person, seat) in abandoned:
                points = ABANDON_POINTS
            elif person == people[-1]:
                points = seat_points[seat]
                if i > 0 and seat not in won:
                    points = SUBSTITUTE_LOSS_POINTS
            else:
                continue
            rows.append((seat, person, points))
    return rows


def participant_points(
    seat_points: Sequence[Fraction],
    won: Sequence[int],
    occupants: Sequence[Sequence[str]],
    abandoned: Mapping[str, int],
) -> dict[str, Fraction]:
    """Ladder points per person (summed over the seats they held); see seat_results."""
    out: dict[str, Fraction] = {}
    pairs = set(abandoned.items())
    for _seat, person, points in seat_results(seat_points, won, occupants, pairs):
        out[person] = out.get(person, Fraction(0)) + points
    return out


def fraction_text(x: Fraction) -> str:
    """An exact fraction as stored in events: '9', '-15/2'."""
    return str(x)


def parse_fraction(text: str) -> Fraction:
    return Fraction(text)
