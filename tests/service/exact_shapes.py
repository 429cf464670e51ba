"""`exact(value, shape)`: a JSON value decodes strictly as a services.api_types shape, also
with every Struct in it forbidding unknown fields, and encodes back to the same value."""

from __future__ import annotations

import functools
import types
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
import orjson
from msgspec import Struct, structs


@functools.cache
def forbidding(shape: Any) -> Any:
    """`shape` with every Struct in it replaced by a subclass that has
    `forbid_unknown_fields=True` (same fields, tag and checks)."""
    if isinstance(shape, type) and issubclass(shape, Struct):
        config = shape.__struct_config__
        fields: list[Any] = []
        for f in structs.fields(shape):
            if f.default is msgspec.NODEFAULT:
                fields.append((f.name, forbidding(f.type)))
            else:
                fields.append((f.name, forbidding(f.type), f.default))
        return msgspec.defstruct(
            shape.__name__,
            fields,
            bases=(shape,),
            tag=config.tag,
            tag_field=config.tag_field,
            forbid_unknown_fields=True,
            module=__name__,
        )
    origin = get_origin(shape)
    if origin is Annotated:
        inner, *meta = get_args(shape)
        return Annotated[(forbidding(inner), *meta)]
    if origin in (Union, types.UnionType):
        return Union[tuple(forbidding(a) for a in get_args(shape))]  # noqa: UP007
    if origin in (list, tuple, dict):
        return origin[tuple(forbidding(a) for a in get_args(shape))]
    return shape


def exact(value: Any, shape: Any) -> Any:
    """`value` decoded strictly as `shape` (no coercion; every pattern, bound, Literal and
    check), with unknown fields refused; it must encode back to the same JSON value, so a
    field the shape lacks or a value it changes fails too."""
    msgspec.convert(value, forbidding(shape), strict=True)
    decoded = msgspec.convert(value, shape, strict=True)
    assert orjson.loads(msgspec.json.encode(decoded)) == value, (shape, value)
    return decoded
