"""Fit the contract-worth model of bidding.py from simulated deals (an offline tool).

`python -m tournament.strategies.calibrate [--hands N] [--seed S]` deals N random hands, plays
each of the ten contracts out with the rollout policy (seat 0 declaring and leading), and fits
by ridge least squares, per kind of contract, the declarer's deal value (own points minus the
others' mean) on the hand's features (bidding.features). It prints the coefficient tables and
baselines that bidding_model.py holds. Pure Python; about a minute per 10,000 hands.
"""

from __future__ import annotations

import argparse
import random
import sys

from domain.contracts import ALL_CONTRACTS, PENALTY_CONTRACTS, TRUMP_CONTRACTS, Contract
from domain.deal import new_deal
from domain.rules import Rules
from tournament.strategies.bidding import features, model_key
from tournament.strategies.rollout import deal_value, rollout


def simulate(hands: int, seed: int) -> list[tuple[int, list[float]]]:
    """(declarer's hand, value of each contract in ALL_CONTRACTS order) per random deal."""
    rng = random.Random(seed)
    rules = Rules()
    rows = []
    deck = list(range(52))
    for _ in range(hands):
        rng.shuffle(deck)
        h = [0, 0, 0, 0]
        for k, c in enumerate(deck):
            h[k % 4] |= 1 << c
        deal = (h[0], h[1], h[2], h[3])
        values = [deal_value(rollout(new_deal(rules, c, 0, deal)), 0) for c in ALL_CONTRACTS]
        rows.append((h[0], values))
    return rows


def ridge(rows: list[tuple[list[int], float]], size: int, lam: float = 1.0) -> list[float]:
    """Least squares with a small ridge on sparse 0/1/count features (given as index lists)."""
    xtx = [[0.0] * size for _ in range(size)]
    xty = [0.0] * size
    for idx, y in rows:
        for i in idx:
            xty[i] += y
            row = xtx[i]
            for j in idx:
                row[j] += 1.0
    for i in range(1, size):
        xtx[i][i] += lam
    return _solve(xtx, xty)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a is symmetric positive definite)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        if abs(p) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / p
            if f:
                mr, mc = m[r], m[col]
                for k in range(col, n + 1):
                    mr[k] -= f * mc[k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        s = m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))
        x[r] = s / m[r][r] if abs(m[r][r]) > 1e-12 else 0.0
    return x


def fit(data: list[tuple[int, list[float]]]) -> dict[str, list[float]]:
    """Coefficients per model key (each penalty contract, and one for all trump suits)."""
    samples: dict[str, list[tuple[list[int], float]]] = {}
    sizes: dict[str, int] = {}
    for hand, values in data:
        for c, v in zip(ALL_CONTRACTS, values, strict=True):
            idx, size = features(hand, c)
            key = model_key(c)
            samples.setdefault(key, []).append((idx, v))
            sizes[key] = size
    return {key: ridge(rows, sizes[key]) for key, rows in samples.items()}


def baselines(
    coef: dict[str, list[float]], data: list[tuple[int, list[float]]]
) -> dict[str, float]:
    """Mean fitted worth over the hands: of each penalty contract, of the best trump suit."""
    sums = dict.fromkeys([c.value for c in PENALTY_CONTRACTS] + ["trump"], 0.0)
    for hand, _ in data:
        for c in PENALTY_CONTRACTS:
            sums[c.value] += _predict(coef, hand, c)
        sums["trump"] += max(_predict(coef, hand, t) for t in TRUMP_CONTRACTS)
    return {k: v / len(data) for k, v in sums.items()}


def _predict(coef: dict[str, list[float]], hand: int, c: Contract) -> float:
    idx, _ = features(hand, c)
    w = coef[model_key(c)]
    return sum(w[i] for i in idx)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    data = simulate(args.hands, args.seed)
    coef = fit(data)
    base = baselines(coef, data)
    out = sys.stdout
    out.write(f"# calibrate --hands {args.hands} --seed {args.seed}\n")
    out.write("COEFFICIENTS: dict[str, tuple[float, ...]] = {\n")
    for key in sorted(coef):
        values = ", ".join(f"{x:.1f}" for x in coef[key])
        out.write(f'    "{key}": ({values}),\n')
    out.write("}\nBASELINES: dict[str, float] = {\n")
    for key in sorted(base):
        out.write(f'    "{key}": {base[key]:.1f},\n')
    out.write("}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
