"""The store's contract, run once per backend (SQLite memory, SQLite file, PostgreSQL)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable

import orjson
import pytest

from eventstore import (
    ANY,
    GENESIS_HASH,
    MAX_EVENT_BYTES,
    MAX_STREAM_METADATA_BYTES,
    NO_STREAM,
    AppendRequest,
    EventStore,
    FloatNotAllowedError,
    GroupConflict,
    IdempotencyConflict,
    InvalidEventError,
    InvalidNameError,
    InvalidStreamIdError,
    InvalidVersionError,
    NewEvent,
    NotCanonicalJSONError,
    PayloadTooLargeError,
    StreamNotFound,
    UpcasterRegistry,
    VersionConflict,
)


def ev(n: int, type: str = "CardPlayed", **extra: object) -> NewEvent:
    return NewEvent(type, {"n": n, **extra})


def auditor_hash(prev: str, e: object) -> str:
    """The chain as docs/eventstore.md defines it, written independently of the store."""
    doc = {
        "stream_id": e.stream_id,  # type: ignore[attr-defined]
        "version": e.version,  # type: ignore[attr-defined]
        "event_id": e.event_id,  # type: ignore[attr-defined]
        "type": e.type,  # type: ignore[attr-defined]
        "schema_version": e.schema_version,  # type: ignore[attr-defined]
        "payload": e.payload,  # type: ignore[attr-defined]
        "meta": e.meta,  # type: ignore[attr-defined]
    }
    data = bytes.fromhex(prev) + orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()


def test_append_new_stream_records_positions_versions_and_chain(store: EventStore) -> None:
    out = store.append("game-1", [ev(1), ev(2, meta_ok="é")], NO_STREAM)
    assert [e.version for e in out] == [1, 2]
    assert [e.position for e in out] == [1, 2]
    assert out[0].prev_hash == GENESIS_HASH
    assert out[1].prev_hash == out[0].hash
    prev = GENESIS_HASH
    for e in store.read_stream("game-1"):
        assert e.hash == auditor_hash(prev, e)
        prev = e.hash
    info = store.stream_info("game-1")
    assert info is not None
    assert (info.version, info.head_hash, info.type) == (2, out[1].hash, "game")
    assert store.head_position() == 2


def test_reads_return_what_was_appended(store: EventStore) -> None:
    meta = {"actor": "seat-2", "nested": {"b": [1, None, True], "a": "ş"}}
    out = store.append("s-1", [NewEvent("T", {"z": 1, "a": [1, 2]}, meta=meta)], NO_STREAM)
    back = store.read_stream("s-1")
    assert back == out
    assert back[0].meta == meta
    assert back[0].recorded_at.tzinfo is not None


def test_expected_version_conflicts_name_stream_and_versions(store: EventStore) -> None:
    store.append("game-1", [ev(1)], NO_STREAM)
    with pytest.raises(VersionConflict) as info:
        store.append("game-1", [ev(2)], NO_STREAM)
    assert (info.value.stream_id, info.value.expected, info.value.actual) == (
        "game-1",
        NO_STREAM,
        1,
    )
    with pytest.raises(VersionConflict) as info2:
        store.append("game-1", [ev(3)], 5)
    assert (info2.value.expected, info2.value.actual) == (5, 1)
    with pytest.raises(VersionConflict):
        store.append("game-2", [ev(3)], 1)
    assert store.append("game-1", [ev(4)], 1)[0].version == 2
    assert store.append("game-1", [ev(5)], ANY)[0].version == 3
    assert store.append("game-3", [ev(6)], 0)[0].version == 1
    assert store.head_position() == 4


def test_idempotent_retry_returns_the_original_record(store: EventStore) -> None:
    batch = [ev(1), ev(2)]
    first = store.append("g", batch, NO_STREAM)
    store.append("g", [ev(3)], 2)
    again = store.append("g", batch, NO_STREAM)
    assert again == first
    assert store.append("g", batch, ANY) == first
    assert store.head_position() == 3


def test_same_event_id_other_content_conflicts(store: EventStore) -> None:
    e = ev(1)
    store.append("g", [e], NO_STREAM)
    changed = NewEvent(e.type, {"n": 99}, event_id=e.event_id)
    for expected in (NO_STREAM, 1, ANY):
        with pytest.raises(IdempotencyConflict) as info:
            store.append("g", [changed], expected)
        assert info.value.event_id == e.event_id
    with pytest.raises(IdempotencyConflict):
        store.append("other", [e], NO_STREAM)
    with pytest.raises(IdempotencyConflict):
        store.append("g", [e, ev(2)], ANY)  # half-new batch
    assert store.head_position() == 1


def test_read_stream_ranges_and_unknown_streams(store: EventStore) -> None:
    store.append("g", [ev(i) for i in range(1, 11)], NO_STREAM)
    assert [e.version for e in store.read_stream("g", 4)] == list(range(4, 11))
    assert [e.version for e in store.read_stream("g", 4, to_version=6)] == [4, 5, 6]
    assert [e.version for e in store.read_stream("g", 2, limit=3)] == [2, 3, 4]
    assert store.read_stream("g", 11) == []
    assert store.read_stream("nope") == []
    with pytest.raises(StreamNotFound):
        store.read_stream("nope", must_exist=True)
    with pytest.raises(StreamNotFound):
        store.verify("nope")
    assert store.stream_info("nope") is None
    assert store.stream_version("nope") == 0
    assert len(store.read_stream("g", 3, verify=True)) == 8


def test_read_all_in_batches_follows_commit_order(store: EventStore) -> None:
    for i in range(7):
        store.append(f"s{i % 3}", [ev(i), ev(i + 100)], ANY)
    feed = store.read_all(1, limit=5)
    assert [e.position for e in feed] == [1, 2, 3, 4, 5]
    assert [e.position for e in store.read_all(13, limit=5)] == [13, 14]
    assert [e.position for e in store.iter_all(batch_size=4)] == list(range(1, 15))
    assert store.read_all(15) == []


def test_group_commit_is_all_or_nothing(store: EventStore) -> None:
    store.append("a", [ev(0)], NO_STREAM)
    with pytest.raises(GroupConflict) as info:
        store.append_many([("b", [ev(1)], NO_STREAM), ("a", [ev(2)], NO_STREAM)])
    assert info.value.index == 1
    assert isinstance(info.value.cause, VersionConflict)
    assert store.read_stream("b") == []
    out = store.append_many(
        [
            AppendRequest("b", [ev(1)], NO_STREAM),
            ("a", [ev(2)], 1),
            ("b", [ev(3)], 1),
        ]
    )
    assert [[e.version for e in r] for r in out] == [[1], [2], [2]]
    assert [e.position for r in out for e in r] == [2, 3, 4]
    assert store.verify("b").ok and store.verify("a").ok
    assert store.stream_version("b") == 2


def test_group_commit_retry_is_idempotent(store: EventStore) -> None:
    group = [("x", [ev(1)], NO_STREAM), ("y", [ev(2), ev(3)], NO_STREAM)]
    first = store.append_many(group)
    assert store.append_many(group) == first
    assert store.head_position() == 3


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"x": 1.5}, FloatNotAllowedError),
        ({"deep": [{"x": [0.0]}]}, FloatNotAllowedError),
        ({"x": {1, 2}}, NotCanonicalJSONError),
        ({1: "int key"}, NotCanonicalJSONError),
        ({"x": "\ud800"}, NotCanonicalJSONError),
        ({"x": 2**70}, NotCanonicalJSONError),
        ({"x": "a" * (MAX_EVENT_BYTES + 1)}, PayloadTooLargeError),
        ([1, 2], NotCanonicalJSONError),
    ],
)
def test_bad_payloads_are_rejected_and_write_nothing(
    store: EventStore, payload: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        store.append("g", [ev(1), NewEvent("T", payload)], NO_STREAM)  # type: ignore[arg-type]
    with pytest.raises(FloatNotAllowedError):
        store.append("g", [NewEvent("T", {}, meta={"t": 0.1})], NO_STREAM)
    assert store.head_position() == 0
    assert store.stream_info("g") is None


def test_bad_arguments_raise_typed_errors(store: EventStore) -> None:
    with pytest.raises(InvalidStreamIdError):
        store.append("", [ev(1)], NO_STREAM)
    with pytest.raises(InvalidStreamIdError):
        store.append("x" * 201, [ev(1)], NO_STREAM)
    with pytest.raises(InvalidVersionError):
        store.append("g", [ev(1)], -1)
    with pytest.raises(InvalidVersionError):
        store.append("g", [ev(1)], True)
    with pytest.raises(InvalidEventError):
        store.append("g", [], NO_STREAM)
    e = ev(1)
    with pytest.raises(InvalidEventError):
        store.append("g", [e, e], NO_STREAM)
    with pytest.raises(InvalidEventError):
        store.append("g", [NewEvent("", {})], NO_STREAM)
    with pytest.raises(InvalidEventError):
        store.append("g", [NewEvent("T", {}, schema_version=0)], NO_STREAM)
    with pytest.raises(InvalidVersionError):
        store.read_stream("g", -1)
    with pytest.raises(InvalidVersionError):
        store.read_all(-5)
    with pytest.raises(InvalidNameError):
        store.claim("", "me")
    assert store.head_position() == 0


@pytest.mark.parametrize("bad", ["g\ud800", "g\x00", "\udfff"])
def test_unstorable_text_raises_typed_errors_on_every_backend(store: EventStore, bad: str) -> None:
    """A lone surrogate cannot be encoded and PostgreSQL refuses NUL: both are refused up
    front on every backend, with the store's own errors."""
    with pytest.raises(InvalidStreamIdError):
        store.append(bad, [ev(1)], NO_STREAM)
    with pytest.raises(InvalidStreamIdError):
        store.read_stream(bad)
    with pytest.raises(InvalidStreamIdError):
        store.stream_info(bad)
    with pytest.raises(InvalidEventError):
        store.append("g", [NewEvent("T", {}, event_id=bad)], NO_STREAM)
    with pytest.raises(InvalidEventError):
        store.append("g", [NewEvent(bad, {})], NO_STREAM)
    with pytest.raises(InvalidEventError):
        store.append("g", [ev(1)], NO_STREAM, stream_type=bad)
    with pytest.raises(InvalidEventError):
        store.append_many([("g", [ev(1)], NO_STREAM), (bad, [ev(2)], NO_STREAM)])
    with pytest.raises(InvalidNameError):
        store.claim(bad, "me")
    with pytest.raises(InvalidNameError):
        store.claim("k", bad)
    with pytest.raises(InvalidNameError):
        store.seal(bad, "v")
    with pytest.raises(InvalidEventError):
        store.seal("k", bad)
    with pytest.raises(InvalidNameError):
        store.projection_position(bad)
    assert store.head_position() == 0
    assert store.unseal("k") is None and store.get_claim("k") is None


