"""`decode_rows` builds the same events as the plain, obvious reading of a row.

The fast path (slot descriptors instead of the frozen dataclass's __init__, moments parsed
with a UTC suffix and shared between rows of one append) must not change any value.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventstore.decoding import decode_payloads, decode_rows
from eventstore.errors import UpcastError
from eventstore.records import RecordedEvent
from eventstore.upcasting import UpcasterRegistry


def reference(rows: list[tuple], upcasters: UpcasterRegistry | None) -> list[RecordedEvent]:
    out = []
    for pos, sid, ver, eid, typ, sv, payload, meta, at, prev, h in rows:
        body = orjson.loads(payload)
        if upcasters:
            sv, body = upcasters.upcast(typ, sv, body)
        if isinstance(at, str):
            at = datetime.fromisoformat(at).replace(tzinfo=UTC)
        elif at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        out.append(
            RecordedEvent(pos, sid, ver, eid, typ, sv, body, orjson.loads(meta), at, prev, h)
        )
    return out


def registry() -> UpcasterRegistry:
    reg = UpcasterRegistry()
    reg.register("Moved", 1, lambda p: {**p, "v2": True})
    reg.register("Moved", 2, lambda p: {**p, "v3": p.get("n", 0) + 1})
    return reg


base = datetime(2026, 1, 1)
moments = st.one_of(
    st.integers(0, 10**12).map(lambda us: base + timedelta(microseconds=us)),
    st.just(base),  # no fraction: isoformat drops the microseconds
)
moment_forms = st.tuples(moments, st.sampled_from(["text", "naive", "aware", "offset"])).map(
    lambda m: {
        "text": m[0].isoformat(" "),
        "naive": m[0],
        "aware": m[0].replace(tzinfo=UTC),
        "offset": m[0].replace(tzinfo=timezone(timedelta(hours=2))),
    }[m[1]]
)
rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["Moved", "Other"]),
        st.integers(1, 3),
        st.dictionaries(st.text(max_size=3), st.integers(-(2**53), 2**53), max_size=3),
        st.sampled_from(["{}", '{"who":"x"}']),
        moment_forms,
        st.booleans(),  # same moment as the row before (one append)
    ),
    max_size=8,
)


def rows_of(spec: list[tuple]) -> list[tuple]:
    rows: list[tuple] = []
    for i, (typ, sv, payload, meta, at, same) in enumerate(spec):
        if same and rows:
            at = rows[-1][8]
        body = orjson.dumps(payload).decode()
        rows.append((i + 1, "s-1", i + 1, f"e{i}", typ, sv, body, meta, at, f"p{i}", f"h{i}"))
    return rows


@given(spec=rows_strategy, upcast=st.booleans())
def test_decode_payloads_are_the_decoded_events_bodies(spec: list[tuple], upcast: bool) -> None:
    """What the replay audit reads (version, type, upcast payload) is what decode_rows gives."""
    rows = rows_of(spec)
    upcasters = registry() if upcast else None
    want = [(e.version, e.type, e.payload) for e in reference(rows, upcasters)]
    assert decode_payloads(rows, upcasters) == want


def test_decode_payloads_fails_like_decode_rows_on_a_missing_upcaster_step() -> None:
    reg = UpcasterRegistry()
    reg.register("T", 2, lambda p: p)
    row = (1, "s-1", 1, "e", "T", 1, "{}", "{}", "2026-01-01 10:00:00", "p", "h")
    with pytest.raises(UpcastError, match="no upcaster from v1"):
        decode_payloads([row], reg)


@given(spec=rows_strategy, upcast=st.booleans())
def test_decode_rows_matches_the_plain_reading(spec: list[tuple], upcast: bool) -> None:
    rows = []
    for i, (typ, sv, payload, meta, at, same) in enumerate(spec):
        if same and rows:
            at = rows[-1][8]
        body = orjson.dumps(payload).decode()
        rows.append((i + 1, "s-1", i + 1, f"e{i}", typ, sv, body, meta, at, f"p{i}", f"h{i}"))
    upcasters = registry() if upcast else None
    got = decode_rows(rows, upcasters)
    want = reference(rows, upcasters)
    assert got == want
    for g, w in zip(got, want, strict=True):
        assert type(g) is RecordedEvent
        assert g.recorded_at.tzinfo is w.recorded_at.tzinfo  # UTC itself, or the stored offset
        assert dataclasses.astuple(g) == dataclasses.astuple(w)


def test_text_with_an_offset_keeps_its_wall_time_as_utc() -> None:
    row = (1, "s-1", 1, "e", "T", 1, "{}", "{}", "2026-01-01 10:00:00+02:00", "p", "h")
    (event,) = decode_rows([row], None)
    assert event.recorded_at == datetime(2026, 1, 1, 10, tzinfo=UTC)


def test_decoded_events_stay_frozen() -> None:
    row = (1, "s-1", 1, "e", "T", 1, "{}", "{}", "2026-01-01 10:00:00", "p", "h")
    (event,) = decode_rows([row], None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.version = 2  # type: ignore[misc]


def test_a_missing_upcaster_step_still_fails_on_read() -> None:
    reg = UpcasterRegistry()
    reg.register("T", 2, lambda p: p)
    row = (1, "s-1", 1, "e", "T", 1, "{}", "{}", "2026-01-01 10:00:00", "p", "h")
    with pytest.raises(UpcastError, match="no upcaster from v1"):
        decode_rows([row], reg)
