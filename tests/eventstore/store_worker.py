"""A writer process for the concurrency and crash suites (run as a script, not collected).

usage: store_worker.py URL PG_SCHEMA WORKER_ID BATCHES MODE ACK_FILE
MODE "shared" appends to one stream with expected versions (retrying conflicts), "own" to a
stream of its own. Each acknowledged batch is written to ACK_FILE only after its commit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from eventstore import (
    EventStore,
    NewEvent,
    StoreBusy,
    StoreSettings,
    VersionConflict,
)


def run(url: str, schema: str, worker: str, batches: int, mode: str, ack_path: str) -> None:
    settings = StoreSettings(pg_schema=schema or None, pool_size=2)
    store = EventStore.open(url, settings=settings, create=False)
    fd = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    stream = "shared" if mode == "shared" else f"own-{worker}"
    try:
        for i in range(batches):
            batch = f"{worker}-{i}"
            events = [
                NewEvent("E", {"i": i, "j": j}, event_id=f"{batch}-{j}", meta={"batch": batch})
                for j in range(2)
            ]
            for _attempt in range(10_000):
                try:
                    out = store.append(stream, events, store.stream_version(stream))
                    break
                except (VersionConflict, StoreBusy):
                    continue
            else:
                raise SystemExit(f"{batch}: no append after 10000 attempts")
            os.write(fd, f"{batch} {out[0].position}\n".encode())
    finally:
        os.close(fd)
        store.close()


if __name__ == "__main__":
    url, schema, worker, batches, mode, ack = sys.argv[1:7]
    run(url, schema, worker, int(batches), mode, ack)