def test_stream_type_and_metadata_are_bounded(store: EventStore) -> None:
    with pytest.raises(InvalidEventError):
        store.append("g", [ev(1)], NO_STREAM, stream_type="t" * 201)
    with pytest.raises(InvalidEventError):
        store.append("g", [ev(1)], NO_STREAM, stream_type="")
    big = {"x": "a" * MAX_STREAM_METADATA_BYTES}
    with pytest.raises(PayloadTooLargeError):
        store.append("g", [ev(1)], NO_STREAM, stream_metadata=big)
    with pytest.raises(FloatNotAllowedError):
        store.append("g", [ev(1)], NO_STREAM, stream_metadata={"x": 0.5})
    assert store.head_position() == 0
    limit = {"x": "a" * (MAX_STREAM_METADATA_BYTES - len('{"x":""}'))}
    store.append("g", [ev(1)], NO_STREAM, stream_type="t" * 200, stream_metadata=limit)
    info = store.stream_info("g")
    assert info is not None and info.metadata == limit and info.type == "t" * 200


@pytest.mark.parametrize("size", [0, -1, True, 1.5, None])
def test_batch_sizes_must_be_positive_ints(store: EventStore, size: object) -> None:
    store.append("g", [ev(1)], NO_STREAM)
    with pytest.raises(InvalidVersionError):
        store.iter_all(batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(InvalidVersionError):
        store.subscribe(batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(InvalidVersionError):
        store.verify("g", batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(InvalidVersionError):
        store.verify_all(batch_size=size)  # type: ignore[arg-type]
    assert [e.version for e in store.iter_all(batch_size=1)] == [1]
    assert store.verify("g", batch_size=1).ok


@pytest.mark.parametrize("interval", [0, -0.5, float("nan"), float("inf"), "1", True])
def test_poll_interval_must_be_a_positive_number(store: EventStore, interval: object) -> None:
    with pytest.raises(InvalidVersionError):
        store.subscribe(poll_interval=interval)  # type: ignore[arg-type]


def test_stream_type_and_metadata_are_kept_from_creation(store: EventStore) -> None:
    store.append("t-9", [ev(1)], NO_STREAM, stream_type="tournament", stream_metadata={"k": 1})
    store.append("t-9", [ev(2)], 1, stream_type="ignored", stream_metadata={"k": 2})
    info = store.stream_info("t-9")
    assert info is not None
    assert (info.type, info.metadata, info.version) == ("tournament", {"k": 1}, 2)


def test_upcasters_chain_at_read_time(make_store: Callable[..., EventStore]) -> None:
    registry = UpcasterRegistry()
    registry.register("Played", 1, lambda p: {"seat": p["player"], "card": p["card"]})

    @registry.upcaster("Played", 2)
    def _v2_to_v3(payload: dict[str, object]) -> dict[str, object]:
        return {**payload, "card": str(payload["card"]).upper()}

    plain = make_store()
    plain.append("g", [NewEvent("Played", {"player": 2, "card": "qs"})], NO_STREAM)
    plain.append("g", [NewEvent("Played", {"seat": 1, "card": "kh"}, schema_version=2)], 1)
    plain.append("g", [NewEvent("Played", {"seat": 0, "card": "AS"}, schema_version=3)], 2)
    store = make_store(upcasters=registry)
    events = store.read_stream("g", verify=True)
    assert [(e.schema_version, e.payload) for e in events] == [
        (3, {"seat": 2, "card": "QS"}),
        (3, {"seat": 1, "card": "KH"}),
        (3, {"seat": 0, "card": "AS"}),
    ]
    raw = store.read_stream("g", upcast=False)
    assert raw[0].payload == {"player": 2, "card": "qs"}
    assert store.verify("g").ok
    assert registry.current_version("Played") == 3


def test_projection_position_commits_with_its_writes(store: EventStore) -> None:
    import sqlalchemy as sa

    store.append("g", [ev(1), ev(2), ev(3)], NO_STREAM)
    with store.projection_transaction("counter") as tx:
        tx.connection.execute(sa.text("CREATE TABLE IF NOT EXISTS proj_counter (n INTEGER)"))
    with store.projection_transaction("counter") as tx:
        assert tx.last_position == 0
        seen = store.read_all(tx.last_position + 1)
        for e in seen:
            tx.connection.execute(
                sa.text("INSERT INTO proj_counter VALUES (:n)"), {"n": e.position}
            )
        tx.advance(seen[-1].position)
    assert store.projection_position("counter") == 3
    with pytest.raises(RuntimeError), store.projection_transaction("counter") as tx:
        tx.connection.execute(sa.text("INSERT INTO proj_counter VALUES (99)"))
        tx.advance(10)
        raise RuntimeError("projection failed")
    assert store.projection_position("counter") == 3
    with store.projection_transaction("counter") as tx:
        count = tx.connection.execute(sa.text("SELECT count(*) FROM proj_counter")).scalar()
        assert count == 3
        with pytest.raises(InvalidVersionError):
            tx.advance(1)
    store.reset_projection("counter")
    assert store.projection_position("counter") == 0


def test_claims_are_taken_once(store: EventStore) -> None:
    first = store.claim("round-1/pair", "scheduler-a")
    second = store.claim("round-1/pair", "scheduler-b")
    assert first.acquired and not second.acquired
    assert second.owner == "scheduler-a"
    held = store.get_claim("round-1/pair")
    assert held is not None and held.owner == "scheduler-a"
    assert store.get_claim("other") is None


def test_subscription_catches_up_then_follows(store: EventStore) -> None:
    store.append("g", [ev(1), ev(2)], NO_STREAM)
    sub = store.subscribe(2, poll_interval=0.02)
    got: list[int] = []
    done = threading.Event()

    def consume() -> None:
        for e in sub:
            got.append(e.position)
            if e.position == 5:
                done.set()

    thread = threading.Thread(target=consume)
    thread.start()
    store.append("h", [ev(3)], NO_STREAM)
    store.append("g", [ev(4), ev(5)], 2)
    assert done.wait(30)
    sub.close()
    thread.join(30)
    assert got == [2, 3, 4, 5]


def test_next_batch_returns_what_committed_and_waits_only_when_nothing_did(
    store: EventStore,
) -> None:
    store.append("g", [ev(1), ev(2)], NO_STREAM)
    sub = store.subscribe(1, poll_interval=0.05)
    assert [e.position for e in sub.next_batch()] == [1, 2]
    assert sub.next_batch() == []  # waited one interval: nothing came
    # A reader already waiting gets what commits during its wait (or at its next look: on
    # a loaded machine the append may outlast one wait).
    waiting = store.subscribe(3, poll_interval=0.5)
    woken: list[list[int]] = []

    def wait_for_it() -> None:
        for _ in range(120):
            batch = waiting.next_batch()
            if batch:
                woken.append([e.position for e in batch])
                return

    thread = threading.Thread(target=wait_for_it)
    thread.start()
    store.append("h", [ev(3)], NO_STREAM)
    thread.join(30)
    assert woken == [[3]]
    sub.close()
    store.append("h", [ev(4)], 1)
    assert sub.next_batch() == []  # closed: nothing more, even what committed


def test_verify_and_verify_all_on_a_sound_store(store: EventStore) -> None:
    for i in range(5):
        store.append(f"g{i % 2}", [ev(i), ev(i + 10)], ANY)
    result = store.verify("g0")
    assert result.ok and result.events_checked == 6 and result.reason is None
    report = store.verify_all()
    assert report.ok and report.streams_checked == 2 and report.events_checked == 10
