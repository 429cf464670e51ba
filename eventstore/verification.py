"""Recompute a stream's hash chain from its stored rows and name the first bad event.

Rows are the store's event rows in version order: (position, stream_id, version, event_id,
type, schema_version, payload, meta, recorded_at, prev_hash, hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from eventstore.canonical import GENESIS_HASH
from eventstore.records import VerifyResult

_GENESIS_BYTES = bytes(32)


@dataclass(slots=True)
class ChainChecker:
    """Feed row batches in version order; the first failure is kept in `failure`."""

    stream_id: str
    expected_version: int = 1
    prev_hash: str = GENESIS_HASH
    prev_position: int = 0
    checked: int = 0
    failure: VerifyResult | None = None

    def _fail(self, position: int | None, version: int, reason: str) -> bool:
        self.failure = VerifyResult(
            self.stream_id,
            ok=False,
            events_checked=self.checked,
            version=version,
            position=position,
            reason=reason,
        )
        return False

    def feed(self, rows: Sequence[Any]) -> bool:
        """Check the next rows; False (and `failure` set) at the first bad one.

        The hashed document is built exactly as `eventstore.canonical.event_document` does,
        inlined here because replays are hot: one f-string encoded once costs less than
        joining a dozen byte pieces, and each event type's JSON is made once per batch.
        """
        if self.failure is not None:
            return False
        dumps, sha256, fromhex = orjson.dumps, hashlib.sha256, bytes.fromhex
        sid_json = dumps(self.stream_id).decode()
        type_json: dict[str, str] = {}
        expected, prev, prev_pos = self.expected_version, self.prev_hash, self.prev_position
        # The previous hash as bytes, carried from one row's digest to the next (not parsed
        # back from its hex each row).
        head = _GENESIS_BYTES if prev == GENESIS_HASH else fromhex(prev)
        for row in rows:
            position, _sid, version, eid, typ, sv, payload, meta, _at, link, digest = row
            if version != expected:
                self._advance(expected, prev, prev_pos)
                return self._fail(
                    position,
                    expected,
                    f"version gap: expected version {expected}, found {version} "
                    "(event missing or reordered)",
                )
            if position <= prev_pos:
                self._advance(expected, prev, prev_pos)
                return self._fail(
                    position,
                    version,
                    f"position {position} does not follow position {prev_pos} of the "
                    "previous version (rows reordered)",
                )
            if link != prev:
                self._advance(expected, prev, prev_pos)
                return self._fail(position, version, "prev_hash does not match the previous hash")
            typ_json = type_json.get(typ)
            if typ_json is None:
                typ_json = type_json[typ] = dumps(typ).decode()
            document = (
                f'{{"event_id":{dumps(eid).decode()},"meta":{meta},"payload":{payload},'
                f'"schema_version":{sv},"stream_id":{sid_json},"type":{typ_json},'
                f'"version":{version}}}'
            ).encode()
            hashed = sha256(head + document)
            if hashed.hexdigest() != digest:
                self._advance(expected, prev, prev_pos)
                return self._fail(position, version, "hash does not match the event's content")
            prev, prev_pos, head = digest, position, hashed.digest()
            expected += 1
        self._advance(expected, prev, prev_pos)
        return True

    def _advance(self, expected: int, prev: str, prev_pos: int) -> None:
        self.checked += expected - self.expected_version
        self.expected_version, self.prev_hash, self.prev_position = expected, prev, prev_pos

    def finish(self, head_version: int | None, head_hash: str | None) -> VerifyResult:
        """Compare the end of the chain with the stream row (catches a dropped tail)."""
        if self.failure is not None:
            return self.failure
        last = self.expected_version - 1
        if head_version is None:
            if self.checked:
                self._fail(None, last + 1, "events exist but the stream row is missing")
        elif head_version != last:
            self._fail(
                None,
                last + 1,
                f"stream row says version {head_version} but the events end at version {last}",
            )
        elif head_hash != self.prev_hash:
            self._fail(None, last, "stream row's head hash differs from the last hash")
        return self.failure or VerifyResult(self.stream_id, ok=True, events_checked=self.checked)
