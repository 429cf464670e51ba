"""Head-to-head evaluation of strategies with duplicate deals and rotated seats.

Card luck dwarfs skill in a single game of King, so a match plays every server seed several
times, once per seating of a rotation (two strategies: A B A B then B A B A; more: the pattern
rotated through the four seats), with the same game id, so every seating gets the same hands.
One such group of games is a *duplicate set*; its per-strategy mean ladder points are the
independent samples from which the mean and its 95% confidence interval are computed.
Everything is derived from the match seed, so a match is reproducible (a strategy that stops at
a time budget is not, by nature; give it a fixed rollout count to make it so).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context
from statistics import NormalDist

from domain.playout import play_game
from domain.rules import Rules
from domain.view import Action, SeatView
from tournament.strategies import Strategy, make_strategy


def seat_patterns(n: int) -> list[tuple[int, ...]]:
    """Which strategy (index) sits in each seat, for every game of a duplicate set.

    The four seats cycle through the strategies (A B A B, A B C A, A B C D), then that pattern
    is rotated so each strategy sits in each seat; repeated rotations are dropped.
    """
    if not 1 <= n <= 4:
        raise ValueError("a match takes 1 to 4 strategies")
    base = [i % n for i in range(4)]
    patterns: list[tuple[int, ...]] = []
    for k in range(4):
        p = tuple(base[(s + k) % 4] for s in range(4))
        if p not in patterns:
            patterns.append(p)
    return patterns


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (exact for 1 and 2 degrees of freedom, else a Cornish-Fisher series
    good to about 1e-3 from 3 degrees of freedom)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        a = 4.0 * p * (1.0 - p)
        return (2.0 * p - 1.0) * math.sqrt(2.0 / a)
    z = NormalDist().inv_cdf(p)
    v = float(df)
    z3, z5, z7, z9 = z**3, z**5, z**7, z**9
    return (
        z
        + (z3 + z) / (4 * v)
        + (5 * z5 + 16 * z3 + 3 * z) / (96 * v**2)
        + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v**3)
        + (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v**4)
    )


@dataclass(frozen=True, slots=True)
class Estimate:
    """A sample mean with its 95% confidence half-width (t interval over n samples)."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width


def estimate(samples: Sequence[float], level: float = 0.95) -> Estimate:
    """Mean and confidence half-width; with one sample the width is unknown (infinite)."""
    n = len(samples)
    if n == 0:
        raise ValueError("no samples")
    mean = math.fsum(samples) / n
    if n == 1:
        return Estimate(mean, math.inf, 1)
    var = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    half = t_quantile(0.5 + level / 2, n - 1) * math.sqrt(var / n)
    return Estimate(mean, half, n)


@dataclass(frozen=True, slots=True)
class Timing:
    """Decision times of one strategy (only decisions with a real choice are counted).

    Wall-clock time (time.perf_counter) is what a move's deadline sees; CPU time
    (time.process_time) is what the decision cost on its core, whatever else the machine ran.
    wall_hist / cpu_hist: how many decisions took each whole number of milliseconds (index =
    ms, rounded down), for percentiles without keeping every time.
    """

    decisions: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    cpu_ms: float = 0.0
    max_cpu_ms: float = 0.0
    wall_hist: tuple[int, ...] = ()
    cpu_hist: tuple[int, ...] = ()

    @property
    def p99_ms(self) -> float:
        return _percentile(self.wall_hist, 0.99)

    @property
    def p99_cpu_ms(self) -> float:
        return _percentile(self.cpu_hist, 0.99)

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.decisions if self.decisions else 0.0

    @property
    def mean_cpu_ms(self) -> float:
        return self.cpu_ms / self.decisions if self.decisions else 0.0

    def __add__(self, other: Timing) -> Timing:
        return Timing(
            self.decisions + other.decisions,
            self.total_ms + other.total_ms,
            max(self.max_ms, other.max_ms),
            self.cpu_ms + other.cpu_ms,
            max(self.max_cpu_ms, other.max_cpu_ms),
            _merge(self.wall_hist, other.wall_hist),
            _merge(self.cpu_hist, other.cpu_hist),
        )


