"""The transparency log's leaves: one per event, in position order (see docs/TRANSPARENCY.md).

    leaf_data(e) = canonical JSON {"content": hex(HMAC-SHA256(key, document(e))),
                                   "position": p, "recorded_at": µs since 1970 UTC,
                                   "stream_id": s, "version": v}
    leaf hash    = SHA-256(0x00 || leaf_data(e))                    (RFC 9162)

`document(e)` is the chain's document (event id, type, schema version, payload, meta, stream
id, version), so an edit, a move to another stream, a reorder, a re-chained rewrite and a
changed clock reading each change the leaf. `key` is the stream's *leaf key*, supplied by
whoever owns the streams (empty for a stream without secrets): keyed, a leaf of a live game
cannot be matched against guessed hands, and it becomes checkable by anyone once the key's
secret is revealed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final

import orjson

from eventstore.canonical import event_document
from eventstore.decoding import as_utc
from eventstore.merkle import leaf_hash

LeafKeys = Callable[[str], bytes]
"""A stream id's leaf key (b"" for a stream without secrets)."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)


def no_keys(stream_id: str) -> bytes:
    """Leaf keys for a log without secrets: all empty."""
    return b""


def micros(moment: datetime) -> int:
    """A recorded time as whole microseconds since 1970-01-01 UTC (what both backends keep)."""
    return (as_utc(moment) - _EPOCH) // _MICROSECOND


def leaf_data(
    *,
    position: int,
    stream_id: str,
    version: int,
    recorded_at: datetime,
    document: bytes,
    key: bytes,
) -> bytes:
    """The bytes a leaf hashes (after the 0x00 prefix)."""
    content = hmac.new(key, document, hashlib.sha256).hexdigest()
    return orjson.dumps(
        {
            "content": content,
            "position": position,
            "recorded_at": micros(recorded_at),
            "stream_id": stream_id,
            "version": version,
        },
        option=orjson.OPT_SORT_KEYS,
    )


def event_leaf(
    *,
    position: int,
    stream_id: str,
    version: int,
    event_id: str,
    type: str,
    schema_version: int,
    payload: bytes,
    meta: bytes,
    recorded_at: datetime,
    key: bytes,
) -> bytes:
    """The leaf hash of a stored event (`payload` and `meta` as the stored canonical bytes)."""
    document = event_document(
        stream_id=stream_id,
        version=version,
        event_id=event_id,
        type=type,
        schema_version=schema_version,
        payload=payload,
        meta=meta,
    )
    return leaf_hash(
        leaf_data(
            position=position,
            stream_id=stream_id,
            version=version,
            recorded_at=recorded_at,
            document=document,
            key=key,
        )
    )
