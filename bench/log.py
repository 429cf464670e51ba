"""`python -m bench log [--json] [--quick] [--postgres]`: transparency-log checkpoint and proof
times at 10^4, 10^5 and 10^6 leaves.

The trees are written straight into `log_nodes` (every perfect subtree of random leaves, as
`LogTree.integrate` would have written them), not through 10^6 appends. Then, medians of
many calls: a signed checkpoint (the tree's size row, the O(log n) nodes of the root, an
Ed25519 signature), an inclusion proof of a random leaf, a consistency proof from a random
earlier size. A proof reads O(log n) nodes in one query, so the times should grow with
log n: the printout sets each size's time beside the smallest size's and log n's ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get(
    "KING_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def build(store: Any, size: int) -> None:
    """Every node of a tree of `size` random leaves, and its size."""
    from sqlalchemy import update

    from eventstore.merkle import CompactTree
    from eventstore.tables import LOG_NODES, LOG_SIZE

    tree = CompactTree()
    rows: list[dict[str, Any]] = []
    with store.engines.write.begin() as conn:
        for _ in range(size):
            rows += [
                {"level": lv, "idx": ix, "hash": h}
                for (lv, ix), h in tree.append(random.randbytes(32))
            ]
            if len(rows) >= 20_000:
                conn.execute(LOG_NODES.insert(), rows)
                rows = []
        if rows:
            conn.execute(LOG_NODES.insert(), rows)
        conn.execute(update(LOG_SIZE).values(size=size))


def timed(fn: Any, calls: int) -> float:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def measure(store: Any, size: int, calls: int) -> dict[str, float]:
    from services.tlog.notes import Signer
    from services.tlog.service import TransparencyLog

    log = TransparencyLog(store, Signer.generate("bench.local/log"))
    rng = random.Random(size)
    build(store, size)
    log.checkpoint()  # warm
    return {
        "checkpoint_ms": timed(log.checkpoint, calls),
        "inclusion_ms": timed(lambda: log.inclusion(rng.randrange(size), size), calls),
        "consistency_ms": timed(lambda: log.consistency(rng.randrange(1, size), size), calls),
    }


def run(sizes: list[int], calls: int, postgres: bool) -> dict[str, Any]:
    from eventstore import EventStore, StoreSettings

    out: dict[str, Any] = {"sizes": sizes, "calls": calls, "sqlite": {}, "postgresql": {}}
    base = ROOT / "var"
    base.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-log-", dir=base))
    try:
        for size in sizes:
            store = EventStore.open(f"sqlite:///{work / f'log-{size}.db'}")
            out["sqlite"][size] = measure(store, size, calls)
            store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if postgres:
        import sqlalchemy as sa

        for size in sizes:
            schema = f"bench_log_{uuid.uuid4().hex[:10]}"
            store = EventStore.open(PG_URL, settings=StoreSettings(pg_schema=schema), create=True)
            try:
                out["postgresql"][size] = measure(store, size, calls)
            finally:
                store.close()
                engine = sa.create_engine(PG_URL)
                with engine.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                engine.dispose()
    return out


def _print(result: dict[str, Any]) -> None:
    sizes = result["sizes"]
    print(f"transparency log: medians of {result['calls']} calls, milliseconds")
    for backend in ("sqlite", "postgresql"):
        rows = result[backend]
        if not rows:
            continue
        print(f"\n  {backend}")
        print(
            f"  {'leaves':>10}{'checkpoint':>12}{'inclusion':>11}{'consistency':>13}"
            f"{'log n / log n0':>16}"
        )
        first = sizes[0]
        for size in sizes:
            r = rows[size]
            ratio = math.log2(size) / math.log2(first)
            print(
                f"  {size:>10,}{r['checkpoint_ms']:>12.3f}{r['inclusion_ms']:>11.3f}"
                f"{r['consistency_ms']:>13.3f}{ratio:>16.2f}"
            )
        big, small = rows[sizes[-1]], rows[first]
        growth = ", ".join(f"{k.removesuffix('_ms')} x{big[k] / small[k]:.2f}" for k in small)
        logs = math.log2(sizes[-1]) / math.log2(first)
        print(f"  growth, smallest to largest: {growth} (log n x{logs:.2f})")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench log", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quick", action="store_true", help="10^3 to 10^5 leaves, fewer calls")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL too")
    args = parser.parse_args(argv)
    sizes = [10**3, 10**4, 10**5] if args.quick else [10**4, 10**5, 10**6]
    result = run(sizes, 50 if args.quick else 200, args.postgres)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0
