"""`python -m bench engine`: random legal deals through the rules engine, beside OpenSpiel Hearts.

Both engines play one deal at a time on one core, from a fresh random deal to its end, with a
uniformly random legal card each turn, through their Python APIs, in the same run:

- king rollout   — `domain.deal.rollout` (what Monte Carlo bots use);
- king play      — `domain.deal.play` building an immutable state per card;
- king events    — whole games through `decide`/`apply`, every event built and checked;
- openspiel      — `pyspiel` Hearts with `pass_cards=False`: the deal through its chance
                   nodes, then `legal_actions()` / `apply_action()` to the end.

Rounds alternate between the engines so machine noise hits them alike; medians are reported,
with the ratio to OpenSpiel's deals per second. The target is king rollout >= 1.5x.
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


def king_rollout(seconds: float, seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(52))
    rules = Rules()

    def pick(_seat: int, mask: int) -> int:
        return choice(cards_of(mask))

    deals, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        hands = _random_hands(rng, deck)
        rollout(new_deal(rules, choice(ALL_CONTRACTS), rng.randrange(4), hands), pick)
        deals += 1
    return deals, elapsed


def king_play(seconds: float, seed: int = 1) -> tuple[int, float]:
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(52))
    rules = Rules()
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


def _openspiel_available() -> str | None:
    try:
        import pyspiel  # noqa: F401
    except ImportError as exc:
        return f"OpenSpiel is not installed ({exc}); pip install -e '.[bench]'"
    return None


def measure(rounds: int, seconds: float) -> dict[str, Any]:
    runners: dict[str, Runner] = {
        "king rollout": king_rollout,
        "king play": king_play,
        "king events": king_events,
    }
    missing = _openspiel_available()
    if missing is None:
        runners["openspiel hearts"] = openspiel_hearts
    rates: dict[str, list[float]] = {name: [] for name in runners}
    for r in range(rounds):
        for name, run in runners.items():
            deals, elapsed = run(seconds, seed=r + 1)
            rates[name].append(deals / elapsed)
    medians = {name: statistics.median(v) for name, v in rates.items()}
    peer = medians.get("openspiel hearts")
    return {
        "benchmark": "engine",
        "unit": "deals per second (one core, random legal play, deal included)",
        "rounds": rounds,
        "seconds_per_round": seconds,
        "median": medians,
        "samples": rates,
        "ratio_to_openspiel": {n: m / peer for n, m in medians.items()} if peer else None,
        "target": "king rollout >= 1.5x openspiel hearts",
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
    print(f"{'engine':<18}{'deals/s':>12}{'vs OpenSpiel':>14}")
    for name, rate in result["median"].items():
        ratio = f"{ratios[name]:.2f}x" if name in ratios else "-"
        print(f"{name:<18}{rate:>12,.0f}{ratio:>14}")
    if result["note"]:
        print(result["note"])
    print(f"target: {result['target']}")
    return 0
