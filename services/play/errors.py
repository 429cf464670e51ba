"""What the play package refuses, under one root; each maps to one HTTP status."""

from __future__ import annotations


class PlayError(Exception):
    """The root of the play package's refusals."""


class TableError(PlayError, ValueError):
    """A table that cannot be set: bad seats, rules or time limit (HTTP 400)."""


class Forbidden(PlayError, PermissionError):
    """The token may not do this (HTTP 403)."""


class Conflict(PlayError, RuntimeError):
    """The request does not fit the game's state (HTTP 409)."""
