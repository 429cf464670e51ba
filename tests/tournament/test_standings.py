"""Standings on a small field, every number worked out by hand.

Five players, two rounds, standard20 (R-LADDER20: +12 split among winners (total >= 0), −12
split among losers, +3 to the top winner):

round 1, table A B C D (E has the bye): totals +450 / 0 / −130 / −320
    winners A, B: +6 each, +3 top bonus to A  →  A +9, B +6, C −6, D −6
round 2, table E C A B (D has the bye): totals −200 / +300 / +100 / −200
    winners C, A: +6 each, +3 to C            →  E −6, C +9, A +6, B −6

            ladder   game points          wins  games  byes
    A   9 + 6 = 15   450 + 100 =  550     2     2      0
    B   6 − 6 =  0     0 − 200 = −200     1     2      0
    C  −6 + 9 =  3  −130 + 300 =  170     1     2      0
    D          −6          −320           0     1      1
    E          −6          −200           0     1      1

table-mates (final ladders of the others at each of the player's tables):
    A: (B 0 + C 3 + D −6) + (E −6 + C 3 + B 0) = −6
    B: (A 15 + C 3 + D −6) + (E −6 + C 3 + A 15) = 24
    C: (A 15 + B 0 + D −6) + (E −6 + A 15 + B 0) = 18
    D: A 15 + B 0 + C 3 = 18          E: C 3 + A 15 + B 0 = 18
order: A 15, C 3, B 0, then D and E tie on −6 and E is ahead on game points (−200 > −320).
"""

from __future__ import annotations

from fractions import Fraction

from domain.events import GameCreated, GameEnded, SeatAbandoned, SeatResult
from domain.results import ladder_points, winners
from domain.rules import Rules
from tournament.model import GameResult, Round, Table
from tournament.standings import (
    result_from_events,
    standings,
    to_csv,
    to_json,
    two_decimals,
)

RULES = Rules()
PLAYERS = ["A", "B", "C", "D", "E"]


def game(
    game_id: str, rnd: int, seats: tuple[str, str, str, str], totals: tuple[int, ...]
) -> GameResult:
    t = (totals[0], totals[1], totals[2], totals[3])
    pts = ladder_points(RULES, t, None)
    return GameResult(
        game_id, rnd, seats, t, winners(RULES, t, None), tuple(zip(seats, pts, strict=True))
    )


R1 = Round(1, (Table(1, ("A", "B", "C", "D")),), ("E",))
R2 = Round(2, (Table(1, ("E", "C", "A", "B")),), ("D",))
G1 = game("g1", 1, ("A", "B", "C", "D"), (450, 0, -130, -320))
G2 = game("g2", 2, ("E", "C", "A", "B"), (-200, 300, 100, -200))


def test_ladder_points_as_worked_out() -> None:
    assert dict(G1.points) == {"A": 9, "B": 6, "C": -6, "D": -6}
    assert dict(G2.points) == {"E": -6, "C": 9, "A": 6, "B": -6}


def test_small_field_by_hand() -> None:
    st = standings(PLAYERS, [G1, G2], [R1, R2])
    rows = [
        (r.rank, r.player, r.ladder, r.game_points, r.table_mates, r.wins, r.games, r.byes)
        for r in st.rows
    ]
    assert rows == [
        (1, "A", 15, 550, -6, 2, 2, 0),
        (2, "C", 3, 170, 18, 1, 2, 0),
        (3, "B", 0, -200, 24, 1, 2, 0),
        (4, "E", -6, -200, 18, 0, 1, 1),
        (5, "D", -6, -320, 18, 0, 1, 1),
    ]
    assert all(isinstance(r.ladder, Fraction) for r in st.rows)


def test_fixed_bye_points() -> None:
    st = standings(PLAYERS, [G1, G2], [R1, R2], bye_points=Fraction(3))
    # D and E: −6 + 3 = −3; A's table-mates: (0 + 3 − 3) + (−3 + 3 + 0) = 0
    assert st.row("D").ladder == -3 and st.row("E").ladder == -3
    assert st.row("D").bye_points == 3
    assert st.row("A").table_mates == 0
    assert st.order == ("A", "C", "B", "E", "D")


