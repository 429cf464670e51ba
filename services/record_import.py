"""Storing king-record/1 games from elsewhere: each record is checked by the rules, turned into
the events a game played here would have stored, and appended as the stream `game-<id>`.

An imported game is a record, not a table: it has no row in the games index (`king_games`), so
nobody drives it, nobody acts on it, and the lobby does not list it. Its first event
(`game_created`) carries the importer's `origin` in its metadata, which the hash chain covers,
so the audit of the game vouches for the origin too.

Ids: a record names its game only through `shuffle.game_id`; that id is kept when it is a valid
game id (and free). A record without one (an unfinished game's public record, or one of
explicit hands) gets an id made of its own content (`r-` and 24 hex digits of the SHA-256 of
its canonical bytes), so importing the same record twice finds it again. An id already held
by an identical record is `already_stored`, never a second game; by another game, refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from domain.events import Event
from domain.game import GameState, Phase
from domain.record import MalformedRecord, Record, parse_record, record_events, to_record
from eventstore import NO_STREAM, NewEvent, VersionConflict
from tournament.games import GameFailed, GameNotFound, GameRepository, stream_id, to_new_event

ORIGIN_KEY = "origin"
DEFAULT_ORIGIN = "import"
ORIGIN = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}\Z")
GAME_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # play.service.GAME_ID
TABLE_PREFIX = "table-"  # projections.TABLE_PREFIX: a table set here holds the id
CONTENT_ID_PREFIX = "r-"
# One record is tens of kilobytes; a larger one is no game record.
MAX_RECORD_BYTES = 1024 * 1024


def origin_of(meta: Mapping[str, Any]) -> str | None:
    """The origin an imported game's first event names (None for a game played here)."""
    value = meta.get(ORIGIN_KEY)
    return value if isinstance(value, str) else None


def check_origin(origin: str) -> str:
    if not ORIGIN.match(origin):
        raise BadOrigin("an origin is 1-64 letters, digits, '_', '.', ':' or '-'")
    return origin


def record_bytes(state: GameState) -> bytes:
    """The game's public king-record/1 as the record endpoint sends it."""
    return orjson.dumps(to_record(state, public=True))


class RecordImportError(Exception):
    """A record that cannot be stored; `code` says why (the checker's codes and a few more)."""

    code = "malformed"


class BadOrigin(RecordImportError, ValueError):
    code = "bad_origin"


class RecordMalformed(RecordImportError, ValueError):
    """Not JSON, not a king-record/1 document, or too large (the checker's `malformed`)."""


class RecordNotJSON(RecordMalformed):
    """A body or line that is not JSON at all (HTTP 400: it does not fit the document)."""


class RecordTooLarge(RecordMalformed):
    """A record (or a line of an import) beyond MAX_RECORD_BYTES (HTTP 413)."""

    code = "too_large"


class RecordRefused(RecordImportError):
    """The rules refuse an action of the record: the checker's error (code, rule, deal, play,
    message)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error
        self.code = str(error["code"])


class RecordNotStorable(RecordImportError):
    """A valid record this platform does not store as a game (see `code`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class RecordIdTaken(RecordImportError):
    """The record's id is held by another game or table here (HTTP 409)."""

    code = "game_exists"

    def __init__(self, game_id: str, message: str) -> None:
        super().__init__(message)
        self.game_id = game_id


@dataclass(frozen=True, slots=True)
class Imported:
    """A record stored now (`stored`) or found stored already with the same content."""

    game_id: str
    status: Literal["stored", "already_stored"]
    origin: str | None
    finished: bool


def parse_json(raw: bytes) -> object:
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordTooLarge(f"a record is at most {MAX_RECORD_BYTES // 1024} KiB")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RecordNotJSON(f"not JSON: {exc}") from None


class RecordImporter:
    """Checks and stores records in a game repository's store (blocking; any thread)."""

    def __init__(self, repo: GameRepository) -> None:
        self.repo = repo
        self.store = repo.store

    def import_bytes(self, raw: bytes, origin: str, game_id: str | None = None) -> Imported:
        return self.import_document(parse_json(raw), origin, game_id)

    def import_document(self, doc: object, origin: str, game_id: str | None = None) -> Imported:
        """Store one record under `game_id` (default: the record's own id, see the module)."""
        check_origin(origin)
        if game_id is not None and not GAME_ID.match(game_id):
            raise RecordMalformed("a game id is 1-64 letters, digits, '_', '.' or '-'")
        try:
            record = parse_record(doc)
            state, events, error = record_events(record, game_id or "record")
        except MalformedRecord as exc:
            raise RecordMalformed(str(exc)) from None
        except RecursionError:
            raise RecordMalformed("the document is nested too deeply") from None
        if error is not None:
            raise RecordRefused(error["error"])
        _check_storable(record, state)
        body = record_bytes(state)
        if game_id is None:
            game_id = _own_id(record, body)
            state, events, _ = record_events(record, game_id)
        return self._store(game_id, events, body, origin, state.phase is Phase.OVER)

    def _store(
        self, game_id: str, events: list[Event], body: bytes, origin: str, finished: bool
    ) -> Imported:
        sid = stream_id(game_id)
        known = self._already(game_id, body)
        if known is not None:
            return known
        if self.store.stream_info(TABLE_PREFIX + game_id) is not None:
            raise RecordIdTaken(game_id, f"game id {game_id!r} is a table set here")
        new = [to_new_event(e) for e in events]
        first = new[0]
        new[0] = NewEvent(
            type=first.type,
            payload=first.payload,
            event_id=first.event_id,
            meta={ORIGIN_KEY: origin},
        )
        try:
            self.store.append(sid, new, NO_STREAM, stream_type="game")
        except VersionConflict:  # stored meanwhile (by a concurrent import of it, or a start)
            known = self._already(game_id, body)
            if known is not None:
                return known
            raise RecordIdTaken(game_id, f"game id {game_id!r} was taken meanwhile") from None
        return Imported(game_id, "stored", origin, finished)

    def _already(self, game_id: str, body: bytes) -> Imported | None:
        """The stored game of this id if its public record is these bytes; RecordIdTaken if
        another game holds the id; None if the id is free."""
        try:
            state = self.repo.load(game_id)
        except GameNotFound:
            return None
        except GameFailed:
            raise RecordIdTaken(game_id, f"game id {game_id!r} is held by a failed game") from None
        if record_bytes(state) != body:
            raise RecordIdTaken(
                game_id, f"game id {game_id!r} is held by another game (its record differs)"
            )
        first = self.store.read_stream(stream_id(game_id), 1, to_version=1)
        origin = origin_of(first[0].meta) if first else None
        return Imported(game_id, "already_stored", origin, state.phase is Phase.OVER)


def _check_storable(record: Record, state: GameState) -> None:
    if state.phase not in (Phase.AWAITING_DEAL, Phase.OVER):
        raise RecordNotStorable(
            "deal_in_progress",
            "the record stops inside a deal: a game is stored here up to a deal's end (its "
            "public record never shows a deal in play); leave the unfinished deal out",
        )
    if record.shuffle is not None and state.phase is not Phase.OVER:
        raise RecordNotStorable(
            "seed_before_end",
            "the record gives the shuffle's seed of a game that has not ended (the seed tells "
            "every hand still to come): leave the shuffle out, or import the whole game",
        )


def _own_id(record: Record, body: bytes) -> str:
    shuffled = record.shuffle.game_id if record.shuffle is not None else ""
    if GAME_ID.match(shuffled):
        return shuffled
    return CONTENT_ID_PREFIX + hashlib.sha256(body).hexdigest()[:24]
