"""Recompute a stream's hash chain from its stored rows and name the first bad event."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from eventstore.canonical import GENESIS_HASH, chain_hash, event_document
from eventstore.records import VerifyResult


@dataclass(frozen=True, slots=True)
class StoredLink:
    """The columns of one stored event that the chain check reads."""

    position: int
    version: int
    event_id: str
    type: str
    schema_version: int
    payload: str
    meta: str
    prev_hash: str
    hash: str


@dataclass(slots=True)
class ChainChecker:
    """Feed links in version order with `feed`; the first failure is kept in `failure`."""

    stream_id: str
    expected_version: int = 1
    prev_hash: str = GENESIS_HASH
    prev_position: int = 0
    checked: int = 0
    failure: VerifyResult | None = None

    def _fail(self, link: StoredLink | None, version: int, reason: str) -> bool:
        self.failure = VerifyResult(
            self.stream_id,
            ok=False,
            events_checked=self.checked,
            version=version,
            position=None if link is None else link.position,
            reason=reason,
        )
        return False

    def feed(self, links: Iterable[StoredLink]) -> bool:
        """Check the next links; False (and `failure` set) at the first bad one."""
        if self.failure is not None:
            return False
        sid = self.stream_id
        for link in links:
            if link.version != self.expected_version:
                return self._fail(
                    link,
                    self.expected_version,
                    f"version gap: expected version {self.expected_version}, "
                    f"found {link.version} (event missing or reordered)",
                )
            if link.position <= self.prev_position:
                return self._fail(
                    link,
                    link.version,
                    f"position {link.position} does not follow position {self.prev_position} "
                    "of the previous version (rows reordered)",
                )
            if link.prev_hash != self.prev_hash:
                return self._fail(link, link.version, "prev_hash does not match the previous hash")
            document = event_document(
                stream_id=sid,
                version=link.version,
                event_id=link.event_id,
                type=link.type,
                schema_version=link.schema_version,
                payload=link.payload.encode(),
                meta=link.meta.encode(),
            )
            if chain_hash(link.prev_hash, document) != link.hash:
                return self._fail(link, link.version, "hash does not match the event's content")
            self.prev_hash = link.hash
            self.prev_position = link.position
            self.expected_version += 1
            self.checked += 1
        return True

    def finish(self, head_version: int | None, head_hash: str | None) -> VerifyResult:
        """Compare the end of the chain with the stream row (catches a dropped tail)."""
        if self.failure is not None:
            return self.failure
        last = self.expected_version - 1
        if head_version is None:
            if self.checked:
                return self._result_fail(last + 1, "events exist but the stream row is missing")
        elif head_version != last:
            return self._result_fail(
                last + 1,
                f"stream row says version {head_version} but the events end at version {last}",
            )
        elif head_hash != self.prev_hash:
            return self._result_fail(last, "stream row's head hash differs from the last hash")
        return VerifyResult(self.stream_id, ok=True, events_checked=self.checked)

    def _result_fail(self, version: int, reason: str) -> VerifyResult:
        self._fail(None, version, reason)
        assert self.failure is not None
        return self.failure
