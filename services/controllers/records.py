"""Bulk king-record/1: `GET /api/v1/games/export` streams public records as NDJSON, and
`POST /api/v1/records` (admin) stores records made elsewhere (services.record_import)."""

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import Parameter, QueryParameter
from litestar.response import Stream

from domain.game import Phase
from eventstore import EventStore
from services.api_types import KingRecord
from services.container import Services
from services.content_type import require_json
from services.controllers.deps import ServicesDep, provide_admin
from services.examples import import_body
from services.identity import Principal
from services.openapi import ALSO_AS, REF_TEMPLATE, answer, problems
from services.problems import Unprocessable
from services.record_export import DEFAULT_GAMES, MAX_GAMES, RecordExport, Selection
from services.record_import import (
    DEFAULT_ORIGIN,
    GAME_ID,
    MAX_RECORD_BYTES,
    ORIGIN,
    Imported,
    RecordImporter,
    RecordImportError,
    RecordRefused,
    RecordTooLarge,
    check_origin,
    origin_of,
)
from services.schemas import (
    ImportedGameDetail,
    ImportedGameOut,
    RecordImported,
    RecordImportLine,
    RecordImportReport,
)
from tournament.games import GameRepository, LruStates, stream_id

NDJSON = "application/x-ndjson"
# An ISO 8601 time as `datetime.fromisoformat` reads it: a date, a time, a zone.
ISO_TIME = (
    r"^\d{4}-\d{2}-\d{2}"
    r"([T ]\d{2}(:\d{2}(:\d{2}([.,]\d{1,6})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"
)
# An NDJSON import of many games: at most this many bytes a request (Content-Length is
# checked before anything is read) and MAX_GAMES records.
IMPORT_MAX_BODY_BYTES = 64 * 1024 * 1024
ORIGIN_HEADER = "King-Origin"
_ORIGINS_KEPT = 4096


def _is_ndjson(request: Request[Any, Any, Any]) -> bool:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == NDJSON


async def json_or_ndjson(request: Request[Any, Any, Any]) -> Response[Any] | None:
    """The app's `require_json`, with NDJSON allowed too (this route's `before_request`)."""
    return None if _is_ndjson(request) else await require_json(request)


# --- origins ---------------------------------------------------------------------------

_origins: weakref.WeakKeyDictionary[EventStore, OrderedDict[str, str | None]] = (
    weakref.WeakKeyDictionary()
)


def _read_origin(store: EventStore, game_id: str) -> tuple[bool, str | None]:
    first = store.read_stream(stream_id(game_id), 1, to_version=1)
    return (bool(first), origin_of(first[0].meta) if first else None)


async def game_origin(services: Services, game_id: str) -> str | None:
    """The origin of an imported game (None for a game played here, or no game). A game's
    first event never changes, so what is read once is kept."""
    kept = _origins.setdefault(services.store, OrderedDict())
    if game_id in kept:
        return kept[game_id]
    exists, origin = await asyncio.to_thread(_read_origin, services.store, game_id)
    if exists:  # a game not stored yet may still be imported
        kept[game_id] = origin
        while len(kept) > _ORIGINS_KEPT:
            kept.popitem(last=False)
    return origin


def with_origin(response: Response[Any], origin: str | None) -> Response[Any]:
    if origin is not None:
        response.headers[ORIGIN_HEADER] = origin
    return response


async def imported_detail(services: Services, game_id: str) -> ImportedGameDetail | None:
    """An imported game as `GET /api/v1/games/{id}` shows it (None if it is not one)."""
    origin = await game_origin(services, game_id)
    if origin is None:
        return None
    state = await services.games.load(game_id)
    info = await asyncio.to_thread(services.store.stream_info, stream_id(game_id))
    out = ImportedGameOut(
        id=game_id,
        status="over" if state.phase is Phase.OVER else "unfinished",
        seats=list(state.players),
        rules=state.rules.changes(),
        client_seed=state.client_seed,
        origin=origin,
        imported_at=info.created_at if info else datetime.now().astimezone(),
    )
    return ImportedGameDetail(out, services.games.view(state), state.version)


