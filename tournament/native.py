"""Which build of the rules core's hot modules runs: compiled by mypyc, or the Python source.

Installing the project compiles a few modules of `domain/` with mypyc (setup.py): the same
source, as C extensions beside it, about one and a half to two times as fast on a deal's
play, whole games, the audit's fold, the shuffle and the solver. Python would load such an
extension instead of its `.py` even after the source changed, so an edited module would not run
until the next install.
To rule that out, the install writes a stamp of the compiled sources (NATIVE_STAMP), and on
import this module compares it with the sources now: when they differ, when no
extension was built, or with KING_PURE_PYTHON=1, every one of these modules loads from its
source. All or none: the compiled modules call each other directly, so one stale module among
fresh ones would still be run by the others.

It lives here, not in `domain/`, because it reads files and the environment, which the pure
core does not. So it must be imported before `domain`: `tournament`, `services` and `bench`
import it first thing, and so does the tests' conftest. A script that imports `domain` alone
gets whatever the install left beside the sources. Both builds give the same results (CI runs
the domain tests on each).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Literal

# The modules of `domain` that setup.py compiles.
NATIVE_MODULES = (
    "cards",
    "deal",
    "events",
    "fold",
    "game",
    "playout",
    "shuffle",
    "solver",
    "values",
    "view",
    "violations",
)
NATIVE_STAMP = "native.json"
PURE_ENV = "KING_PURE_PYTHON"

State = Literal["native", "pure: asked", "pure: not built", "pure: source changed"]


def sources_digest(folder: Path, modules: Sequence[str] = NATIVE_MODULES) -> str:
    """SHA-256 over the modules' sources, in order (what the stamp records)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update(name.encode() + b"\0" + (folder / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def _built(folder: Path, name: str) -> bool:
    return any(
        (folder / f"{name}{suffix}").exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


def native_state(folder: Path, environ: Mapping[str, str] = os.environ) -> State:
    """Whether the compiled modules in `folder` may run, and if not, why."""
    if environ.get(PURE_ENV, "") not in ("", "0"):
        return "pure: asked"
    stamp = folder / NATIVE_STAMP
    if not stamp.exists() or not all(_built(folder, m) for m in NATIVE_MODULES):
        return "pure: not built"
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return "pure: not built"
    if recorded != sources_digest(folder):
        return "pure: source changed"
    return "native"


class _SourceFirst:
    """A meta path finder that loads the compiled modules of `package` from their source."""

    def __init__(self, package: str, folder: Path) -> None:
        self.package = package
        self.folder = folder

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != self.package or name not in NATIVE_MODULES:
            return None
        return importlib.util.spec_from_file_location(fullname, self.folder / f"{name}.py")


def guard(package: str, folder: Path) -> State:
    """Decide before any of the modules is imported: on anything but "native", put the
    source-first finder in front of the import system."""
    state = native_state(folder)
    # (A module of the package imported before this one ran is past choosing: the project's
    # packages and the tests' conftest import this first, so theirs never are.)
    if state != "native" and not any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFirst(package, folder))
    return state


def domain_folder() -> Path:
    """Where the `domain` package's sources are, found without importing it."""
    spec = importlib.util.find_spec("domain")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the domain package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


# On import, before `domain` loads: the state the process runs in, for benches and logs.
STATE: State = guard("domain", domain_folder())
