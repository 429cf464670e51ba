"""`ChainChecker.feed` inlines the event document for speed: it must hash exactly the bytes
`eventstore.canonical.event_document` builds, for any text, and catch any changed field."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from eventstore import GENESIS_HASH, canonical_json
from eventstore.canonical import chain_hash, event_document
from eventstore.verification import ChainChecker

texts = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8)
objects = st.dictionaries(st.text(max_size=4), st.text(max_size=4) | st.integers(-9, 9), max_size=3)
events = st.lists(
    st.tuples(
        texts,
        st.sampled_from(["CardPlayed", "Bid", 'ünïcode"type']),
        st.integers(1, 3),
        objects,
        objects,
    ),
    min_size=1,
    max_size=6,
)


def chain(
    sid: str, spec: list[tuple[str, str, int, dict[str, Any], dict[str, Any]]]
) -> list[tuple]:
    rows, prev = [], GENESIS_HASH
    for i, (eid, typ, sv, payload, meta) in enumerate(spec):
        p, m = canonical_json(payload), canonical_json(meta)
        version = i + 1
        digest = chain_hash(
            prev,
            event_document(
                stream_id=sid,
                version=version,
                event_id=eid,
                type=typ,
                schema_version=sv,
                payload=p,
                meta=m,
            ),
        )
        rows.append(
            (10 * version, sid, version, eid, typ, sv, p.decode(), m.decode(), None, prev, digest)
        )
        prev = digest
    return rows


@given(sid=texts, spec=events, split=st.integers(0, 6))
def test_feed_accepts_a_chain_built_by_the_canonical_document(
    sid: str, spec: list[Any], split: int
) -> None:
    rows = chain(sid, spec)
    checker = ChainChecker(sid)
    assert checker.feed(rows[:split]) and checker.feed(rows[split:])
    result = checker.finish(len(rows), rows[-1][10])
    assert result.ok and result.events_checked == len(rows)


@given(sid=texts, spec=events, data=st.data())
def test_feed_names_the_row_whose_hashed_field_changed(
    sid: str, spec: list[Any], data: st.DataObject
) -> None:
    rows = chain(sid, spec)
    index = data.draw(st.integers(0, len(rows) - 1))
    column = data.draw(st.sampled_from([3, 4, 5, 6, 7]))  # event_id, type, sv, payload, meta
    row = list(rows[index])
    row[column] = {3: row[3] + "x", 4: row[4] + "x", 5: row[5] + 1, 6: '{"x":1}', 7: '{"y":2}'}[
        column
    ]
    if row[column] == rows[index][column]:
        return
    rows[index] = tuple(row)
    checker = ChainChecker(sid)
    assert not checker.feed(rows)
    assert checker.failure is not None
    assert checker.failure.version == index + 1
    assert checker.failure.reason == "hash does not match the event's content"
