"""Errors the entry points turn into a clear message for the user."""


class UserError(Exception):
    """A problem the user can fix (a bad option, a missing file, an unreachable database)."""
