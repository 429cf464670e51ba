"""The native build (setup.py, tournament/native.py): the compiled hot modules run only while they
match their source, and CI runs what it installed."""

from __future__ import annotations

import importlib.machinery
import json
import os
from pathlib import Path

import pytest

import domain.deal
from tournament import native
from tournament.native import (
    NATIVE_MODULES,
    NATIVE_STAMP,
    _SourceFirst,
    native_state,
    sources_digest,
)

EXT = importlib.machinery.EXTENSION_SUFFIXES[0]


def built(folder: Path) -> Path:
    """A package folder as the install leaves it: sources, an extension per module, the stamp."""
    for name in NATIVE_MODULES:
        (folder / f"{name}.py").write_text(f"X = {name!r}\n", encoding="utf-8")
        (folder / f"{name}{EXT}").write_bytes(b"")
    stamp = {"sources": sources_digest(folder), "modules": list(NATIVE_MODULES)}
    (folder / NATIVE_STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    return folder


def test_a_current_build_runs(tmp_path: Path) -> None:
    assert native_state(built(tmp_path), {}) == "native"


def test_an_edited_source_runs_as_python_until_the_next_install(tmp_path: Path) -> None:
    folder = built(tmp_path)
    with (folder / "deal.py").open("a", encoding="utf-8") as f:
        f.write("# edited\n")
    assert native_state(folder, {}) == "pure: source changed"


@pytest.mark.parametrize("gone", ["extension", "stamp", "bad stamp"])
def test_a_missing_or_broken_build_runs_as_python(tmp_path: Path, gone: str) -> None:
    folder = built(tmp_path)
    if gone == "extension":
        (folder / f"fold{EXT}").unlink()
    elif gone == "stamp":
        (folder / NATIVE_STAMP).unlink()
    else:
        (folder / NATIVE_STAMP).write_text("{not json", encoding="utf-8")
    assert native_state(folder, {}) == "pure: not built"


def test_python_can_be_asked_for(tmp_path: Path) -> None:
    folder = built(tmp_path)
    assert native_state(folder, {"KING_PURE_PYTHON": "1"}) == "pure: asked"
    assert native_state(folder, {"KING_PURE_PYTHON": "0"}) == "native"


def test_the_finder_loads_the_compiled_modules_from_source_and_nothing_else(
    tmp_path: Path,
) -> None:
    finder = _SourceFirst("pkg", built(tmp_path))
    spec = finder.find_spec("pkg.deal")
    assert spec is not None and spec.origin == str(tmp_path / "deal.py")
    assert finder.find_spec("pkg.record") is None  # not compiled: the import system's own way
    assert finder.find_spec("other.deal") is None


def test_this_process_runs_what_the_install_left() -> None:
    """Under CI the install must have compiled the modules (or the run asked for Python): a
    compile that failed quietly would leave every bench and test on the slow path."""
    compiled = not domain.deal.__file__.endswith(".py")
    if os.environ.get("KING_PURE_PYTHON", "") not in ("", "0"):
        assert native.STATE == "pure: asked" and not compiled
    elif native.STATE == "native":
        assert compiled
    elif os.environ.get("CI") == "true":
        pytest.fail(f"CI installed no current native build: {native.STATE}")
    else:
        assert not compiled
        pytest.skip(f"no native build here ({native.STATE}): pip install -e . makes one")
