"""`python -m bench append [--json] [--events N] [--repeats R] [--no-pg]`: what one append costs
this process: CPU (``time.process_time``), Python function calls (cProfile) and SQL statements
(`EventStore.statements`) per single-event append, fenced by a lease as a game driver's are.

The wall time of an append is mostly the disk's fsync (SQLite ``synchronous=FULL``), which is
not the process's work: CPU time is what the service's server CPU per action is made of.
Medians of several runs, each on a fresh store (SQLite in a temp dir; PostgreSQL on a schema
of its own, dropped afterwards, when a server answers).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PG_URL = os.environ.get(
    "KING_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _card(i: int) -> dict[str, Any]:
    return {"seat": i % 4, "card": "QS", "trick": i // 4, "n": i}


def _appends(store: Any, n: int, sid: str, fenced: bool) -> None:
    from eventstore import NewEvent

    lease = store.acquire_lease(f"bench/{sid}", "bench", 600_000) if fenced else None
    for i in range(n):
        store.append(sid, [NewEvent("CardPlayed", _card(i))], i, fence=lease)


def _one_run(open_store: Any, n: int, fenced: bool) -> dict[str, float]:
    store = open_store()
    try:
        _appends(store, 50, "warm", fenced)  # connections, caches, first-stream costs
        sid = f"game-{uuid.uuid4().hex[:8]}"
        before = store.statements
        start = time.process_time()
        _appends(store, n, sid, fenced)
        cpu = time.process_time() - start
        statements = store.statements - before
        profile = cProfile.Profile()
        profile.enable()
        _appends(store, n, sid + "-p", fenced)
        profile.disable()
        calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    finally:
        store.close()
    return {
        "cpu_ms_per_append": cpu * 1000 / n,
        "calls_per_append": calls / n,
        "statements_per_append": statements / n,
    }


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 4) for k in runs[0]}


def _sqlite(n: int, repeats: int, fenced: bool) -> dict[str, float]:
    from eventstore import EventStore

    runs = []
    for _ in range(repeats):
        folder = Path(tempfile.mkdtemp(prefix="bench-append-"))
        try:
            url = f"sqlite:///{folder / 'events.db'}"
            runs.append(_one_run(lambda url=url: EventStore.open(url, create=True), n, fenced))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _median(runs)


def _postgres(n: int, repeats: int, fenced: bool) -> dict[str, float] | None:
    import sqlalchemy as sa

    from eventstore import EventStore, StoreSettings

    try:
        engine = sa.create_engine(PG_URL)
        with engine.connect():
            pass
    except Exception:
        return None
    runs = []
    try:
        for _ in range(repeats):
            settings = StoreSettings(pg_schema=f"bench_append_{uuid.uuid4().hex[:8]}")
            try:
                runs.append(
                    _one_run(
                        lambda s=settings: EventStore.open(PG_URL, settings=s, create=True),
                        n,
                        fenced,
                    )
                )
            finally:
                with engine.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{settings.pg_schema}" CASCADE'))
    finally:
        engine.dispose()
    return _median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench append", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--events", type=int, default=5000, help="appends per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs (the median is reported)")
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"events": args.events, "repeats": args.repeats}
    for fenced in (False, True):
        label = "fenced" if fenced else "plain"
        report[f"sqlite_{label}"] = _sqlite(args.events, args.repeats, fenced)
        if not args.no_pg:
            report[f"postgres_{label}"] = _postgres(args.events, args.repeats, fenced)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.events} single-event appends per run, median of {args.repeats} runs")
    print(f"{'backend':<18} {'CPU ms/append':>14} {'calls/append':>13} {'statements':>11}")
    for key, row in report.items():
        if isinstance(row, dict):
            print(
                f"{key:<18} {row['cpu_ms_per_append']:>14.4f} "
                f"{row['calls_per_append']:>13.1f} {row['statements_per_append']:>11.2f}"
            )
        elif key.startswith(("sqlite", "postgres")):
            print(f"{key:<18} (no server)")
    return 0