def test_mean_bye_points() -> None:
    st = standings(PLAYERS, [G1, G2], [R1, R2], bye_points="mean")
    # D's mean over one game is −6, so the bye is worth −6: −12; the same for E.
    assert st.row("D").ladder == -12 and st.row("E").ladder == -12
    # B's table-mates: (15 + 3 − 12) + (−12 + 3 + 15) = 12
    assert st.row("B").table_mates == 12


def test_split_points_stay_exact() -> None:
    # Three winners share +12 (4 each); the top two tie and split the +3 bonus: 4 + 3/2.
    g = game("g3", 1, ("A", "B", "C", "D"), (200, 200, 10, -410))
    assert dict(g.points) == {
        "A": Fraction(11, 2),
        "B": Fraction(11, 2),
        "C": 4,
        "D": -12,
    }
    st = standings(["A", "B", "C", "D"], [g], [])
    assert st.row("A").ladder == Fraction(11, 2)
    assert st.row("A").rank == st.row("B").rank == 1  # tied on every key
    assert to_json(st)[0]["ladder"] == "11/2" and to_json(st)[0]["ladder_display"] == "5.50"


def test_forfeit_from_events() -> None:
    """B abandons (R-ABANDON −30); a house bot finishes the seat and wins it 4 points."""
    created = GameCreated("g9", RULES, ("A", "B", "C", "D"), "c" * 64, "", "king-shuffle/1", "g9")
    ended = GameEnded(
        totals=(300, 100, -150, -250),
        winners=(0, 1),
        ladder_points=(Fraction(9), Fraction(6), Fraction(-6), Fraction(-6)),
        king=None,
        results=(
            SeatResult(0, "A", Fraction(9)),
            SeatResult(1, "B", Fraction(-30)),
            SeatResult(1, "house-bot-1", Fraction(6)),
            SeatResult(2, "C", Fraction(-6)),
            SeatResult(3, "D", Fraction(-6)),
        ),
    )
    res = result_from_events(1, created, ended, [SeatAbandoned(1, "B", "timeouts")])
    st = standings(["A", "B", "C", "D"], [res], [])
    b = st.row("B")
    assert (b.ladder, b.games, b.forfeits, b.wins, b.game_points) == (-30, 1, 1, 0, 100)
    assert "house-bot-1" not in st.order
    assert st.order[-1] == "B"


def test_exports() -> None:
    st = standings(PLAYERS, [G1, G2], [R1, R2])
    assert to_csv(st).splitlines() == [
        "rank,player,ladder,game_points,table_mates,wins,games,byes,forfeits,ladder_exact,table_mates_exact",
        "1,A,15.00,550,-6.00,2,2,0,0,15,-6",
        "2,C,3.00,170,18.00,1,2,0,0,3,18",
        "3,B,0.00,-200,24.00,1,2,0,0,0,24",
        "4,E,-6.00,-200,18.00,0,1,1,0,-6,18",
        "5,D,-6.00,-320,18.00,0,1,1,0,-6,18",
    ]
    first = to_json(st)[0]
    assert first == {
        "rank": 1,
        "player": "A",
        "ladder": "15",
        "ladder_display": "15.00",
        "game_points": 550,
        "table_mates": "-6",
        "table_mates_display": "-6.00",
        "wins": 2,
        "games": 2,
        "byes": 0,
        "bye_points": "0",
        "forfeits": 0,
    }


def test_two_decimals() -> None:
    assert two_decimals(Fraction(-15, 2)) == "-7.50"
    assert two_decimals(Fraction(1, 3)) == "0.33"
    assert two_decimals(Fraction(2, 3)) == "0.67"
    assert two_decimals(Fraction(-1, 8)) == "-0.13"
    assert two_decimals(Fraction(-1, 1000)) == "0.00"
    assert two_decimals(Fraction(12)) == "12.00"
