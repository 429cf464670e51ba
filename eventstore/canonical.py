"""Canonical JSON and the hash chain: the exact bytes an auditor recomputes.

Canonical JSON is orjson's compact output with keys sorted (``OPT_SORT_KEYS``), UTF-8, and
no floats anywhere: a float's text is not stable across languages, an integer's is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

import orjson

from eventstore.errors import FloatNotAllowedError, NotCanonicalJSONError, PayloadTooLargeError

GENESIS_HASH: Final = "0" * 64
"""The ``prev_hash`` of every stream's first event."""

MAX_EVENT_BYTES: Final = 64 * 1024
"""Limit on one event's canonical payload plus canonical meta, in bytes."""

MAX_STREAM_METADATA_BYTES: Final = 64 * 1024
"""Limit on a stream's canonical `stream_metadata`, in bytes (the same as an event's)."""

_OPTIONS: Final = orjson.OPT_SORT_KEYS
_GENESIS_BYTES: Final = bytes(32)


_LEAVES: Final = frozenset((str, int, bool, type(None)))
"""The exact types every value check lets through at once; others take the full check."""


def check_json_value(value: object, what: str) -> None:
    """Raise unless ``value`` holds only dicts (str keys), lists, str, int, bool and None."""
    stack: list[object] = [value]
    pop, push = stack.pop, stack.append
    leaves = _LEAVES
    while stack:
        item = pop()
        kind = type(item)
        if kind in leaves:
            continue
        if kind is dict:  # the common case, decided on exact types without isinstance
            for key, sub in item.items():  # type: ignore[attr-defined]
                if type(key) is not str and not isinstance(key, str):
                    raise NotCanonicalJSONError(f"{what}: object key {key!r} is not a string")
                if type(sub) not in leaves:
                    push(sub)
        elif kind is list:
            for sub in item:  # type: ignore[attr-defined]
                if type(sub) not in leaves:
                    push(sub)
        elif isinstance(item, str | bool | int):  # subclasses
            continue
        elif isinstance(item, float):
            raise FloatNotAllowedError(f"{what}: floats are not allowed ({item!r}); use integers")
        elif isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise NotCanonicalJSONError(f"{what}: object key {key!r} is not a string")
                push(sub)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        else:
            raise NotCanonicalJSONError(
                f"{what}: {type(item).__name__} is not a JSON value (use dict, list, str, int, "
                "bool or None)"
            )


def canonical_json(value: Mapping[str, Any], what: str = "value") -> bytes:
    """Encode a JSON object canonically, rejecting floats and anything not plain JSON."""
    if type(value) is dict and not value:
        return b"{}"  # most metas: nothing to check or encode
    if not isinstance(value, dict):
        raise NotCanonicalJSONError(f"{what}: must be a JSON object (dict), not {type(value)}")
    check_json_value(value, what)
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError as exc:  # surrogates, integers beyond 64 bits, deep nesting
        raise NotCanonicalJSONError(f"{what}: {exc}") from exc


def check_size(payload: bytes, meta: bytes) -> None:
    """Raise `PayloadTooLargeError` when an event exceeds `MAX_EVENT_BYTES`."""
    size = len(payload) + len(meta)
    if size > MAX_EVENT_BYTES:
        raise PayloadTooLargeError(
            f"event is {size} bytes of canonical payload+meta; the limit is {MAX_EVENT_BYTES}"
        )


def check_metadata_size(metadata: bytes) -> None:
    """Raise `PayloadTooLargeError` when stream metadata exceeds `MAX_STREAM_METADATA_BYTES`."""
    if len(metadata) > MAX_STREAM_METADATA_BYTES:
        raise PayloadTooLargeError(
            f"stream_metadata is {len(metadata)} bytes of canonical JSON; "
            f"the limit is {MAX_STREAM_METADATA_BYTES}"
        )


def _str(value: str) -> bytes:
    return orjson.dumps(value)


def event_document(
    *,
    stream_id: str,
    version: int,
    event_id: str,
    type: str,
    schema_version: int,
    payload: bytes,
    meta: bytes,
) -> bytes:
    """The canonical bytes of one event, as hashed.

    Equal to ``orjson.dumps({"event_id", "meta", "payload", "schema_version", "stream_id",
    "type", "version"}, OPT_SORT_KEYS)``, built from a template so the already canonical
    payload and meta bytes are not encoded twice.
    """
    return _DOCUMENT % (
        _str(event_id),
        meta,
        payload,
        schema_version,
        _str(stream_id),
        _str(type),
        version,
    )


_DOCUMENT: Final = (
    b'{"event_id":%b,"meta":%b,"payload":%b,"schema_version":%d,"stream_id":%b,"type":%b,'
    b'"version":%d}'
)


def chain_hash(prev_hash: str, document: bytes) -> str:
    """``hex(SHA-256(bytes.fromhex(prev_hash) || document))``: one link of a stream's chain."""
    prev = _GENESIS_BYTES if prev_hash == GENESIS_HASH else bytes.fromhex(prev_hash)
    return hashlib.sha256(prev + document).hexdigest()
