"""Resolvable block designs for round-robins of tables of four, built from finite fields.

* `affine_space(k)`: AG(k, 4), the points GF(4)^k (4^k players) and its lines. The lines with
  one direction form a parallel class, i.e. one round; there are (4^k − 1)/3 directions and any
  two points lie on exactly one line, so over the (4^k − 1)/3 rounds every pair of players
  shares a table exactly once. k = 2 is the affine plane of order 4: 16 players, 5 rounds.
* `cyclic_bye_design(q)`: q ≡ 1 (mod 4) a prime power, q = 4m + 1 players, one bye a round.
  Round 0 seats the multiplicative cosets ω^i·⟨ε⟩ (ε = ω^m, a 4th root of unity,
  i = 0..m−1) and gives 0 the bye; round g adds g to everything. The twelve differences of a
  block a·{1, ε, −1, −ε} are a(ε−1)⟨ε⟩ twice and 2a⟨ε⟩ once, and the cosets cover GF(q)*
  once, so every non-zero difference occurs exactly three times: over the q rounds every pair
  meets exactly 3 times and every player has exactly one bye.

* `rotational_design(n)`: for sizes with a stored base round, a 1-rotational design with
  λ = 3: n = 4m players on Z_(n−1) ∪ {∞} (n − 1 rounds, no byes), or n = 4m + 1 on Z_n (n
  rounds, one bye a round). Round g adds g (mod the group order) to every finite point of the
  base round; the base round's differences cover every non-zero residue exactly three times
  (the ∞ block contributes its three finite points: ∞ then meets everyone three times), so
  every pair meets exactly 3 times. Like a whist tournament (partner once, opponent twice) in
  its meeting counts. The base rounds were found once by a seeded local search over
  partitions (minimising Σ(count(δ) − 3)² over differences δ) and are stored below.

* `kirkman_design(n)`: n ≡ 4 (mod 12) players (28, …), a resolvable design with λ = 1 in
  (n − 1)/3 rounds, as AG(k, 4) gives for 16 and 64. With t = (n − 1)/3 (odd), the points are
  Z_t × {0, 1, 2} ∪ {∞}; round g adds g to the Z_t coordinate of the stored base round, whose
  first block is ∞ with one point of each orbit. The base round covers each "pure" difference
  ±δ within an orbit and each "mixed" difference between two orbits exactly once, so every
  pair meets exactly once. Base rounds found once by a seeded search, stored below.

All of these are checked by `Design.meetings()` in the tests and by `check()` when built: not
trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tournament.pairing.gf import field, prime_power

Block = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Design:
    """Rounds of tables (blocks of point numbers 0..points−1) and byes; every pair of points
    shares a block exactly `lam` times over all the rounds."""

    name: str
    points: int
    rounds: tuple[tuple[Block, ...], ...]
    byes: tuple[Block, ...]
    lam: int

    def meetings(self) -> dict[tuple[int, int], int]:
        out: dict[tuple[int, int], int] = {}
        for blocks in self.rounds:
            for block in blocks:
                for i, a in enumerate(block):
                    for b in block[i + 1 :]:
                        key = (a, b) if a < b else (b, a)
                        out[key] = out.get(key, 0) + 1
        return out


@cache
def affine_space(k: int) -> Design:
    """AG(k, 4): points are vectors over GF(4) packed two bits a coordinate (so vector
    addition is XOR); a round is the set of lines {p + t·d : t ∈ GF(4)} of one direction d."""
    if k < 1:
        raise ValueError("AG(k, 4) needs k >= 1")
    gf4 = field(4)
    size = 4**k

    def scale(t: int, v: int) -> int:
        out = 0
        for c in range(k):
            out |= gf4.mul(t, (v >> (2 * c)) & 3) << (2 * c)
        return out

    def leading(v: int) -> int:
        c = k - 1
        while (v >> (2 * c)) & 3 == 0:
            c -= 1
        return (v >> (2 * c)) & 3

    # One representative per direction: the highest non-zero coordinate equal to 1.
    directions = [v for v in range(1, size) if leading(v) == 1]
    rounds = []
    for d in directions:
        line0 = [scale(t, d) for t in range(4)]
        covered = [False] * size
        blocks = []
        for p in range(size):
            if not covered[p]:
                block = tuple(sorted(p ^ x for x in line0))
                for x in block:
                    covered[x] = True
                blocks.append(block)
        rounds.append(tuple(blocks))
    return Design(f"AG({k},4)", size, tuple(rounds), tuple(() for _ in rounds), 1)


ROTATIONAL_BASES: dict[int, tuple[Block, ...]] = {
    8: ((1, 2, 4), (0, 3, 5, 6)),
    12: ((0, 1, 8), (2, 3, 5, 7), (4, 6, 9, 10)),
    16: ((5, 6, 10), (0, 4, 12, 13), (1, 8, 11, 14), (2, 3, 7, 9)),
    20: ((3, 4, 8), (0, 6, 14, 16), (1, 2, 10, 17), (5, 7, 12, 13), (9, 11, 15, 18)),
    21: ((1, 7, 9, 10), (2, 6, 12, 16), (3, 8, 15, 19), (4, 17, 18, 20), (5, 11, 13, 14)),
    24: (
        (1, 17, 22),
        (0, 2, 6, 13),
        (3, 4, 7, 18),
        (5, 8, 16, 21),
        (9, 10, 15, 19),
        (11, 12, 14, 20),
    ),
    28: (
        (8, 11, 16),
        (0, 9, 21, 26),
        (1, 3, 5, 14),
        (2, 10, 15, 17),
        (4, 19, 20, 23),
        (6, 7, 13, 24),
        (12, 18, 22, 25),
    ),
    32: (
        (12, 20, 28),
        (0, 11, 15, 21),
        (1, 3, 14, 27),
        (2, 6, 13, 18),
        (4, 7, 10, 29),
        (5, 17, 19, 22),
        (8, 9, 26, 30),
        (16, 23, 24, 25),
    ),
    33: (
        (1, 4, 23, 31),
        (2, 7, 9, 22),
        (3, 19, 24, 28),
        (5, 13, 16, 29),
        (6, 8, 10, 20),
        (11, 12, 18, 30),
        (14, 15, 25, 32),
        (17, 21, 26, 27),
    ),
    36: (
        (2, 3, 28),
        (0, 7, 19, 20),
        (1, 13, 29, 31),
        (4, 8, 22, 25),
        (5, 10, 11, 15),
        (6, 14, 21, 33),
        (9, 12, 23, 34),
        (16, 18, 24, 27),
        (17, 26, 30, 32),
    ),
}
"""Base rounds of `rotational_design`. For n = 4m the first block is completed by ∞ (the
point numbered n − 1 in the design); for n = 4m + 1 the point 0 has the bye."""


KIRKMAN_BASES: dict[int, tuple[Block, ...]] = {
    28: (
        (7, 16, 26),
        (0, 17, 21, 22),
        (1, 4, 5, 15),
        (2, 9, 14, 25),
        (3, 18, 20, 23),
        (6, 8, 12, 24),
        (10, 11, 13, 19),
    ),
    40: (
        (0, 13, 26),
        (1, 5, 20, 28),
        (2, 4, 12, 37),
        (3, 10, 14, 24),
        (6, 15, 16, 34),
        (7, 19, 23, 25),
        (8, 9, 27, 38),
        (11, 18, 32, 35),
        (17, 22, 29, 33),
        (21, 30, 31, 36),
    ),
}
"""Base rounds of `kirkman_design`: point (x, i) of Z_t × {0, 1, 2} is numbered i·t + x, ∞ is
3t; the first block is completed by ∞."""


@cache
def kirkman_design(n: int) -> Design:
    """The stored λ = 1 resolvable design for n ≡ 4 (mod 12) players, checked when built."""
    base = KIRKMAN_BASES.get(n)
    if base is None:
        raise ValueError(f"no stored resolvable design for {n} players")
    t = (n - 1) // 3
    rounds: list[tuple[Block, ...]] = []
    for g in range(t):
        blocks = [tuple(sorted((x // t) * t + (x % t + g) % t for x in b)) for b in base]
        blocks[0] = (*blocks[0], 3 * t)
        rounds.append(tuple(blocks))
    design = Design(f"resolvable Z{t}x3+inf", n, tuple(rounds), tuple(() for _ in rounds), 1)
    check(design)
    return design


@cache
def rotational_design(n: int) -> Design:
    """The stored 1-rotational design for n players (λ = 3), checked before it is returned."""
    base = ROTATIONAL_BASES.get(n)
    if base is None:
        raise ValueError(f"no stored rotational design for {n} players")
    with_infinity = n % 4 == 0
    order = n - 1 if with_infinity else n
    rounds: list[tuple[Block, ...]] = []
    byes: list[Block] = []
    for g in range(order):
        blocks = [tuple(sorted((x + g) % order for x in b)) for b in base]
        if with_infinity:
            blocks[0] = (*blocks[0], order)
            byes.append(())
        else:
            byes.append((g,))
        rounds.append(tuple(blocks))
    design = Design(
        f"1-rotational Z{order}{'+inf' if with_infinity else ''}", n, tuple(rounds), tuple(byes), 3
    )
    check(design)
    return design


def check(design: Design) -> None:
    """Raise unless every round seats each point once (or gives it the bye) and every pair
    meets exactly `lam` times."""
    for blocks, out in zip(design.rounds, design.byes, strict=True):
        seen = sorted([x for b in blocks for x in b] + list(out))
        if seen != list(range(design.points)):
            raise AssertionError(f"{design.name}: a round does not seat every point once")
    meetings = design.meetings()
    pairs = design.points * (design.points - 1) // 2
    if len(meetings) != pairs or set(meetings.values()) != {design.lam}:
        raise AssertionError(f"{design.name}: pairs do not all meet {design.lam} times")


@cache
def cyclic_bye_design(q: int) -> Design:
    """The q-round design on GF(q), q ≡ 1 (mod 4) a prime power: one bye a round, λ = 3."""
    if q % 4 != 1 or prime_power(q) is None:
        raise ValueError("q must be a prime power congruent to 1 mod 4")
    f = field(q)
    m = (q - 1) // 4
    base = [tuple(f.power(i + j * m) for j in range(4)) for i in range(m)]
    rounds, byes = [], []
    for g in range(q):
        rounds.append(tuple(tuple(sorted(f.add(x, g) for x in block)) for block in base))
        byes.append((g,))
    return Design(f"cyclic GF({q})", q, tuple(rounds), tuple(byes), 3)


def affine_order(n: int) -> int | None:
    """k when n = 4**k (k >= 1), else None."""
    k, v = 0, 1
    while v < n:
        v *= 4
        k += 1
    return k if v == n and k >= 1 else None