def _merge(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if len(a) < len(b):
        a, b = b, a
    return tuple(x + (b[i] if i < len(b) else 0) for i, x in enumerate(a))


def _histogram(times_ms: Sequence[float]) -> tuple[int, ...]:
    counts = [0] * (int(max(times_ms, default=-1.0)) + 1)
    for t in times_ms:
        counts[int(t)] += 1
    return tuple(counts)


def _percentile(hist: tuple[int, ...], q: float) -> float:
    """The q-quantile of the times counted in `hist`, as the upper edge of its 1 ms bucket."""
    n = sum(hist)
    if not n:
        return 0.0
    need = q * n
    seen = 0
    for ms, count in enumerate(hist):
        seen += count
        if seen >= need:
            return float(ms + 1)
    return float(len(hist))


@dataclass(frozen=True, slots=True)
class SetResult:
    """One duplicate set: each strategy's mean ladder points per game, and its timing."""

    index: int
    means: tuple[float, ...]
    timings: tuple[Timing, ...]


@dataclass(frozen=True, slots=True)
class StrategyResult:
    name: str
    points: Estimate
    seat_games: int
    timing: Timing


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The match's figures; `differences[i]` compares strategy 0 with strategy i + 1."""

    strategies: tuple[str, ...]
    seed: int
    rules: Rules
    games: int
    sets: int
    results: tuple[StrategyResult, ...]
    differences: tuple[Estimate, ...]
    set_results: tuple[SetResult, ...] = field(repr=False)

    def to_dict(self) -> dict[str, object]:
        def est(e: Estimate) -> dict[str, float | int | None]:
            half = e.half_width if math.isfinite(e.half_width) else None
            return {"mean": e.mean, "ci95": half, "n": e.n}

        return {
            "strategies": list(self.strategies),
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "games": self.games,
            "duplicate_sets": self.sets,
            "results": [
                {
                    "strategy": r.name,
                    "ladder_points_per_game": est(r.points),
                    "seat_games": r.seat_games,
                    "decisions": r.timing.decisions,
                    "ms_per_decision": r.timing.mean_ms,
                    "max_ms_per_decision": r.timing.max_ms,
                    "cpu_ms_per_decision": r.timing.mean_cpu_ms,
                    "max_cpu_ms_per_decision": r.timing.max_cpu_ms,
                    "p99_ms_per_decision": r.timing.p99_ms,
                    "p99_cpu_ms_per_decision": r.timing.p99_cpu_ms,
                }
                for r in self.results
            ],
            "differences": [
                {"a": self.strategies[0], "b": self.strategies[i + 1], **est(d)}
                for i, d in enumerate(self.differences)
            ],
        }


class _Timed:
    """A strategy wrapped to time its decisions (those with more than one legal action)."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy
        self.walls: list[float] = []
        self.cpus: list[float] = []

    @property
    def timing(self) -> Timing:
        walls, cpus = self.walls, self.cpus
        return Timing(
            len(walls),
            math.fsum(walls),
            max(walls, default=0.0),
            math.fsum(cpus),
            max(cpus, default=0.0),
            _histogram(walls),
            _histogram(cpus),
        )

    def __call__(self, view: SeatView) -> Action:
        if len(view.legal) == 1:
            return view.legal[0]
        t, cpu = time.perf_counter(), time.process_time()
        action = self.strategy(view)
        ms = (time.perf_counter() - t) * 1000.0
        cpu_ms = (time.process_time() - cpu) * 1000.0
        self.walls.append(ms)
        self.cpus.append(cpu_ms)
        return action


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()


@dataclass(frozen=True, slots=True)
class _SetTask:
    strategies: tuple[str, ...]
    seed: int
    index: int
    rules: Rules
    options: tuple[tuple[str, float | None], ...]


def play_set(task: _SetTask) -> SetResult:
    """Play one duplicate set: the same server seed and game id under every seating."""
    n = len(task.strategies)
    server_seed = _digest("king-match", task.seed, task.index)[:32]
    game_id = f"match-{task.seed}-{task.index}"
    points: list[list[float]] = [[] for _ in range(n)]
    timings = [Timing() for _ in range(n)]
    options = dict(task.options)
    for rot, pattern in enumerate(seat_patterns(n)):
        timed = [
            _Timed(
                make_strategy(
                    task.strategies[pattern[seat]],
                    int.from_bytes(_digest(task.seed, task.index, rot, seat)[:8], "big"),
                    **options,
                )
            )
            for seat in range(4)
        ]
        players = [f"{task.strategies[pattern[s]]}@{s}" for s in range(4)]
        state, _ = play_game(game_id, players, server_seed, timed, task.rules, reveal=False)
        assert state.result is not None
        for seat in range(4):
            i = pattern[seat]
            points[i].append(float(state.result.ladder_points[seat]))
            timings[i] = timings[i] + timed[seat].timing
    means = tuple(math.fsum(p) / len(p) for p in points)
    return SetResult(task.index, means, tuple(timings))


def summarize(
    strategies: Sequence[str], seed: int, rules: Rules, sets: Sequence[SetResult]
) -> MatchResult:
    """Means and confidence intervals from the duplicate sets' results."""
    n = len(strategies)
    per_set_games = len(seat_patterns(n))
    seat_counts = [0] * n
    for pattern in seat_patterns(n):
        for i in pattern:
            seat_counts[i] += 1
    results = []
    for i, name in enumerate(strategies):
        timing = Timing()
        for s in sets:
            timing = timing + s.timings[i]
        points = estimate([s.means[i] for s in sets])
        results.append(StrategyResult(name, points, seat_counts[i] * len(sets), timing))
    differences = tuple(estimate([s.means[0] - s.means[j] for s in sets]) for j in range(1, n))
    return MatchResult(
        tuple(strategies),
        seed,
        rules,
        per_set_games * len(sets),
        len(sets),
        tuple(results),
        differences,
        tuple(sets),
    )


def sets_for(games: int, n: int) -> int:
    """The duplicate sets needed for at least `games` games (at least one set)."""
    per = len(seat_patterns(n))
    return max(1, -(-games // per))


def iter_sets(
    strategies: Sequence[str],
    games: int,
    seed: int,
    rules: Rules | None = None,
    workers: int = 1,
    **options: float | None,
) -> Iterator[SetResult]:
    """The duplicate sets' results in order, as they finish (across `workers` processes)."""
    for name in strategies:
        make_strategy(name, 0, **options)  # fail early on an unknown name or option
    tasks = [
        _SetTask(tuple(strategies), seed, i, rules or Rules(), tuple(sorted(options.items())))
        for i in range(sets_for(games, len(strategies)))
    ]
    if workers <= 1:
        yield from map(play_set, tasks)
        return
    with get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(play_set, tasks)


def run_match(
    strategies: Sequence[str],
    games: int,
    seed: int,
    rules: Rules | None = None,
    workers: int = 1,
    progress: Callable[[SetResult], None] | None = None,
    **options: float | None,
) -> MatchResult:
    """Play `strategies` (1-4 names) against each other over at least `games` games.

    Options (e.g. budget_ms=250, rollouts=40) go to the strategies that take them.
    """
    done: list[SetResult] = []
    for result in iter_sets(strategies, games, seed, rules, workers, **options):
        done.append(result)
        if progress is not None:
            progress(result)
    return summarize(strategies, seed, rules or Rules(), done)
