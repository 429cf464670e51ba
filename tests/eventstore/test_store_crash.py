"""SIGKILL writers mid-append, many times; every acknowledged append survives, nothing is
half-written, and every chain verifies after reopening."""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from test_store_concurrency import check_feed, spawn_writers

from eventstore import EventStore


def _crash_cycles(
    make_store: Callable[..., EventStore],
    target: tuple[str, object],
    tmp_path: Path,
    cycles: int,
) -> None:
    url, settings = target
    schema = getattr(settings, "pg_schema", None) or ""
    make_store()  # migrates the database before the writers open it
    rng = random.Random(7)
    acks = tmp_path / "acks.txt"
    for cycle in range(cycles):
        procs = spawn_writers(url, schema, 2, 10_000, "shared", acks)
        procs += spawn_writers(url, schema, 1, 10_000, "own", acks)
        # let them get going (imports take a while on a loaded machine), then kill mid-run
        deadline = time.monotonic() + 60
        start = acks.stat().st_size if acks.exists() else 0
        while (
            time.monotonic() < deadline and (acks.stat().st_size if acks.exists() else 0) == start
        ):
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait(30)
        store = make_store()
        acked = {line.split()[0] for line in acks.read_text().splitlines() if line.strip()}
        feed = check_feed(store)
        per_batch = Counter(str(e.meta["batch"]) for e in feed)
        assert all(n == 2 for n in per_batch.values()), "a batch was half-written"
        missing = acked - set(per_batch)
        assert not missing, f"cycle {cycle}: acknowledged appends lost: {sorted(missing)[:5]}"
        store.close()


@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_killed_writers_lose_no_acknowledged_append(
    make_store: Callable[..., EventStore], target: tuple[str, object], tmp_path: Path
) -> None:
    _crash_cycles(make_store, target, tmp_path, cycles=2)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_killed_writers_many_cycles(
    make_store: Callable[..., EventStore], target: tuple[str, object], tmp_path: Path
) -> None:
    _crash_cycles(make_store, target, tmp_path, cycles=12)
