"""`python -m bench engine`: random legal deals through the rules engine, beside OpenSpiel Hearts.

Both engines play one deal at a time on one core, with a uniformly random legal card each turn,
through their Python APIs, in the same run. Every King deal here is played with early end off
(`Rules(end_early=False)`), so it is 52 plays like a Hearts deal. Two ways to count a deal:

- **deal included** (the target's measure): from a fresh random deal to its end. OpenSpiel deals
  through its 52 chance nodes, the only way its API offers; King's hands come from a shuffle.
- **play only**: from an already-dealt state to the end, the deal made outside the timer; this
  isolates the play loop, where OpenSpiel's C++ core is at its strongest.

Engines:
- king rollout   — `domain.deal.rollout` (what Monte Carlo bots use);
- king play      — `domain.deal.play` building an immutable state per card;
- king events    — whole games through `decide`/`apply`, every event built and checked
                   (default rules, so early end included);
- openspiel      — `pyspiel` Hearts with `pass_cards=False`: `legal_actions()` /
                   `apply_action()` to the end.

Rounds alternate between the engines so machine noise hits them alike; medians are reported,
with the ratio to OpenSpiel's deals per second on the same measure. The targets, deal included:
king rollout >= 1.5x, and king events (whole games through decide/apply) >= 1x.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any, Protocol

import orjson

from domain.cards import cards_of
from domain.contracts import ALL_CONTRACTS
from domain.deal import legal_mask, new_deal, play, rollout
from domain.game import CompletedDeal
from domain.playout import play_game
from domain.rules import Rules

PLAYERS = ("ada", "bora", "cem", "deniz")


class Runner(Protocol):
    def __call__(self, seconds: float, seed: int = 1) -> tuple[int, float]: ...


def _random_hands(rng: random.Random, deck: list[int]) -> tuple[int, int, int, int]:
    rng.shuffle(deck)
    h = [0, 0, 0, 0]
    for k, c in enumerate(deck):
        h[k & 3] |= 1 << c
    return h[0], h[1], h[2], h[3]


FULL_DEALS = Rules(end_early=False)  # 52 plays a deal, like Hearts
BATCH = 256  # dealt states made outside the timer per batch of the play-only measure


def king_rollout(seconds: float, seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(52))
    rules = FULL_DEALS

    def pick(_seat: int, mask: int) -> int:
        return choice(cards_of(mask))

    deals, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        hands = _random_hands(rng, deck)
        rollout(new_deal(rules, choice(ALL_CONTRACTS), rng.randrange(4), hands), pick)
        deals += 1
    return deals, elapsed


def king_rollout_play_only(seconds: float, seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(52))

    def pick(_seat: int, mask: int) -> int:
        return choice(cards_of(mask))

    deals, spent = 0, 0.0
    while spent < seconds:
        batch = [
            new_deal(FULL_DEALS, choice(ALL_CONTRACTS), rng.randrange(4), _random_hands(rng, deck))
            for _ in range(BATCH)
        ]
        start = time.perf_counter()
        for st in batch:
            rollout(st, pick)
        spent += time.perf_counter() - start
        deals += BATCH
    return deals, spent


def king_play(seconds: float, seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(52))
    rules = FULL_DEALS
    deals, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        st = new_deal(rules, choice(ALL_CONTRACTS), rng.randrange(4), _random_hands(rng, deck))
        while not st.over:
            st = play(st, choice(cards_of(legal_mask(st))))
        deals += 1
    return deals, elapsed


def king_events(seconds: float, seed: int = 1) -> tuple[int, float]:
    """Whole games through decide/apply (seat views, events, derived facts checked)."""
    rng = random.Random(seed)
    policies = [lambda v: rng.choice(v.legal)] * 4
    deals, games, start = 0, 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        state, _ = play_game(f"b{games}", PLAYERS, rng.randbytes(32), policies, reveal=False)
        deals += sum(1 for d in state.completed if isinstance(d, CompletedDeal))
        games += 1
    return deals, elapsed


def openspiel_hearts(seconds: float, seed: int = 1) -> tuple[int, float]:
    import pyspiel

    game = pyspiel.load_game("hearts", {"pass_cards": False})
    rng = random.Random(seed)
    choice = rng.choice
    deals, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(choice(state.chance_outcomes())[0])
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
        deals += 1
    return deals, elapsed


def openspiel_hearts_play_only(seconds: float, seed: int = 1) -> tuple[int, float]:
    import pyspiel

    game = pyspiel.load_game("hearts", {"pass_cards": False})
    rng = random.Random(seed)
    choice = rng.choice
    deals, spent = 0, 0.0
    while spent < seconds:
        batch = []
        for _ in range(BATCH):
            state = game.new_initial_state()
            while state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
            batch.append(state)
        start = time.perf_counter()
        for state in batch:
            while not state.is_terminal():
                state.apply_action(choice(state.legal_actions()))
        spent += time.perf_counter() - start
        deals += BATCH
    return deals, spent


def _openspiel_available() -> str | None:
    try:
        import pyspiel  # noqa: F401
    except ImportError as exc:
        return f"OpenSpiel is not installed ({exc}); pip install -e '.[bench]'"
    return None


# (name, runner, measure, peer on the same measure)
ENGINES: tuple[tuple[str, Runner, str, str], ...] = (
    ("king rollout", king_rollout, "deal included", "openspiel hearts"),
    ("king play", king_play, "deal included", "openspiel hearts"),
    ("king events", king_events, "deal included", "openspiel hearts"),
    ("openspiel hearts", openspiel_hearts, "deal included", "openspiel hearts"),
    ("king rollout", king_rollout_play_only, "play only", "openspiel hearts"),
    ("openspiel hearts", openspiel_hearts_play_only, "play only", "openspiel hearts"),
)


# (engine and measure, the least ratio to OpenSpiel's deals per second on the same measure):
# the rollout bots' path, and whole games through decide/apply (issue 19's target).
TARGETS = (("king rollout (deal included)", 1.5), ("king events (deal included)", 1.0))


def measure(rounds: int, seconds: float) -> dict[str, Any]:
    missing = _openspiel_available()
    engines = [e for e in ENGINES if missing is None or not e[0].startswith("openspiel")]
    rates: dict[str, list[float]] = {f"{name} ({how})": [] for name, _, how, _ in engines}
    for r in range(rounds):
        for name, run, how, _ in engines:
            deals, elapsed = run(seconds, seed=r + 1)
            rates[f"{name} ({how})"].append(deals / elapsed)
    medians = {key: statistics.median(v) for key, v in rates.items()}
    ratios: dict[str, float] = {}
    for name, _, how, peer in engines:
        peer_rate = medians.get(f"{peer} ({how})")
        if peer_rate:
            ratios[f"{name} ({how})"] = medians[f"{name} ({how})"] / peer_rate
    targets = []
    for key, at_least in TARGETS:
        met = ratios[key] >= at_least if key in ratios else None
        targets.append({"target": f"{key} >= {at_least:g}x openspiel hearts", "met": met})
    target_key = "king rollout (deal included)"
    return {
        "benchmark": "engine",
        "unit": "deals per second (one core, random legal play, 52 plays a deal)",
        "rounds": rounds,
        "seconds_per_round": seconds,
        "median": medians,
        "samples": rates,
        "ratio_to_openspiel": ratios or None,
        "target": "king rollout (deal included) >= 1.5x openspiel hearts (deal included)",
        "target_met": ratios[target_key] >= 1.5 if target_key in ratios else None,
        "targets": targets,
        "note": missing,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench engine", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per engine per round")
    args = parser.parse_args(argv)
    result = measure(args.rounds, args.seconds)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    ratios = result["ratio_to_openspiel"] or {}
    print(f"engine: {result['unit']}; median of {args.rounds} rounds x {args.seconds:g} s")
    print(f"{'engine':<34}{'deals/s':>10}{'vs OpenSpiel':>14}")
    for name, rate in result["median"].items():
        ratio = f"{ratios[name]:.2f}x" if name in ratios else "-"
        print(f"{name:<34}{rate:>10,.0f}{ratio:>14}")
    if result["note"]:
        print(result["note"])
    for target in result["targets"]:
        met = {True: "met", False: "NOT met", None: "not measured"}[target["met"]]
        print(f"target: {target['target']}: {met}")
    return 0
