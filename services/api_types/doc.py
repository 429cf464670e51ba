"""The "Stream messages" section of docs/API.md, written from the message shapes, so the
document lists exactly the message types and fields of services.api_types.messages:
`python -m services.api_types.doc` prints it (tests/service/test_api_types_doc.py checks that
docs/API.md holds it)."""

from __future__ import annotations

import inspect as pyinspect
from typing import Any, get_args

import msgspec.inspect as mi
from msgspec import UnsetType

from services.api_types.common import ContractName
from services.api_types.lobby import LobbyMessage
from services.api_types.messages import (
    PlayerNotice,
    PublicGameMessage,
    SeatGameMessage,
)
from services.api_types.tournaments import TournamentMessage

# Shapes named rather than spelled out (they are large or documented elsewhere).
NAMED = {"SeatView": "a seat's view", "RuleOptions": "every rule option", "RuleChanges": "rules"}
STREAMS: tuple[tuple[str, str, Any], ...] = (
    (
        "A game's public stream",
        'GET /api/v1/games/{id}/events: `{"id": <version>, "game_id", "type", "data"}`',
        PublicGameMessage,
    ),
    (
        "A seat's stream",
        "GET /api/v1/games/{id}/seats/{seat}/events: every message of the public stream, but these",
        SeatGameMessage,
    ),
    (
        "A player's notices",
        "GET /api/v1/me/events: "
        '`{"id": "<game_id>:started" (or ":over"), "game_id", "type", "data"}`',
        PlayerNotice,
    ),
    (
        "A tournament's stream",
        "GET /api/v1/tournaments/{id}/events: "
        '`{"id": <version>, "tournament_id", "type", "at", "data"}`',
        TournamentMessage,
    ),
    (
        "The lobby's stream",
        'GET /api/v1/lobby/events: `{"id": <feed position>, "table_id", "type", "data"}`, '
        "`data` the table as it is after the change",
        LobbyMessage,
    ),
)
PATTERNS = {
    "^[2-9TJQKA][SHDC]$": "card",
    r"^-?\d+(/\d+)?$": "fraction",
    "^[0-9a-f]{64}$": "hex",
}


def type_text(t: mi.Type, depth: int = 0) -> str:
    """A short, readable name of a field's type."""
    if isinstance(t, mi.Metadata):
        return type_text(t.type, depth)
    if isinstance(t, mi.IntType):
        return "seat" if (t.ge, t.le) == (0, 3) else "int"
    if isinstance(t, mi.StrType):
        return PATTERNS.get(t.pattern or "", "str")
    if isinstance(t, mi.BoolType):
        return "bool"
    if isinstance(t, mi.FloatType):
        return "float"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.DateTimeType):
        return "time"
    if isinstance(t, mi.AnyType):
        return "any"
    if isinstance(t, mi.LiteralType):
        if set(t.values) == set(get_args(ContractName)):
            return "contract"
        return " or ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in t.values)
    if isinstance(t, mi.ListType):
        return f"[{type_text(t.item_type, depth)}]"
    if isinstance(t, mi.TupleType):
        return "[" + ", ".join(type_text(x, depth) for x in t.item_types) + "]"
    if isinstance(t, mi.DictType):
        return f"{{{type_text(t.key_type, depth)}: {type_text(t.value_type, depth)}}}"
    if isinstance(t, mi.UnionType):
        return " or ".join(type_text(x, depth) for x in t.types if not _unset(x))
    if isinstance(t, mi.StructType):
        name = t.cls.__name__
        if name in NAMED:
            return NAMED[name]
        if t.tag is not None:
            return f'"{t.tag}" action'
        return "{" + ", ".join(_field(f, depth + 1) for f in t.fields) + "}"
    return str(t)


def _unset(t: mi.Type) -> bool:
    return isinstance(t, mi.CustomType) and t.cls is UnsetType


def _field(f: mi.Field, depth: int) -> str:
    if depth:
        return f.name
    return f"`{f.name}` {type_text(f.type, depth)}"


def _doc(cls: type) -> str:
    text = pyinspect.getdoc(cls) or ""
    return " ".join(text.split("\n\n")[0].split()) if cls.__doc__ else ""


def markdown() -> str:
    out = ["## Stream messages", ""]
    out.append(
        "Every message type of every stream, with its `data` fields (written from "
        "`services/api_types/` by `python -m services.api_types.doc`). Types: "
        "`card` is a card name like `QS`, `seat` 0-3, `fraction` exact text like `15/2`, "
        "`hex` 64 hex digits, `contract` a contract id (docs/RULES.md); `[x]` a list; `{a, b}` "
        "an object."
    )
    for title, where, union in STREAMS:
        out += ["", f"### {title}", "", where + ".", "", "| type | data | |", "| --- | --- | --- |"]
        shared = set(get_args(PublicGameMessage)) if union is not PublicGameMessage else set()
        for cls in get_args(union):
            if cls in shared:
                continue
            info = mi.type_info(cls)
            assert isinstance(info, mi.StructType)
            data = next(f for f in info.fields if f.name == "data")
            body = data.type
            assert isinstance(body, mi.StructType)
            fields = ", ".join(_field(f, 0) for f in body.fields) or "(none)"
            about = _doc(cls) or _doc(body.cls)
            out.append(f"| `{info.tag}` | {fields} | {about} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
