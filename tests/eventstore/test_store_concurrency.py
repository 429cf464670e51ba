"""Many threads and processes appending at once: nothing lost, duplicated or interleaved,
positions and versions dense, and a reader tailing the feed meanwhile never skips."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from eventstore import EventStore, NewEvent, RecordedEvent, VersionConflict

WORKER = str(Path(__file__).with_name("store_worker.py"))


def check_feed(store: EventStore, expected_batches: set[str] | None = None) -> list[RecordedEvent]:
    """Assert the invariants every run must keep; return the feed."""
    feed = list(store.iter_all(batch_size=997))
    assert [e.position for e in feed] == list(range(1, len(feed) + 1)), "positions not dense"
    ids = [e.event_id for e in feed]
    assert len(ids) == len(set(ids)), "an event was duplicated"
    versions: dict[str, list[int]] = defaultdict(list)
    batches: dict[str, list[int]] = defaultdict(list)
    for e in feed:
        versions[e.stream_id].append(e.version)
        batches[str(e.meta.get("batch"))].append(e.position)
    for sid, seen in versions.items():
        assert seen == list(range(1, len(seen) + 1)), f"versions of {sid} not dense"
    for batch, positions in batches.items():
        assert positions == list(range(positions[0], positions[0] + len(positions))), (
            f"batch {batch} interleaved with another transaction"
        )
    if expected_batches is not None:
        assert set(batches) == expected_batches
    report = store.verify_all()
    assert report.ok, report
    return feed


class Tail(threading.Thread):
    """Follow the feed through a subscription while the writers run."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(daemon=True)
        self.sub = store.subscribe(1, batch_size=50, poll_interval=0.01)
        self.seen: list[tuple[int, str]] = []

    def run(self) -> None:
        for e in self.sub:
            self.seen.append((e.position, e.event_id))


def _thread_writer(store: EventStore, worker: int, batches: int, shared: bool) -> None:
    stream = "shared" if shared else f"own-{worker}"
    for i in range(batches):
        batch = f"t{worker}-{i}"
        events = [
            NewEvent("E", {"i": i}, event_id=f"{batch}-{j}", meta={"batch": batch})
            for j in range(3)
        ]
        while True:
            try:
                store.append(stream, events, store.stream_version(stream))
                break
            except VersionConflict:
                continue


@pytest.mark.parametrize("shared", [True, False], ids=["one-stream", "many-streams"])
def test_threads_append_without_loss_and_a_tail_never_skips(
    make_store: Callable[..., EventStore], shared: bool
) -> None:
    store = make_store()
    tail = Tail(make_store())
    tail.start()
    workers, batches = 6, 15
    threads = [
        threading.Thread(target=_thread_writer, args=(store, w, batches, shared))
        for w in range(workers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = {f"t{w}-{i}" for w in range(workers) for i in range(batches)}
    feed = check_feed(store, expected)
    assert len(feed) == workers * batches * 3
    while len(tail.seen) < len(feed):
        threading.Event().wait(0.01)
    tail.sub.close()
    tail.join(10)
    assert tail.seen == [(e.position, e.event_id) for e in feed]


def spawn_writers(
    url: str, schema: str, count: int, batches: int, mode: str, ack: Path
) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [sys.executable, WORKER, url, schema, f"{mode}{w}", str(batches), mode, str(ack)],
            stderr=subprocess.PIPE,
        )
        for w in range(count)
    ]


def _run_processes(
    make_store: Callable[..., EventStore],
    target: tuple[str, object],
    tmp_path: Path,
    count: int,
    batches: int,
) -> None:
    store = make_store()
    url, settings = target
    schema = getattr(settings, "pg_schema", None) or ""
    tail = Tail(make_store())
    tail.start()
    ack = tmp_path / "acks.txt"
    procs = spawn_writers(url, schema, count, batches, "shared", ack)
    procs += spawn_writers(url, schema, count, batches, "own", tmp_path / "acks-own.txt")
    try:
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err.decode()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    feed = check_feed(store)
    assert len(feed) == 2 * count * batches * 2
    while len(tail.seen) < len(feed):
        threading.Event().wait(0.01)
    tail.sub.close()
    tail.join(10)
    assert tail.seen == [(e.position, e.event_id) for e in feed]


@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_processes_append_without_loss(
    make_store: Callable[..., EventStore], target: tuple[str, object], tmp_path: Path
) -> None:
    _run_processes(make_store, target, tmp_path, count=2, batches=8)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_many_processes_append_without_loss(
    make_store: Callable[..., EventStore], target: tuple[str, object], tmp_path: Path
) -> None:
    _run_processes(make_store, target, tmp_path, count=8, batches=60)
