"""Plain classes used as values: what the rules core's states share.

The states every card and every event make (`DealSetup`, `DealState`, `GameState`) and the
seat's view of every turn (`SeatView`) are plain classes, not named tuples, because the compiled
build keeps a plain class's fields in a C struct and reads them without a lookup. A named
tuple's value semantics come from this base instead: equal, hashed, shown and pickled by the
fields, and `_replace` for a changed copy.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

# Each value class's field positions by name, made at its first `_replace`.
_positions: dict[type, dict[str, int]] = {}


class Value:
    """A value whose fields, in its constructor's order, are `_FIELDS`. Never changed once made
    (a subclass declares its fields `Final`)."""

    __slots__ = ()
    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        """The fields' values in order (a subclass on a hot path spells them out)."""
        return tuple([getattr(self, name) for name in self._FIELDS])

    def _replace(self, **changes: Any) -> Self:
        """This value with some fields changed (as a named tuple's `_replace`): the event path
        makes the next game state so, once per event, so the fields are set by position."""
        kind = type(self)
        at = _positions.get(kind)
        if at is None:
            at = _positions[kind] = {name: i for i, name in enumerate(self._FIELDS)}
        values = list(self._values())
        for name, value in changes.items():
            i = at.get(name)
            if i is None:
                raise TypeError(f"{kind.__name__} has no field {name!r}")
            values[i] = value
        make: Any = kind
        return make(*values)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Value)
            and type(other) is type(self)
            and self._values() == other._values()
        )

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self._FIELDS, self._values(), strict=True))
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), self._values()
