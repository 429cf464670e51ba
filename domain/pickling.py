"""How the frozen dataclasses of compiled modules pickle: rebuilt through their constructor.

The native build turns a compiled module's dataclasses into compiled classes, whose default
pickling restores an object by setting its attributes, which a frozen class refuses. A class
that returns `by_fields(self)` from `__reduce__` pickles (and copies) alike in both builds:
the process pools of the analysis and the audit send game states between processes.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def by_fields(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """`obj`'s class and its fields' values in order: what `__reduce__` returns."""
    return type(obj), tuple([getattr(obj, f.name) for f in fields(obj)])
