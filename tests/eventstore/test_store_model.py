"""A Hypothesis state machine: the store against an in-memory model of it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from eventstore import (
    ANY,
    NO_STREAM,
    EventStore,
    ExpectedVersion,
    GroupConflict,
    IdempotencyConflict,
    NewEvent,
    RecordedEvent,
    VersionConflict,
)

STREAMS = ["g-a", "g-b", "g-c"]
payloads = st.dictionaries(st.sampled_from("abc"), st.integers(-5, 5) | st.text(max_size=3))


class StoreModel(RuleBasedStateMachine):
    url = "sqlite://"

    def __init__(self) -> None:
        super().__init__()
        self.store = EventStore.open(self.url)
        self.streams: dict[str, list[NewEvent]] = {s: [] for s in STREAMS}
        self.feed: list[tuple[str, int]] = []
        self.done: list[tuple[str, list[NewEvent], list[RecordedEvent]]] = []
        self.counter = 0

    def teardown(self) -> None:
        self.store.close()

    def _events(self, payload_list: list[dict[str, Any]]) -> list[NewEvent]:
        out = []
        for p in payload_list:
            self.counter += 1
            out.append(NewEvent("T", p, event_id=f"e{self.counter}"))
        return out

    def _expected(self, sid: str, choice: str, delta: int) -> ExpectedVersion:
        current = len(self.streams[sid])
        if choice == "any":
            return ANY
        if choice == "no_stream":
            return NO_STREAM
        return max(0, current + delta)

    def _ok(self, sid: str, expected: ExpectedVersion) -> bool:
        current = len(self.streams[sid])
        if expected is ANY:
            return True
        if expected is NO_STREAM:
            return current == 0
        return expected == current

    @rule(
        sid=st.sampled_from(STREAMS),
        items=st.lists(payloads, min_size=1, max_size=3),
        choice=st.sampled_from(["exact", "exact", "any", "no_stream"]),
        delta=st.sampled_from([0, 0, 0, -1, 1]),
    )
    def append(self, sid: str, items: list[dict[str, Any]], choice: str, delta: int) -> None:
        events = self._events(items)
        expected = self._expected(sid, choice, delta)
        if self._ok(sid, expected):
            out = self.store.append(sid, events, expected)
            base = len(self.streams[sid])
            assert [e.version for e in out] == list(range(base + 1, base + 1 + len(events)))
            assert [e.position for e in out] == list(
                range(len(self.feed) + 1, len(self.feed) + 1 + len(events))
            )
            self.streams[sid].extend(events)
            self.feed.extend((sid, e.version) for e in out)
            self.done.append((sid, events, out))
        else:
            with pytest.raises(VersionConflict):
                self.store.append(sid, events, expected)

    @precondition(lambda self: self.done)
    @rule(data=st.data(), choice=st.sampled_from(["exact", "any", "no_stream"]))
    def retry(self, data: st.DataObject, choice: str) -> None:
        sid, events, out = data.draw(st.sampled_from(self.done))
        assert self.store.append(sid, events, self._expected(sid, choice, 0)) == out

    @precondition(lambda self: self.done)
    @rule(data=st.data(), payload=payloads)
    def retry_changed(self, data: st.DataObject, payload: dict[str, Any]) -> None:
        sid, events, _ = data.draw(st.sampled_from(self.done))
        changed = [NewEvent("T", {**payload, "changed": 1}, event_id=events[0].event_id)]
        with pytest.raises(IdempotencyConflict):
            self.store.append(sid, changed, ANY)

    @rule(
        picks=st.lists(
            st.tuples(st.sampled_from(STREAMS), payloads, st.sampled_from([0, 0, 1])),
            min_size=1,
            max_size=3,
            unique_by=lambda t: t[0],
        )
    )
    def group(self, picks: list[tuple[str, dict[str, Any], int]]) -> None:
        requests = []
        ok = True
        for sid, payload, delta in picks:
            expected = len(self.streams[sid]) + delta
            ok = ok and delta == 0
            requests.append((sid, self._events([payload]), expected))
        if ok:
            outs = self.store.append_many(requests)
            for (sid, events, _), out in zip(requests, outs, strict=True):
                self.streams[sid].extend(events)
                self.feed.extend((sid, e.version) for e in out)
                self.done.append((sid, events, out))
        else:
            with pytest.raises(GroupConflict):
                self.store.append_many(requests)

    @rule(sid=st.sampled_from(STREAMS), start=st.integers(1, 6))
    def read(self, sid: str, start: int) -> None:
        got = self.store.read_stream(sid, start)
        want = self.streams[sid][start - 1 :]
        assert [(e.event_id, e.payload) for e in got] == [(w.event_id, w.payload) for w in want]

    @invariant()
    def feed_matches(self) -> None:
        got = [(e.stream_id, e.version) for e in self.store.read_all(1, limit=10_000)]
        assert got == self.feed
        for sid in STREAMS:
            assert self.store.stream_version(sid) == len(self.streams[sid])


StoreModel.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoreModel = StoreModel.TestCase


@pytest.mark.slow
def test_model_on_postgres_and_file(postgres_url: str, tmp_path: Any) -> None:
    """The same machine against SQLite file and PostgreSQL (fresh schema per example)."""
    import uuid

    import sqlalchemy as sa

    from eventstore import StoreSettings

    class FileModel(StoreModel):
        def __init__(self) -> None:
            self.url = f"sqlite:///{tmp_path / uuid.uuid4().hex}.db"
            super().__init__()

    class PgModel(StoreModel):
        def __init__(self) -> None:
            RuleBasedStateMachine.__init__(self)
            self.schema = f"es_model_{uuid.uuid4().hex[:10]}"
            self.store = EventStore.open(
                postgres_url, create=True, settings=StoreSettings(pg_schema=self.schema)
            )
            self.streams = {s: [] for s in STREAMS}
            self.feed = []
            self.done = []
            self.counter = 0

        def teardown(self) -> None:
            self.store.close()
            engine = sa.create_engine(postgres_url)
            with engine.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA "{self.schema}" CASCADE'))
            engine.dispose()

    from hypothesis.stateful import run_state_machine_as_test

    config = settings(max_examples=15, stateful_step_count=15, deadline=None)
    run_state_machine_as_test(FileModel, settings=config)
    run_state_machine_as_test(PgModel, settings=config)
