"""`EventStore.statements`: every statement the store sends is counted, on every backend."""

from __future__ import annotations

from eventstore import NO_STREAM, EventStore, NewEvent


def spent(store: EventStore, fn: object) -> int:
    before = store.statements
    fn()  # type: ignore[operator]
    return store.statements - before


def test_appends_and_reads_are_counted(store: EventStore) -> None:
    new = spent(store, lambda: store.append("game-1", [NewEvent("T", {})], NO_STREAM))
    more = spent(store, lambda: store.append("game-1", [NewEvent("T", {}), NewEvent("T", {})], 1))
    if store.backend.startswith("sqlite"):
        # BEGIN IMMEDIATE, max(position), head, insert (executemany: one), stream row, COMMIT
        assert new == more == 6
    else:
        assert 1 <= new <= 2 and 1 <= more <= 2
    assert spent(store, lambda: store.read_stream("game-1")) >= 1  # the raw read path
    assert spent(store, lambda: store.stream_info("game-1")) >= 1  # SQLAlchemy's Core path
    assert spent(store, lambda: store.verify("game-1")) >= 3
