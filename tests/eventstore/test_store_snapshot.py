"""Reads that compare several rows see one snapshot: `verify` and `verify_all` never report
tampering because an append committed between their statements."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from eventstore import ANY, NO_STREAM, EventStore, NewEvent

APPENDS = 300


@pytest.mark.parametrize(
    "backend", ["sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_verify_is_consistent_while_a_stream_is_appended_to(
    make_store: Callable[..., EventStore],
) -> None:
    store = make_store()
    writer = make_store()
    writer.append("g", [NewEvent("T", {"n": 0})], NO_STREAM)
    done = threading.Event()
    errors: list[BaseException] = []

    def append() -> None:
        try:
            for i in range(1, APPENDS):
                writer.append("g", [NewEvent("T", {"n": i})], i)
                writer.append(f"other-{i % 7}", [NewEvent("T", {"n": i})], ANY)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=append)
    thread.start()
    results = []
    reports = []
    try:
        while not done.is_set():
            results.append(store.verify("g"))
            reports.append(store.verify_all())
    finally:
        thread.join(60)
    assert not errors
    assert results, "the writer finished before a single verify ran"
    assert [r for r in results if not r.ok] == []
    assert [r for r in reports if not r.ok] == []
    assert store.verify("g").events_checked == APPENDS
