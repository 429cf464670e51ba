"""`python -m bench cli`: how long `king` takes to start, beside a bare interpreter.

Times whole processes, alternating: `python -c pass` (the peer), `king --help`, and
`king record check` on a short record (a partial game from the conformance suite, so the
check itself is a few milliseconds) and on a whole standard20 game. Medians of several runs,
and each as a multiple of the bare interpreter's start. The target (issue 19): `king --help`
and `king record check` within 4x. Run as installed (`.venv/bin/king`), with bytecode
caching as the environment has it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
SHORT_RECORD = ROOT / "tests" / "conformance" / "04-partial.json"
WHOLE_RECORD = ROOT / "tests" / "conformance" / "01-standard20-shuffled.json"
TARGET = 4.0


def _king() -> list[str]:
    """The installed `king` script beside this interpreter, else the module."""
    script = Path(sys.executable).with_name("king")
    if script.exists():
        return [str(script)]
    found = shutil.which("king")
    return [found] if found else [sys.executable, "-m", "services.cli"]


def commands() -> dict[str, list[str]]:
    king = _king()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "king --help": [*king, "--help"],
        "king record check (partial game)": [*king, "record", "check", str(SHORT_RECORD)],
        "king record check (standard20 game)": [*king, "record", "check", str(WHOLE_RECORD)],
    }


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, Any]:
    todo = commands()
    samples: dict[str, list[float]] = {name: [] for name in todo}
    for argv in todo.values():  # a first run of each warms the caches (and writes bytecode)
        _time(argv)
    for _ in range(runs):
        for name, argv in todo.items():
            samples[name].append(_time(argv))
    medians = {name: statistics.median(v) for name, v in samples.items()}
    bare = medians["python -c pass"]
    ratios = {name: m / bare for name, m in medians.items()}
    judged = ("king --help", "king record check (partial game)")
    return {
        "benchmark": "cli",
        "unit": "seconds from process start to exit (median)",
        "runs": runs,
        "median": medians,
        "samples": samples,
        "ratio_to_bare_python": ratios,
        "target": f"king --help and king record check within {TARGET:g}x python -c pass",
        "target_met": all(ratios[name] <= TARGET for name in judged),
        # PYTHONDONTWRITEBYTECODE (CI sets it): each run compiles what has no cached bytecode,
        # tens of milliseconds an installed `king` does not pay.
        "bytecode_cached": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cli", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    result = measure(args.runs)
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return 0
    print(f"cli: {result['unit']}; {args.runs} runs each, alternating")
    print(f"{'command':<40}{'seconds':>9}{'vs python':>11}")
    for name, seconds in result["median"].items():
        print(f"{name:<40}{seconds:>9.3f}{result['ratio_to_bare_python'][name]:>10.1f}x")
    print(f"target: {result['target']}: {'met' if result['target_met'] else 'NOT met'}")
    if not result["bytecode_cached"]:
        print("PYTHONDONTWRITEBYTECODE is set: the figures include compiling every changed module")
    return 0
