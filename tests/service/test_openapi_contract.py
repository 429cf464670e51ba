"""The OpenAPI document tells the truth: Schemathesis runs every check (`--checks all`) on
every operation of a live `king serve` (bounded examples, a fixed seed so that a run can be
repeated), through its example, coverage, fuzzing and stateful phases, and finds nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import ADMIN, HTTP, Serve, serve_env

HERE = Path(__file__).resolve().parent
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Serve]:
    env = serve_env(tmp_path, f"sqlite:///{tmp_path / 'king.db'}", None)
    # With its driver: the tables Schemathesis sets are played to the end by house bots, so
    # that their streams end too (a stream of a game nobody plays would only time out).
    serve = Serve(tmp_path, "contract", env)
    try:
        serve.ready()
        yield serve
    finally:
        serve.stop()


def _schemathesis(
    url: str, token: str, examples: int, *extra: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"}
    args = [
        str(SCHEMATHESIS),
        "--config-file",
        str(HERE / "schemathesis.toml"),
        "run",
        f"{url}/schema/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(examples),
        "--seed",
        "1",
        # One worker: with two, Schemathesis's threads parse Hypothesis lambdas' source at
        # once, and CPython 3.11's AST builder keeps its recursion depth in state the threads
        # share (python/cpython#106905): the coverage phase once died on "AST constructor
        # recursion depth mismatch", a failure of the tool, not of the service.
        "--workers",
        "1",
        # Streams that follow (a player's notices, a tournament not yet started) never end
        # by themselves: a short timeout reads their start and moves on, as before with
        # Schemathesis's default.
        "--request-timeout",
        "5",
        "-H",
        f"Authorization: Bearer {token}",
        *extra,
    ]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_schemathesis_finds_no_failure_as_the_admin(service: Serve) -> None:
    run = _schemathesis(service.url, ADMIN, 10)
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-3000:]
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", run.stdout)
    assert selected is not None and selected.group(1) == selected.group(2), run.stdout[:3000]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_schemathesis_finds_no_failure_as_a_player(service: Serve) -> None:
    """A player's token reaches what the admin's cannot (its own `/me` operations) and is
    refused what only the admin may do: both answers must be in the document too."""
    r = HTTP.post(
        service.url + "/api/v1/players",
        json={"id": "ada", "name": "Ada"},
        headers={"authorization": f"Bearer {ADMIN}"},
    )
    assert r.status_code == 201, r.text
    run = _schemathesis(service.url, r.json()["token"], 5)
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-3000:]
