"""Every Python example of docs/rules-engine.md runs on its own, as a reader would paste it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules-engine.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)


def test_the_document_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_the_example_runs_by_itself(code: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, f"{DOC.name} example", "exec"), {"__name__": "__doc_example__"})
