"""Canonical JSON and the event document: the bytes an auditor recomputes."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventstore import GENESIS_HASH, FloatNotAllowedError, canonical_json
from eventstore.canonical import chain_hash, event_document

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(), json_values, max_size=5)


@given(
    payload=objects,
    meta=objects,
    sid=st.text(min_size=1),
    eid=st.text(min_size=1),
    typ=st.text(min_size=1),
    version=st.integers(1, 2**40),
    sv=st.integers(1, 50),
)
def test_event_document_equals_sorted_orjson_of_the_whole_event(
    payload: dict[str, Any],
    meta: dict[str, Any],
    sid: str,
    eid: str,
    typ: str,
    version: int,
    sv: int,
) -> None:
    try:
        p, m = canonical_json(payload), canonical_json(meta)
    except Exception:
        return  # surrogate strings are rejected; covered elsewhere
    doc = event_document(
        stream_id=sid, version=version, event_id=eid, type=typ, schema_version=sv, payload=p, meta=m
    )
    whole = {
        "stream_id": sid,
        "version": version,
        "event_id": eid,
        "type": typ,
        "schema_version": sv,
        "payload": payload,
        "meta": meta,
    }
    try:
        expected = orjson.dumps(whole, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return
    assert doc == expected


@given(payload=objects)
def test_canonical_json_is_stable_under_key_order(payload: dict[str, Any]) -> None:
    try:
        once = canonical_json(payload)
    except Exception:
        return
    reordered = dict(reversed(list(payload.items())))
    assert canonical_json(reordered) == once
    assert orjson.loads(once) == payload


def test_chain_hash_definition() -> None:
    doc = b'{"a":1}'
    assert chain_hash(GENESIS_HASH, doc) == hashlib.sha256(bytes(32) + doc).hexdigest()
    prev = "ab" * 32
    assert chain_hash(prev, doc) == hashlib.sha256(bytes.fromhex(prev) + doc).hexdigest()


@pytest.mark.parametrize("bad", [1.0, float("nan"), [0.5], {"x": {"y": 1e9}}])
def test_floats_anywhere_are_rejected(bad: object) -> None:
    with pytest.raises(FloatNotAllowedError):
        canonical_json({"v": bad})
