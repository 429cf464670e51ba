"""The OpenAPI document as a contract: every answer an operation can give is in it.

Litestar writes the document from the handlers' signatures; what it cannot see is added here,
once, when the document is first built (`TruthfulOpenAPIPlugin`), from facts about each
handler rather than by hand, so the document cannot drift from the code:

- security only on operations that take a token (`principal`, `admin`), optional on those that
  read one if sent (`maybe_principal`), none on public ones;
- the problem answers every operation can give, each as RFC 9457 `application/problem+json`:
  400 when it takes parameters or a body, 401 when it reads a token, 403 for admin operations,
  404 when its path names something, 415 when it takes a body, 429 when it is rate limited,
  503 when it reads the database; plus what a handler declares itself with `problems(...)`;
- request bodies that refuse unknown fields say so (`additionalProperties: false`), and an
  optional body is not `required`;
- the summary is the docstring's first sentence, the description the whole docstring;
- an example on every answer, body and named parameter (services.examples: each one an
  instance of its shape), and a problem body on every problem answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, get_args

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.routes import HTTPRoute
from litestar.types import Method

from services import api_types
from services.compression import UNCOMPRESSED
from services.problems import PROBLEM_JSON
from services.ratelimit import EXEMPT_PREFIXES
from services.schemas import Problem

BEARER = "bearer"
# Every shape of services.api_types is in the document, referenced or not (the dict-shaped
# answers name theirs by reference).
SHAPES = tuple(
    t
    for t in (getattr(api_types, name) for name in api_types.__all__)
    if isinstance(t, type) and issubclass(t, msgspec.Struct)
)
TOKEN_PARAMS = frozenset({"principal", "admin"})
OPTIONAL_TOKEN_PARAMS = frozenset({"maybe_principal"})
# Operations that never touch the database (so never answer 503 for it).
NO_DATABASE = frozenset({"/health/live", "/metrics"})
# A handler's `opt` key for other media types of its success answer: {media type: schema}.
ALSO_AS = "openapi_also_as"
SAME_SCHEMA: dict[str, Any] = {}  # as an ALSO_AS schema: the success answer's own schema
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"
# An SSE event as a JSON Schema (the form OpenAPI 3.2 gives streams): `data` holds the JSON
# message, whose schema the document gives for the NDJSON lines; `id` resumes the stream.
SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "event": {"type": "string", "description": "the message's `type`"},
        "id": {"type": "string", "description": "for `Last-Event-ID`"},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": "one message, as for the NDJSON lines",
        },
    },
}
REF_TEMPLATE = "#/components/schemas/{name}"
PROBLEM_REF = REF_TEMPLATE.format(name="Problem")
BOUNDS = (
    ("ge", "minimum"),
    ("le", "maximum"),
    ("gt", "exclusiveMinimum"),
    ("lt", "exclusiveMaximum"),
    ("min_length", "minLength"),
    ("max_length", "maxLength"),
)

WHEN = {
    400: "The request does not fit this document (malformed JSON, a missing, mistyped or "
    "out-of-range field or parameter).",
    401: "No token, or a malformed, unknown or revoked one.",
    403: "The token may not do this (not the admin, not the seat's player, ...).",
    404: "Nothing with this id.",
    409: "The request conflicts with the current state (see `code`).",
    413: "The body is larger than the service accepts.",
    415: "The body is not JSON.",
    422: "Well-formed, but refused for what it asks (see `code`, and `rule` for a rules refusal).",
    429: "Over the rate limit: wait `Retry-After` seconds.",
    503: "The game or database is busy or unreachable: send it again after `Retry-After`.",
}


NOT_MODIFIED = ResponseSpec(
    data_container=None, description="Not modified: the `If-None-Match` ETag is still current."
)


def answer(shape: Any, description: str, media_type: str = "application/json") -> ResponseSpec:
    """A success answer of `shape` (a Struct, a union of them, or a list of one), for a
    handler that answers a dict or bytes, so that the document still says its shape."""
    return ResponseSpec(
        data_container=shape,
        description=description,
        media_type=media_type,
        generate_examples=False,
    )


def streamed(message: Any, what: str, *statuses: int) -> dict[str, Any]:
    """A stream handler's `responses` and `opt`: its messages' union, as SSE and as NDJSON
    (the schema is each message's: one JSON object per `data:` record or per line)."""
    return {
        "responses": {200: answer(message, what, NDJSON), **problems(*statuses)},
        "opt": {**UNCOMPRESSED, ALSO_AS: {SSE: SSE_EVENT}},
    }


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """The problem answers a handler gives beyond the ones every operation of its kind gives
    (`responses=problems(409, 422)`)."""
    return {s: _spec(s) for s in statuses}


def _spec(status: int) -> ResponseSpec:
    return ResponseSpec(
        data_container=Problem,
        description=WHEN.get(status, "An error."),
        media_type=PROBLEM_JSON,
        generate_examples=False,
    )


def operation_id(handler: HTTPRouteHandler, _method: Method, _path: list[Any]) -> str:
    """`createGame` for `create_game`: the handler's name, which the tests keep unique."""
    head, *rest = handler.handler_name.split("_")
    return head + "".join(word.title() for word in rest)


class TruthfulOpenAPIPlugin(OpenAPIPlugin):
    """Litestar's OpenAPI plugin, completing its document as the module docstring says."""

    __slots__ = ()

    def provide_openapi_schema(self) -> dict[str, Any]:
        if not self._openapi_schema:
            doc = self.provide_openapi().to_schema()
            complete(doc, self.included_routes.values())
            self._openapi_schema = doc
        return self._openapi_schema


def complete(doc: dict[str, Any], routes: Iterable[HTTPRoute]) -> None:
    """Complete Litestar's document `doc` (as JSON) from the app's routes, in place."""
    structs: set[Any] = {Problem, *SHAPES}
    for route in routes:
        item = doc.get("paths", {}).get(route.path_format or "/")
        if item is None:
            continue
        for handler in route.route_handlers:
            for method in handler.http_methods:
                operation = item.get(method.lower())
                if operation is not None:
                    _complete(route.path_format or "/", handler, operation)
                    structs.update(_structs_of(handler))
    # msgspec validates the bodies, so msgspec's own JSON Schema of each Struct is the exact
    # one (Litestar's loses constraints inside containers, and `forbid_unknown_fields`).
    _, components = msgspec.json.schema_components(
        sorted(structs, key=lambda t: t.__name__), ref_template=REF_TEMPLATE
    )
    doc.setdefault("components", {}).setdefault("schemas", {}).update(components)
    for item in doc.get("paths", {}).values():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                _exemplify(operation)


def _exemplify(operation: dict[str, Any]) -> None:
    """An example on each of the operation's answers, its body and its named parameters."""
    from services import examples  # it reads the controllers' own shapes

    for param in operation.get("parameters", []):
        if param.get("name") in examples.PARAMETERS:
            param.setdefault("example", examples.PARAMETERS[param["name"]])
    body = operation.get("requestBody", {}).get("content", {})
    for media_type, media in body.items():
        _example_on(media_type, media)
    for status, response in operation.get("responses", {}).items():
        for media_type, media in response.get("content", {}).items():
            if media_type == PROBLEM_JSON:
                example = examples.problem_example(int(status), operation.get("operationId", ""))
                media.setdefault("example", example)
            else:
                _example_on(media_type, media, int(status))


def _example_on(media_type: str, media: dict[str, Any], status: int = 200) -> None:
    """Set `media`'s example from its schema (a shape's, a list of one, one of a union)."""
    from services import examples

    if "example" in media:
        return
    given = media.pop("examples", None)
    if isinstance(given, dict) and given:  # a handler's own (a ResponseSpec's examples)
        media["example"] = next(iter(given.values())).get("value")
        return
    schema: dict[str, Any] = media.get("schema", {})
    if media_type == SSE:
        message = _example_of(schema["properties"]["data"].get("contentSchema", {}))
        if message is not None:
            media["example"] = {
                "event": message["type"],
                "id": str(message["id"]),
                "data": msgspec.json.encode(message).decode(),
            }
        return
    text = examples.TEXT.get(media_type.partition(";")[0])
    value = text if text is not None else _example_of(schema)
    if value is not None and status == 503 and isinstance(value, dict) and "checks" in value:
        value = examples.unready(value)  # /health/ready's own 503 is a Ready, not a problem
    if value is not None:
        media["example"] = value


def _example_of(schema: dict[str, Any]) -> Any:
    from services import examples

    ref = schema.get("$ref")
    if isinstance(ref, str):
        return examples.examples().get(ref.rpartition("/")[2])
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        item = _example_of(schema["items"])
        return None if item is None else [item]
    for option in schema.get("oneOf", schema.get("anyOf", ())):
        value = _example_of(option)
        if value is not None:
            return value
    return None


def _structs_of(handler: HTTPRouteHandler) -> Iterator[Any]:
    """The Structs a handler takes and answers with (its body, its return, its responses)."""
    signature = handler.parsed_fn_signature
    data = signature.parameters.get("data")
    roots = [signature.return_type.annotation]
    if data is not None:
        roots.append(data.annotation)
    roots.extend(spec.data_container for spec in (handler.responses or {}).values())
    seen: set[Any] = set()
    while roots:
        tp = roots.pop()
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            if tp not in seen:
                seen.add(tp)
                yield tp
        else:
            roots.extend(get_args(tp))


def _complete(path: str, handler: HTTPRouteHandler, operation: dict[str, Any]) -> None:
    names = set(handler.parsed_fn_signature.parameters)
    token = bool(names & TOKEN_PARAMS)
    optional = not token and bool(names & OPTIONAL_TOKEN_PARAMS)
    if token:
        operation["security"] = [{BEARER: []}]
    elif optional:
        operation["security"] = [{}, {BEARER: []}]
    else:
        operation["security"] = []
    params = operation.get("parameters", [])
    for param in params:
        _constrain(handler, param)
    body = "requestBody" in operation
    taken = handler.parsed_fn_signature.parameters.get("data")
    if body and taken is not None and (taken.is_optional or taken.has_default):
        operation["requestBody"]["required"] = False  # e.g. a pause with no reason: no body
    statuses: set[int] = set()
    if params or body:
        statuses.add(400)
    if token or optional:
        statuses.add(401)
    if "admin" in names:
        statuses.add(403)
    if any(p.get("in") == "path" for p in params):
        statuses.add(404)
    if body:
        statuses.update((413, 415))
    if not path.startswith(EXEMPT_PREFIXES):
        statuses.add(429)
    if path not in NO_DATABASE:
        statuses.add(503)
    responses = operation.setdefault("responses", {})
    declared = {str(s) for s in handler.responses or {}}
    for status in statuses:
        responses.setdefault(str(status), {})
    for key, response in responses.items():
        if int(key) >= 400 and key not in declared:
            # Litestar's own 400 says `{status_code, detail, extra}` as application/json:
            # every problem here is the one Problem shape, as problem+json.
            response["content"] = {PROBLEM_JSON: {"schema": {"$ref": PROBLEM_REF}}}
            response["description"] = WHEN.get(int(key), response.get("description", "An error."))
    also: dict[str, dict[str, Any]] = handler.opt.get(ALSO_AS, {})
    success: dict[str, Any] = responses.get(str(handler.status_code), {})
    content: dict[str, Any] = success.setdefault("content", {}) if also else {}
    media: dict[str, Any] = next(iter(content.values()), {})
    first: dict[str, Any] = media.get("schema", {})
    for media_type, schema in also.items():
        # By value: Litestar copies a handler's `opt`, so these are equal, not identical.
        if schema == SAME_SCHEMA:
            schema = first
        elif schema == SSE_EVENT:
            data = {**SSE_EVENT["properties"]["data"], "contentSchema": first}
            schema = {**SSE_EVENT, "properties": {**SSE_EVENT["properties"], "data": data}}
        content[media_type] = {"schema": schema}
    doc = (handler.fn.__doc__ or "").strip()
    if doc:
        operation["summary"] = _first_sentence(doc)
        operation["description"] = " ".join(doc.split())


def _constrain(handler: HTTPRouteHandler, param: dict[str, Any]) -> None:
    """Bounds of a parameter Litestar leaves out (a bound of 0, a bound on an optional value)."""
    parsed = handler.parsed_fn_signature.parameters.get(param.get("name", ""))
    kwarg = getattr(parsed, "kwarg_definition", None)
    schema = param.get("schema")
    if kwarg is None or not isinstance(schema, dict):
        return
    target = next(
        (s for s in schema.get("oneOf", ()) if s.get("type") in ("integer", "number")), schema
    )
    for attr, key in BOUNDS:
        value = getattr(kwarg, attr, None)
        if value is not None:
            target[key] = value
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema and target is not schema:
            target.setdefault(key, schema.pop(key))


def _first_sentence(doc: str) -> str:
    flat = " ".join(doc.split())
    head, dot, _ = flat.partition(". ")
    return (head + ("." if dot else "")).rstrip(":")


def use_truthful_openapi(app: Litestar) -> None:
    """Make the app's OpenAPI plugin the completing one. Litestar looks the plugin up by its
    exact type, so it cannot be replaced by a subclass' instance: the instance's class is
    changed instead (the subclass adds no state, only the completion)."""
    plugin = app.plugins.get(OpenAPIPlugin)
    plugin.__class__ = TruthfulOpenAPIPlugin