# --- the routes --------------------------------------------------------------------------


def _time(text: str | None) -> datetime | None:
    """A query's ISO 8601 time (a time without a zone is UTC); 422 for one that fits the
    pattern but names no moment (month 13)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Unprocessable(f"{text!r} is not a time") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _imported(result: Imported) -> RecordImported:
    return RecordImported(result.game_id, result.status, result.origin, result.finished)


def _refusal(exc: RecordImportError) -> dict[str, Any]:
    if isinstance(exc, RecordRefused):
        return dict(exc.error)
    return {"code": exc.code, "message": str(exc)}


async def _lines(request: Request[Any, Any, Any]) -> AsyncIterator[bytes | None]:
    """The body's lines without their newlines; None for a line beyond MAX_RECORD_BYTES
    (its bytes are skipped, never held)."""
    held = bytearray()
    skipping = False
    async for chunk in request.stream():
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not skipping:
                    held += chunk[start:]
                    if len(held) > MAX_RECORD_BYTES:
                        held.clear()
                        skipping = True
                break
            if skipping:
                skipping = False
                yield None
            else:
                held += chunk[start:end]
                yield bytes(held)
            held.clear()
            start = end + 1
    if skipping:
        yield None
    elif held:
        yield bytes(held)


@dataclass
class ImportOperation(Operation):
    """The import's operation: its body is read as a stream (so it has no `data` parameter for
    Litestar to describe), one king-record/1 document or NDJSON of many."""

    def __post_init__(self) -> None:
        document = Schema(
            type=OpenAPIType.OBJECT,
            required=["format"],
            description="one king-record/1 document (docs/RECORD.md)",
        )
        many = Schema(type=OpenAPIType.STRING, description="king-record/1 documents, one a line")
        record = import_body()
        self.request_body = RequestBody(
            required=True,
            content={
                "application/json": OpenAPIMediaType(schema=document, example=record),
                # No example here: Schemathesis, which sends the body examples, has no
                # serializer for NDJSON (the JSON one above is the same record).
                NDJSON: OpenAPIMediaType(schema=many),
            },
        )


# The 200 answer: one record found stored already, or the report of an NDJSON import.
_ONE_OR_MANY = {
    "oneOf": [
        {"$ref": REF_TEMPLATE.format(name="RecordImported")},
        {"$ref": REF_TEMPLATE.format(name="RecordImportReport")},
    ]
}


class RecordController(Controller):
    path = "/api/v1"
    tags = ("records",)

    @get(
        "/games/export",
        media_type=NDJSON,
        responses={
            200: answer(KingRecord, "one king-record/1 document per line", NDJSON),
            **problems(404, 422),
        },
    )
    async def export_records(
        self,
        services: ServicesDep,
        tournament: Annotated[str | None, Parameter(max_length=200)] = None,
        player: Annotated[str | None, Parameter(max_length=60)] = None,
        since: Annotated[
            str | None, Parameter(pattern=ISO_TIME, description="ISO 8601; no zone: UTC")
        ] = None,
        until: Annotated[
            str | None, Parameter(pattern=ISO_TIME, description="ISO 8601, excluded")
        ] = None,
        max_games: Annotated[int, QueryParameter(name="max", ge=1, le=MAX_GAMES)] = DEFAULT_GAMES,
    ) -> Stream:
        """Public king-record/1 documents as NDJSON, one a line, oldest game first: each line
        is exactly the body of `GET /api/v1/games/{id}/record` for that game. Filter by
        tournament, seated player, and the time the game's stream was created (since
        included, until excluded); at most `max` records (default 1000, at most 10000)."""
        export = RecordExport(services.store)
        selection = Selection(tournament, player, _time(since), _time(until), max_games)
        ids = None
        if tournament is not None:  # UnknownTournament: 404 before anything is sent
            ids = await asyncio.to_thread(export.tournament_games, tournament)
        if player is not None:  # the player cut reads the games projection: bring it up
            await asyncio.to_thread(services.games.catch_up)

        async def body() -> AsyncIterator[bytes]:
            after = None
            left = max_games
            while left > 0:
                lines, after = await asyncio.to_thread(export.page_of, selection, ids, after, left)
                if lines:
                    yield b"".join(lines)
                left -= len(lines)
                if after is None:
                    return

        return Stream(body(), media_type=NDJSON, headers={"Cache-Control": "no-cache"})

    @post(
        "/records",
        status_code=200,
        before_request=json_or_ndjson,
        request_max_body_size=IMPORT_MAX_BODY_BYTES,
        dependencies={"admin": Provide(provide_admin)},
        operation_class=ImportOperation,
        responses={
            201: ResponseSpec(RecordImported, description="One record, stored now."),
            **problems(400, 409, 413, 415, 422),
        },
        opt={ALSO_AS: {"application/json": _ONE_OR_MANY}},
    )
    async def import_records(
        self,
        request: Request[Any, Any, Any],
        services: ServicesDep,
        admin: NamedDependency[Principal],
        origin: Annotated[str, Parameter(pattern=ORIGIN.pattern)] = DEFAULT_ORIGIN,
        game_id: Annotated[str | None, QueryParameter(name="id", pattern=GAME_ID.pattern)] = None,
    ) -> Response[RecordImported | RecordImportReport]:
        """Store king-record/1 games made elsewhere (admin). One JSON document
        (`application/json`): 201 and the game, 200 when the same record is stored already,
        else a problem with the reason. NDJSON (`application/x-ndjson`): each record on its
        own (the good ones are stored), and a report line by line."""
        check_origin(origin)
        # A repository of its own: checking ids of a large import must not fill the live cache.
        importer = RecordImporter(GameRepository(services.store, LruStates(size=4)))
        if not _is_ndjson(request):
            raw = bytearray()
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > MAX_RECORD_BYTES:
                    raise RecordTooLarge(f"a record is at most {MAX_RECORD_BYTES // 1024} KiB")
            result = await asyncio.to_thread(importer.import_bytes, bytes(raw), origin, game_id)
            if result.status == "stored":
                await asyncio.to_thread(services.games.catch_up)
            out = _imported(result)
            return Response(out, status_code=201 if result.status == "stored" else 200)
        report = await _import_lines(request, importer, origin)
        if report.stored:
            await asyncio.to_thread(services.games.catch_up)
        return Response(report, status_code=200)


async def _import_lines(
    request: Request[Any, Any, Any], importer: RecordImporter, origin: str
) -> RecordImportReport:
    results: list[RecordImportLine] = []
    counts = {"stored": 0, "already_stored": 0, "refused": 0}
    complete = True
    number = 0
    records = 0
    async for line in _lines(request):
        number += 1
        if line is not None and not line.strip():
            continue  # blank lines (a trailing newline, keep-alives) are no records
        if records == MAX_GAMES:
            complete = False
            break
        records += 1
        if line is None:
            error = {"code": RecordTooLarge.code, "message": "the line is longer than 1 MiB"}
            results.append(RecordImportLine(number, "refused", error=error))
            counts["refused"] += 1
            continue
        try:
            result = await asyncio.to_thread(importer.import_bytes, line, origin)
        except RecordImportError as exc:
            taken = getattr(exc, "game_id", None)
            results.append(RecordImportLine(number, "refused", taken, error=_refusal(exc)))
            counts["refused"] += 1
            continue
        results.append(RecordImportLine(number, result.status, result.game_id, result.origin))
        counts[result.status] += 1
    return RecordImportReport(
        origin,
        counts["stored"],
        counts["already_stored"],
        counts["refused"],
        complete,
        results,
    )
