"""The shapes of services.api_types go into Litestar's OpenAPI document as the lead wires
them: as a handler's return type, and a stream's message union as
`responses={200: ResponseSpec(data_container=Union, generate_examples=False, ...)}` (with
examples generated, Litestar puts Struct instances into the document, which cannot be
serialised)."""

from __future__ import annotations

from typing import Any

import orjson
from litestar import Litestar, get
from litestar.openapi.datastructures import ResponseSpec

from services.api_types import (
    STREAMS,
    AuditReport,
    KingRecord,
    Live,
    PairingsRound,
    PublicView,
    Ready,
    SeatView,
    StandingRow,
)
from services.api_types.doc import STREAMS as DOC_STREAMS


def _app() -> Litestar:
    @get("/view", sync_to_thread=False)
    def view() -> PublicView:
        raise NotImplementedError

    @get("/seat", sync_to_thread=False)
    def seat() -> SeatView:
        raise NotImplementedError

    @get("/record", sync_to_thread=False)
    def record() -> KingRecord:
        raise NotImplementedError

    @get("/audit", sync_to_thread=False)
    def audit() -> AuditReport:
        raise NotImplementedError

    @get("/standings", sync_to_thread=False)
    def standings() -> list[StandingRow]:
        raise NotImplementedError

    @get("/pairings", sync_to_thread=False)
    def pairings() -> list[PairingsRound]:
        raise NotImplementedError

    @get("/live", sync_to_thread=False)
    def live() -> Live:
        raise NotImplementedError

    @get("/ready", sync_to_thread=False)
    def ready() -> Ready:
        raise NotImplementedError

    handlers: list[Any] = [view, seat, record, audit, standings, pairings, live, ready]
    for i, union in enumerate(STREAMS.values()):
        spec = ResponseSpec(data_container=union, generate_examples=False, description="message")

        @get(f"/stream{i}", sync_to_thread=False, responses={200: spec}, name=f"stream{i}")
        def stream() -> None:
            raise NotImplementedError

        handlers.append(stream)
    return Litestar(handlers)


def test_every_shape_and_stream_union_goes_into_the_openapi_document() -> None:
    doc = _app().openapi_schema.to_schema()
    text = orjson.dumps(doc).decode()  # serialisable as it is
    schemas = doc["components"]["schemas"]
    for name in ("PublicView", "SeatView", "KingRecord", "AuditReport", "StandingRow"):
        assert name in schemas, name
    assert schemas["PlayAction"]["properties"]["type"] == {"type": "string", "const": "play"}
    for i, union in enumerate(STREAMS.values()):
        content = doc["paths"][f"/stream{i}"]["get"]["responses"]["200"]["content"]
        refs = {s["$ref"].rsplit("/", 1)[1] for s in content["application/json"]["schema"]["oneOf"]}
        assert refs == {cls.__name__ for cls in union.__args__}
        for name in refs:
            tag = schemas[name]["properties"]["type"]
            assert tag["type"] == "string" and "const" in tag, (name, tag)
    assert "the seat's own hand" in text or "the seat's hand" in text
    assert len(DOC_STREAMS) == len(STREAMS)
