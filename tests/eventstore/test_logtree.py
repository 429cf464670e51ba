"""The transparency log's stored tree (eventstore.logtree) on every backend: it covers every
event in position order, its roots and proofs are RFC 9162's at every past size, it survives
reopening, and checkpoints taken while several processes append are consistent."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventstore import ANY, NO_STREAM, EventStore, NewEvent
from eventstore.leaves import event_leaf, leaf_data, micros
from eventstore.logtree import LogTree, TreeError
from eventstore.merkle import (
    ProofError,
    leaf_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

WORKER = str(Path(__file__).with_name("log_worker.py"))


def fill(store: EventStore, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        store.append(f"s-{i % 5}", [NewEvent("E", {"i": i})], ANY)


def test_leaves_cover_every_event_in_position_order(store: EventStore) -> None:
    store.append("game-1", [NewEvent("A", {"x": 1}), NewEvent("B", {"y": [1, 2]})], NO_STREAM)
    store.append("t-2", [NewEvent("C", {})], NO_STREAM)
    tree = LogTree(store, lambda sid: b"k" if sid == "game-1" else b"")
    assert tree.size() == 0
    assert tree.integrate() == 3
    events = store.read_all(upcast=False)
    stored = [h for _, h in tree.leaves(0, 3)]
    expected = [
        event_leaf(
            position=e.position,
            stream_id=e.stream_id,
            version=e.version,
            event_id=e.event_id,
            type=e.type,
            schema_version=e.schema_version,
            payload=orjson.dumps(e.payload, option=orjson.OPT_SORT_KEYS),
            meta=orjson.dumps(e.meta, option=orjson.OPT_SORT_KEYS),
            recorded_at=e.recorded_at,
            key=b"k" if e.stream_id == "game-1" else b"",
        )
        for e in events
    ]
    assert stored == expected
    assert tree.root() == (3, root_of(expected))
    assert [leaf for _, leaf in tree.recompute()] == expected
    # the documented encoding, spelled out for the first event
    e = events[0]
    document = (
        b'{"event_id":"%s","meta":{},"payload":{"x":1},"schema_version":1,'
        b'"stream_id":"game-1","type":"A","version":1}' % e.event_id.encode()
    )
    data = leaf_data(
        position=1,
        stream_id="game-1",
        version=1,
        recorded_at=e.recorded_at,
        document=document,
        key=b"k",
    )
    assert leaf_hash(data) == stored[0]
    # the content is HMAC-SHA256 under the stream's key, in hex (spelled out here, not
    # taken from leaf_data, so a change of the keyed hash fails this test)
    keyed = hmac.new(b"k", document, hashlib.sha256).hexdigest()
    assert orjson.loads(data)["content"] == keyed
    assert orjson.loads(data)["recorded_at"] == micros(e.recorded_at)
    assert set(orjson.loads(data)) == {"content", "position", "recorded_at", "stream_id", "version"}


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batches=st.lists(st.integers(1, 9), min_size=1, max_size=5), data=st.data())
def test_roots_and_proofs_at_every_size_match_rfc_9162(
    make_store: Callable[..., EventStore], batches: list[int], data: st.DataObject
) -> None:
    store = make_store()
    tree = LogTree(store, batch=4)
    base = store.head_position()
    tree.integrate()
    done = base
    for n in batches:
        fill(store, n, done)
        done += n
        assert tree.integrate() == done
    leaves = [h for _, h in tree.leaves(0, done)]
    assert len(leaves) == done
    for size in range(1, done + 1):
        root = root_of(leaves[:size])
        assert tree.root(size) == (size, root)
    # drawn independently of `done` (the store keeps the earlier examples' events), then
    # scaled into the tree: Hypothesis needs the same draws whatever the database holds
    size = 1 + data.draw(st.integers(0, 10**9)) % done
    index = data.draw(st.integers(0, 10**9)) % size
    leaf, path = tree.inclusion(index, size)
    assert leaf == leaves[index]
    assert verify_inclusion(index, size, leaf, path, root_of(leaves[:size]))
    first = data.draw(st.integers(0, 10**9)) % (done + 1)
    assert verify_consistency(
        first, done, root_of(leaves[:first]), root_of(leaves), tree.consistency(first, done)
    )


# In memory SQLite has one connection, whose every transaction is a write one: not this question.
@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_a_tree_at_the_head_integrates_without_locking_or_writing(store: EventStore) -> None:
    fill(store, 4)
    tree = LogTree(store)
    assert tree.integrate() == 4
    writes: list[str] = []
    locking = ("BEGIN IMMEDIATE", "FOR UPDATE", "INSERT", "UPDATE log_size")

    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        if any(word in statement for word in locking):
            writes.append(statement)

    sa.event.listen(store.engines.write, "before_cursor_execute", count)
    try:
        assert tree.integrate() == 4
        assert tree.integrate(up_to=2) == 4
        assert writes == []
        fill(store, 1, start=4)
        assert tree.integrate() == 5
        assert writes  # behind the head again: the write path ran
    finally:
        sa.event.remove(store.engines.write, "before_cursor_execute", count)


def test_proofs_beyond_the_tree_are_refused_and_a_gap_is_named(store: EventStore) -> None:
    fill(store, 5)
    tree = LogTree(store)
    tree.integrate(up_to=3)
    assert tree.size() == 3
    with pytest.raises(ProofError):
        tree.inclusion(3, 4)
    with pytest.raises(ProofError):
        tree.consistency(2, 4)
    with pytest.raises(ProofError):
        tree.root(4)
    with store.engines.write.begin() as conn:
        conn.execute(sa.text("DELETE FROM events WHERE position = 4"))
    with pytest.raises(TreeError, match="no event at position 4"):
        tree.integrate()
    assert tree.size() == 3  # nothing written


@pytest.mark.parametrize("backend", ["sqlite-file", "postgres"], indirect=True)
def test_the_tree_is_kept_across_reopening(make_store: Callable[..., EventStore]) -> None:
    first = make_store()
    fill(first, 6)
    assert LogTree(first).integrate() == 6
    before = LogTree(first).root()
    first.close()
    again = make_store()
    fill(again, 3, 6)
    tree = LogTree(again)
    assert tree.root() == before
    assert tree.integrate() == 9
    _, root = tree.root()
    assert verify_consistency(6, 9, before[1], root, tree.consistency(6, 9))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_checkpoints_taken_while_processes_append_are_consistent(
    make_store: Callable[..., EventStore], pg_module_schema: tuple[str, object]
) -> None:
    url, settings_ = pg_module_schema
    schema = settings_.pg_schema  # type: ignore[attr-defined]
    workers = [
        subprocess.Popen(
            [sys.executable, WORKER, url, schema, f"p{i}", "60"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    seen: list[tuple[int, str]] = []
    for w in workers:
        out, _ = w.communicate(timeout=300)
        assert w.returncode == 0
        seen += [(d["size"], d["root"]) for d in map(orjson.loads, out.splitlines())]
    store = make_store()
    tree = LogTree(store)
    assert tree.integrate() == store.head_position() == 240
    leaves = [h for _, h in tree.leaves(0, 240)]
    assert leaves == [h for _, h in tree.recompute()]
    assert len(seen) == 4 * 15
    _, final = tree.root()
    for size, root in seen:
        # every checkpoint any process saw is the prefix of the one log, and provably so
        assert root_of(leaves[:size]).hex() == root
        proof = tree.consistency(size, 240)
        assert verify_consistency(size, 240, bytes.fromhex(root), final, proof)
