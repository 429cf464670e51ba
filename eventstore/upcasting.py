"""Upcasters: turn an old (type, schema_version) payload into the current one at read time.

Stored events are never rewritten (their hashes cover the stored form); old games replay
forever because every read passes through the chain v1 → v2 → … → current.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventstore.errors import UpcastError

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class UpcasterRegistry:
    """Maps (event type, schema version n) to a function producing version n + 1."""

    __slots__ = ("_current", "_steps")

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}
        self._current: dict[str, int] = {}

    def register(self, event_type: str, from_version: int, upcaster: Upcaster) -> None:
        """Register the step from `from_version` to `from_version + 1` of `event_type`."""
        if from_version < 1:
            raise UpcastError(f"{event_type}: schema versions start at 1, got {from_version}")
        key = (event_type, from_version)
        if key in self._steps:
            raise UpcastError(f"{event_type}: an upcaster from v{from_version} already exists")
        self._steps[key] = upcaster
        self._current[event_type] = max(self._current.get(event_type, 1), from_version + 1)

    def upcaster(self, event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator form of `register`."""

        def decorate(fn: Upcaster) -> Upcaster:
            self.register(event_type, from_version, fn)
            return fn

        return decorate

    def current_version(self, event_type: str) -> int:
        """The newest schema version known for `event_type` (1 when none is registered)."""
        return self._current.get(event_type, 1)

    def __bool__(self) -> bool:
        return bool(self._steps)

    def current_versions(self) -> dict[str, int]:
        """Each event type with an upcaster, and its newest schema version (a copy): a reader
        of many rows asks this once and upcasts only the rows older than it."""
        return dict(self._current)

    def upcast(
        self, event_type: str, schema_version: int, payload: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Apply every step from `schema_version` to the current version."""
        current = self._current.get(event_type)
        if current is None or schema_version >= current:
            return schema_version, payload
        version = schema_version
        while version < current:
            step = self._steps.get((event_type, version))
            if step is None:
                raise UpcastError(f"{event_type}: no upcaster from v{version} (current v{current})")
            payload = step(payload)
            if not isinstance(payload, dict):
                raise UpcastError(f"{event_type}: upcaster from v{version} returned no dict")
            version += 1
        return version, payload
