"""`king --version` names the installed release, as pyproject.toml gives it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from services.cli import main


def test_king_version_prints_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    release = tomllib.loads(
        (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    )["project"]["version"]
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"king {release}"
