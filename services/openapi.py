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
- request bodies that refuse unknown fields say so (`additionalProperties: false`);
- the summary is the docstring's first sentence, the description the whole docstring.
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

from services.problems import PROBLEM_JSON
from services.ratelimit import EXEMPT_PREFIXES
from services.schemas import Problem

BEARER = "bearer"
TOKEN_PARAMS = frozenset({"principal", "admin"})
OPTIONAL_TOKEN_PARAMS = frozenset({"maybe_principal"})
# Operations that never touch the database (so never answer 503 for it).
NO_DATABASE = frozenset({"/health/live", "/metrics"})
# A handler's `opt` key for other media types of its success answer: {media type: schema}.
ALSO_AS = "openapi_also_as"
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
    structs: set[Any] = {Problem}
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
    success = responses.get(str(handler.status_code), {})
    for media_type, schema in handler.opt.get(ALSO_AS, {}).items():
        success.setdefault("content", {})[media_type] = {"schema": schema}
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
