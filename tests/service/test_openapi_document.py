"""The OpenAPI document's promises, read off the document itself: every operation described,
named readably and uniquely, public where it takes no token, and every error answer the one
problem shape; every problem kind listed in docs/API.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import msgspec
import pytest
from litestar._openapi.plugin import OpenAPIPlugin

from services.app import create_app
from services.openapi import SHAPES
from services.problems import KINDS, type_uri
from services.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("get", "post", "put", "delete", "patch")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("openapi")
    settings = Settings(database_url=f"sqlite:///{tmp / 'king.db'}", admin_token="a" * 20)
    app = create_app(settings)
    doc: dict[str, Any] = app.plugins.get(OpenAPIPlugin).provide_openapi_schema()
    return doc


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def test_every_operation_has_a_summary_a_description_and_a_readable_unique_id(
    document: dict[str, Any],
) -> None:
    ops = operations(document)
    assert len(ops) >= 30
    ids = [op["operationId"] for _, _, op in ops]
    assert len(ids) == len(set(ids))
    for path, method, op in ops:
        assert re.fullmatch(r"[a-z]+([A-Z][a-z]+)*", op["operationId"]), (path, method)
        assert op.get("summary") and op.get("description"), (path, method)


def test_only_operations_that_take_a_token_declare_one(document: dict[str, Any]) -> None:
    by_id = {op["operationId"]: op for _, _, op in operations(document)}
    assert "security" not in document  # no blanket requirement over public operations
    for public in ("listGames", "getGame", "getRecord", "healthLive", "getLeaderboard"):
        assert by_id[public]["security"] == [], public
    for private in ("createGame", "submitAction", "getSeatView", "getMe", "createPlayer"):
        assert by_id[private]["security"] == [{"bearer": []}], private
        assert "401" in by_id[private]["responses"], private
    assert by_id["getAudit"]["security"] == [{}, {"bearer": []}]


def test_every_error_answer_is_the_problem_shape(document: dict[str, Any]) -> None:
    problem = document["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail", "code"} <= set(problem["required"])
    for path, method, op in operations(document):
        for status, answer in op["responses"].items():
            if int(status) >= 400 and not (path == "/health/ready" and status == "503"):
                content = answer["content"]
                assert list(content) == ["application/problem+json"], (path, method, status)
                ref = content["application/problem+json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/Problem", (path, method, status)
        if path.startswith("/api/"):
            assert {"429", "503"} <= set(op["responses"]), (path, method)
        if "requestBody" in op:
            assert {"400", "413", "415"} <= set(op["responses"]), (path, method)


def test_bodies_that_refuse_unknown_fields_say_so(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for name in ("GameCreate", "PlayIn", "DeclareIn", "RedealIn", "PlayerCreate"):
        assert schemas[name]["additionalProperties"] is False, name


def test_a_body_is_required_unless_the_operation_takes_none(document: dict[str, Any]) -> None:
    by_id = {op["operationId"]: op for _, _, op in operations(document)}
    for optional in ("pauseTournament", "registerForTournament"):
        assert by_id[optional]["requestBody"]["required"] is False, optional
    for required in ("createGame", "submitAction", "createPlayer", "createTournament"):
        assert by_id[required]["requestBody"]["required"] is True, required


def test_docs_list_every_problem_kind() -> None:
    api = (ROOT / "docs" / "API.md").read_text()
    for kind, (status, _title) in KINDS.items():
        assert type_uri(kind) in api or f"`{kind}`" in api, kind
        assert str(status) in api


def _check(doc: dict[str, Any], schema: dict[str, Any], example: Any, where: object) -> None:
    """`example` fits `schema`, its references read from the document's components."""
    whole = {**schema, "components": doc["components"]}
    errors = [e.message for e in jsonschema_rs.Draft202012Validator(whole).iter_errors(example)]
    assert not errors, (where, errors[:3])


def test_every_operation_has_an_example_of_each_answer_and_body_that_fits_its_schema(
    document: dict[str, Any],
) -> None:
    checked = 0
    for path, method, op in operations(document):
        responses = op["responses"]
        success = [s for s in responses if int(s) < 300]
        assert success, (path, method)
        for status, answer in responses.items():
            for media_type, media in answer.get("content", {}).items():
                where = (path, method, status, media_type)
                assert "example" in media, where
                example = media["example"]
                if media_type == "text/event-stream":
                    _check(document, media["schema"], example, where)
                    content = media["schema"]["properties"]["data"]["contentSchema"]
                    example = json.loads(example["data"])
                    _check(document, content, example, where)
                elif media["schema"].get("type") == "string":
                    assert isinstance(example, str) and example, where
                else:
                    _check(document, media["schema"], example, where)
                checked += 1
        for media_type, media in op.get("requestBody", {}).get("content", {}).items():
            if media_type == "application/x-ndjson":
                continue  # Schemathesis sends body examples and cannot write NDJSON
            assert "example" in media, (path, method, media_type)
            _check(document, media["schema"], media["example"], (path, method, media_type))
        for param in op.get("parameters", []):
            if param["in"] == "path":
                assert "example" in param, (path, method, param["name"])
            if "example" in param:
                _check(document, param["schema"], param["example"], (path, method, param["name"]))
    assert checked >= 200


def test_problem_examples_are_problems_of_their_status(document: dict[str, Any]) -> None:
    for path, method, op in operations(document):
        for status, answer in op["responses"].items():
            media = answer.get("content", {}).get("application/problem+json")
            if media is not None:
                problem = media["example"]
                assert problem["status"] == int(status), (path, method, status)
                kind = problem["type"].rpartition("/")[2]
                assert KINDS[kind][0] == int(status), (path, method, status)


def test_the_shapes_examples_are_their_structs_exactly() -> None:
    """Each example decodes into its Struct and encodes back to itself: no field left out,
    none it does not know."""
    from services import schemas
    from services.api_types import audit, health, lobby, messages, records, tournaments, views
    from services.controllers import lobby as lobby_routes
    from services.controllers import tournaments as tournament_routes
    from services.examples import examples

    modules = (
        schemas,
        audit,
        health,
        messages,
        records,
        tournaments,
        views,
        tournament_routes,
        lobby,
        lobby_routes,
    )
    structs = {
        name: value
        for module in modules
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, msgspec.Struct)
    }
    structs.update({t.__name__: t for t in SHAPES})
    for name, value in examples().items():
        decoded = msgspec.convert(value, structs[name], strict=False)
        assert msgspec.to_builtins(decoded) == value, name
