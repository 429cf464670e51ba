"""One row builder for every append path (`eventstore.appending`): the rows and hashes are the
ones the spec gives, whichever path wrote them (SQLite's cached and general paths,
PostgreSQL's one-statement function and its general path)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventstore import ANY, GENESIS_HASH, EventStore, NewEvent
from eventstore.appending import chain_rows
from eventstore.validation import encode_event
from tests.eventstore.conftest import StoreTarget

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
objects = st.dictionaries(text, json_values, max_size=4)
names = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=6
)
events = st.tuples(names, objects, objects, st.integers(1, 3))  # type, payload, meta, schema


def spec_rows(sid: str, version: int, prev: str, batch: list[NewEvent]) -> list[tuple[Any, ...]]:
    """The rows as the format defines them: sorted orjson of the whole event, SHA-256 of the
    previous hash's bytes and that document."""
    rows = []
    for e in batch:
        version += 1
        whole = {
            "stream_id": sid,
            "version": version,
            "event_id": e.event_id,
            "type": e.type,
            "schema_version": e.schema_version,
            "payload": e.payload,
            "meta": e.meta,
        }
        document = orjson.dumps(whole, option=orjson.OPT_SORT_KEYS)
        digest = hashlib.sha256(bytes.fromhex(prev) + document).hexdigest()
        payload = orjson.dumps(e.payload, option=orjson.OPT_SORT_KEYS).decode()
        meta = orjson.dumps(e.meta, option=orjson.OPT_SORT_KEYS).decode()
        rows.append(
            (sid, version, e.event_id, e.type, e.schema_version, payload, meta, prev, digest)
        )
        prev = digest
    return rows


def new_events(
    spec: list[tuple[str, dict[str, Any], dict[str, Any], int]], start: int
) -> list[NewEvent]:
    return [
        NewEvent(typ, payload, event_id=f"e{start + i}", schema_version=sv, meta=meta)
        for i, (typ, payload, meta, sv) in enumerate(spec)
    ]


@given(
    sid=names,
    version=st.integers(0, 2**40),
    prev=st.sampled_from([GENESIS_HASH, "ab" * 32]),
    batch=st.lists(events, min_size=1, max_size=4),
)
def test_chain_rows_are_the_spec_rows(
    sid: str, version: int, prev: str, batch: list[tuple[str, dict[str, Any], dict[str, Any], int]]
) -> None:
    evs = new_events(batch, 0)
    encoded = [encode_event(e) for e in evs]
    assert chain_rows(sid, version, prev, encoded) == spec_rows(sid, version, prev, evs)


@given(moment=st.datetimes(timezones=st.just(UTC)))
def test_the_sqlite_stamp_is_the_naive_isoformat(moment: datetime) -> None:
    """`recorded_at` text on SQLite: unchanged by the cheaper spelling."""
    with EventStore.open("sqlite://") as store:
        assert store._stamp(moment) == moment.replace(tzinfo=None).isoformat(" ")


# ----------------------------------------------------------------- every path, stored


def _reset(store: EventStore, target: StoreTarget) -> None:
    _url, settings_ = target
    prefix = f'"{settings_.pg_schema}".' if settings_.pg_schema else ""
    with store.engines.write.begin() as conn:
        for table in ("events", "streams"):
            conn.execute(sa.text(f"DELETE FROM {prefix}{table}"))


def _stored(store: EventStore) -> list[tuple[Any, ...]]:
    with store.engines.read.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT stream_id, version, event_id, type, schema_version, payload, meta, "
                "prev_hash, hash, position FROM events ORDER BY position"
            )
        )
        return [tuple(r) for r in rows]


def _general_only(store: EventStore) -> None:
    store._fast = None
    store._write_cached = lambda *_: None  # type: ignore[method-assign]


@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True),  # streams
            st.lists(events, min_size=1, max_size=3),
            st.booleans(),  # ANY instead of the version
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_append_path_stores_the_spec_rows(
    target: StoreTarget,
    make_store: Callable[..., EventStore],
    steps: list[tuple[list[int], list[tuple[str, dict[str, Any], dict[str, Any], int]], bool]],
) -> None:
    seen = []
    for general in (False, True):
        store = make_store()
        _reset(store, target)
        if general:
            _general_only(store)
        expected: list[tuple[Any, ...]] = []
        heads = {s: (0, GENESIS_HASH) for s in range(3)}
        n = 0
        for streams, batch, any_version in steps:
            requests = []
            for s in streams:
                evs = new_events(batch, n)
                n += len(evs)
                version, prev = heads[s]
                rows = spec_rows(f"s-{s}", version, prev, evs)
                expected.extend(rows)
                heads[s] = (rows[-1][1], rows[-1][8])
                requests.append((f"s-{s}", evs, ANY if any_version else version))
            if len(requests) == 1:
                out = [store.append(*requests[0])]
            else:
                out = store.append_many(requests)  # type: ignore[arg-type]
            for recorded, (_sid, evs, _v) in zip(out, requests, strict=True):
                assert [(r.payload, r.meta) for r in recorded] == [(e.payload, e.meta) for e in evs]
        stored = _stored(store)
        assert [row[:9] for row in stored] == expected
        assert [row[9] for row in stored] == list(range(1, len(expected) + 1))
        assert store.verify_all().ok
        seen.append(stored)
    assert seen[0] == seen[1]
