"""What every append path shares: chaining events onto a head, the rows stored, the events
returned, and the cache of stream heads the fast paths build on.

`EventStore._write_tx` (the general path, heads read under the lock), its SQLite cached path
and `eventstore.pg_append` (heads from the cache, checked by the database) all build their
rows with `chain_rows`, so the stored JSON and the hash chain cannot differ between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import orjson

from eventstore.canonical import GENESIS_HASH, chain_hash, event_document
from eventstore.records import RecordedEvent, StreamState
from eventstore.validation import EncodedEvent, PreparedAppend

Link = tuple[str, int, str, str, int, str, str, str, str]
"""One event as stored: (stream_id, version, event_id, type, schema_version, payload, meta,
prev_hash, hash); payload and meta are the canonical JSON text."""

Head = tuple[int, str]
"""A stream's (version, head hash); (0, GENESIS_HASH) for a stream without events."""

NO_HEAD: Final[Head] = (0, GENESIS_HASH)

MAX_CACHED_HEADS: Final = 100_000
"""Stream heads remembered; the oldest is forgotten beyond (it then costs one read)."""


def chain_rows(
    stream_id: str, version: int, prev: str, events: Sequence[EncodedEvent]
) -> list[Link]:
    """The rows of `events` appended after the head (`version`, `prev`), each hash linking
    to the one before."""
    links: list[Link] = []
    for e in events:
        version += 1
        digest = chain_hash(
            prev,
            event_document(
                stream_id=stream_id,
                version=version,
                event_id=e.event_id,
                type=e.type,
                schema_version=e.schema_version,
                payload=e.payload,
                meta=e.meta,
            ),
        )
        links.append(
            (
                stream_id,
                version,
                e.event_id,
                e.type,
                e.schema_version,
                e.payload.decode(),
                e.meta.decode(),
                prev,
                digest,
            )
        )
        prev = digest
    return links


def link_items(items: Sequence[PreparedAppend], heads: dict[str, Head]) -> list[list[Link]] | None:
    """Each item's rows chained onto `heads` (which are moved on to the new heads); None when
    an item's expected version is not its head's: the general path must judge it."""
    out: list[list[Link]] = []
    for item in items:
        sid = item.stream_id
        version, prev = heads[sid]
        expected = item.expected
        if expected is StreamState.NO_STREAM:
            expected = 0
        if expected is not StreamState.ANY and expected != version:
            return None
        links = chain_rows(sid, version, prev, item.events)
        last = links[-1]
        heads[sid] = (last[1], last[8])
        out.append(links)
    return out


def recorded(links: Sequence[Link], position: int, at: datetime) -> list[RecordedEvent]:
    """The events `links` describe, at the positions after `position`, recorded `at`."""
    loads = orjson.loads
    out: list[RecordedEvent] = []
    for sid, version, eid, typ, sv, payload, meta, prev, digest in links:
        position += 1
        body = loads(payload)
        extra = {} if meta == "{}" else loads(meta)
        out.append(
            RecordedEvent(position, sid, version, eid, typ, sv, body, extra, at, prev, digest)
        )
    return out


class HeadCache:
    """The heads this process last wrote or read. Only ever a guess: a fast path builds its
    hashes on it and the database checks, under the append lock, that each head is still the
    one stored (else nothing is written and the general path decides). Thread-safe enough:
    a lost update only costs a read."""

    __slots__ = ("_heads",)

    def __init__(self) -> None:
        self._heads: dict[str, Head] = {}

    def remember(self, heads: dict[str, Head]) -> None:
        """Heads known to be committed (after a write, or read)."""
        cache = self._heads
        for sid, head in heads.items():
            cache.pop(sid, None)
            cache[sid] = head
        while len(cache) > MAX_CACHED_HEADS:
            try:
                del cache[next(iter(cache))]
            except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                break

    def seen(self, events: Sequence[RecordedEvent]) -> None:
        """Heads the global feed shows (committed, maybe by another process): kept where they
        are newer than the cached ones, so this process's next append to a stream another
        process wrote to last need not read its head first. A feed that lags never moves a
        head back."""
        newest: dict[str, Head] = {}
        for e in events:
            newest[e.stream_id] = (e.version, e.hash)
        cache = self._heads
        for sid, head in newest.items():
            known = cache.get(sid)
            if known is None or known[0] < head[0]:
                self.remember({sid: head})

    def forget(self, sids: Sequence[str]) -> None:
        """An append's outcome is unknown (or a head moved): read those heads next time."""
        for sid in sids:
            self._heads.pop(sid, None)

    def known(
        self, items: Sequence[PreparedAppend], presume: bool
    ) -> tuple[dict[str, Head], list[str]]:
        """The items' heads as far as this process knows, and the streams it does not know
        and cannot presume new (an expected version above 0, or ANY; any at all unless
        `presume`). A cached head behind an expected version is not known: another
        process appended."""
        heads: dict[str, Head] = {}
        unknown: list[str] = []
        cache = self._heads
        for item in items:
            sid = item.stream_id
            if sid in heads or sid in unknown:
                continue
            head = cache.get(sid)
            expected = item.expected
            if head is not None and not (isinstance(expected, int) and expected > head[0]):
                heads[sid] = head
            elif presume and (expected is StreamState.NO_STREAM or expected == 0):
                heads[sid] = NO_HEAD
            else:
                unknown.append(sid)
        return heads, unknown
