"""Small finite fields GF(p^k) for the block designs (GF(4) for affine planes, GF(q) for the
cyclic designs with byes).

An element is an int 0..q-1 whose base-p digits are the coefficients of a polynomial over GF(p)
(lowest digit = constant term); arithmetic is modulo the smallest monic irreducible polynomial
of degree k, found by trial, so the field (and every design built on it) is the same on every
run. In GF(2^k) addition is XOR.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, k) with q = p**k and p prime, or None."""
    if q < 2:
        return None
    p = next(d for d in range(2, q + 1) if q % d == 0)
    k, r = 0, q
    while r % p == 0:
        r //= p
        k += 1
    return (p, k) if r == 1 else None


def _digits(x: int, p: int, k: int) -> list[int]:
    out = []
    for _ in range(k):
        out.append(x % p)
        x //= p
    return out


def _number(digits: list[int], p: int) -> int:
    x = 0
    for d in reversed(digits):
        x = x * p + d
    return x


def _poly_mulmod(a: list[int], b: list[int], modulus: list[int], p: int) -> list[int]:
    """a*b mod the monic `modulus` (coefficient lists, lowest first), over GF(p)."""
    k = len(modulus) - 1
    prod = [0] * (2 * k)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                prod[i + j] = (prod[i + j] + x * y) % p
    for i in range(len(prod) - 1, k - 1, -1):
        c = prod[i]
        if c:
            for j in range(k + 1):
                prod[i - k + j] = (prod[i - k + j] - c * modulus[j]) % p
    return prod[:k]


def _irreducible(p: int, k: int) -> list[int]:
    """The smallest monic polynomial of degree k with no root and no factor of lower degree."""
    if k == 1:
        return [0, 1]
    for tail in range(p**k):
        poly = [*_digits(tail, p, k), 1]
        if _is_irreducible(poly, p):
            return poly
    raise AssertionError("there is always an irreducible polynomial")  # pragma: no cover


def _is_irreducible(poly: list[int], p: int) -> bool:
    k = len(poly) - 1
    # Brute force: no monic factor of degree 1..k//2 divides it (tiny fields only).
    for deg in range(1, k // 2 + 1):
        for tail in range(p**deg):
            factor = [*_digits(tail, p, deg), 1]
            if _divides(factor, poly, p):
                return False
    return True


def _divides(f: list[int], g: list[int], p: int) -> bool:
    r = list(g)
    df = len(f) - 1
    for i in range(len(r) - 1, df - 1, -1):
        c = r[i]
        if c:
            for j in range(df + 1):
                r[i - df + j] = (r[i - df + j] - c * f[j]) % p
    return not any(r[:df])


@dataclass(frozen=True, slots=True)
class Field:
    """GF(q) with log/antilog tables: multiplication is two lookups."""

    q: int
    p: int
    k: int
    exp: tuple[int, ...]  # exp[i] = g**i for a fixed primitive element g, i in 0..q-2
    log: tuple[int, ...]  # log[x] for x != 0 (log[0] unused)

    def add(self, a: int, b: int) -> int:
        if self.p == 2:
            return a ^ b
        if self.k == 1:
            return (a + b) % self.p
        da, db = _digits(a, self.p, self.k), _digits(b, self.p, self.k)
        return _number([(x + y) % self.p for x, y in zip(da, db, strict=True)], self.p)

    def neg(self, a: int) -> int:
        if self.p == 2:
            return a
        return _number([(-x) % self.p for x in _digits(a, self.p, self.k)], self.p)

    def mul(self, a: int, b: int) -> int:
        if a == 0 or b == 0:
            return 0
        return self.exp[(self.log[a] + self.log[b]) % (self.q - 1)]

    def power(self, i: int) -> int:
        """g**i for the field's primitive element g."""
        return self.exp[i % (self.q - 1)]


@cache
def field(q: int) -> Field:
    """GF(q) for a prime power q (cached: the same object for the same q)."""
    pk = prime_power(q)
    if pk is None:
        raise ValueError(f"{q} is not a prime power")
    p, k = pk
    modulus = _irreducible(p, k)
    elements = [_digits(x, p, k) for x in range(q)]
    one = [1] + [0] * (k - 1)
    for g in range(2, q) if q > 2 else [1]:
        exp, cur, seen = [1], one, {1}
        for _ in range(q - 2):
            cur = _poly_mulmod(cur, elements[g], modulus, p)
            x = _number(cur, p)
            if x in seen:
                break
            seen.add(x)
            exp.append(x)
        if len(exp) == q - 1:
            log = [0] * q
            for i, x in enumerate(exp):
                log[x] = i
            return Field(q, p, k, tuple(exp), tuple(log))
    raise AssertionError("every finite field has a primitive element")  # pragma: no cover
