"""`king record export --all | --tournament` and `king record import`: the same NDJSON as the
HTTP export, into an empty database (SQLite and PostgreSQL), audited clean there and exported
again to the same bytes; one pretty-printed document; refusals line by line."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from domain.rules import Rules
from services.cli import main
from services.database import open_store
from services.settings import load_settings
from tournament.runner import TournamentRunner, parse_players

Use = Callable[[str], list[str]]  # a database's `--db` arguments, after setting its schema


@pytest.fixture(params=["sqlite", "postgres"])
def databases(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Use]:
    """`use(name)`: the CLI arguments naming database `name` (an empty one at first use)."""
    monkeypatch.delenv("KING_PG_SCHEMA", raising=False)
    if request.param == "sqlite":
        yield lambda name: ["--db", f"sqlite:///{tmp_path / name}.db"]
        return
    make = request.getfixturevalue("pg_schemas")
    schemas: dict[str, tuple[str, str]] = {}

    def use(name: str) -> list[str]:
        if name not in schemas:
            schemas[name] = make()
        url, schema = schemas[name]
        monkeypatch.setenv("KING_PG_SCHEMA", schema)
        return ["--db", url]

    yield use


def run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    status = main(list(argv))
    out, err = capsysbinary.readouterr()
    return status, out, err.decode()


def play_tournaments(db: list[str]) -> dict[str, list[str]]:
    store = open_store(load_settings(database_url=db[1]))
    try:
        runner = TournamentRunner(store)
        games = {}
        for tid in ("cup", "plate"):
            runner.create(tid, parse_players("random*4"), rounds=1, rules=Rules(mode="short12"))
            games[tid] = [r.game_id for r in runner.run(tid).results]
        return games
    finally:
        store.close()


def test_export_all_import_into_an_empty_database_and_back(
    databases: Use, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    games = play_tournaments(databases("source"))
    out = tmp_path / "all.ndjson"
    status, _, err = run(
        capsysbinary, "record", "export", "--all", *databases("source"), "--out", str(out)
    )
    assert status == 0, err
    exported = out.read_bytes().splitlines()
    assert len(exported) == 2
    status, cup, _ = run(
        capsysbinary, "record", "export", "--tournament", "cup", *databases("source")
    )
    assert status == 0 and cup.splitlines() == exported[:1]
    status, _, err = run(
        capsysbinary, "record", "export", "--tournament", "nope", *databases("source")
    )
    assert status == 2 and "nope" in err

    status, report, err = run(
        capsysbinary, "record", "import", str(out), "--origin", "cli", *databases("copy")
    )
    assert status == 0, err
    lines = [json.loads(x) for x in report.splitlines()]
    assert [x["status"] for x in lines] == ["stored", "stored"]
    assert [x["game_id"] for x in lines] == games["cup"] + games["plate"]
    assert "2 stored" in err
    status, _, err = run(capsysbinary, "audit", "--all", *databases("copy"))
    assert status == 0, err
    status, again, _ = run(capsysbinary, "record", "export", "--all", *databases("copy"))
    assert again == out.read_bytes()
    # Again: nothing new is stored.
    status, report, _ = run(capsysbinary, "record", "import", str(out), *databases("copy"))
    assert status == 0
    assert [json.loads(x)["status"] for x in report.splitlines()] == ["already_stored"] * 2


def test_one_pretty_document_and_refusals(
    databases: Use,
    capsysbinary: pytest.CaptureFixture[bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    games = play_tournaments(databases("source"))
    game_id = games["cup"][0]
    pretty = tmp_path / "one.json"
    status, _, _ = run(
        capsysbinary, "record", "export", game_id, *databases("source"), "-o", str(pretty)
    )
    assert status == 0 and pretty.read_bytes().count(b"\n") > 1  # indented over many lines
    status, report, err = run(
        capsysbinary, "record", "import", str(pretty), "--id", "renamed", *databases("copy")
    )
    assert status == 0, err
    assert json.loads(report) == {
        "line": 1,
        "status": "stored",
        "game_id": "renamed",
        "origin": "import",
    }

    doc = orjson.loads(pretty.read_bytes())
    doc["deals"][0]["plays"][0] = doc["deals"][0]["plays"][1]
    batch = tmp_path / "batch.ndjson"
    batch.write_bytes(b"\n".join([orjson.dumps(doc), b"[1, 2", b""]))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(open(batch, "rb")))  # noqa: SIM115
    status, report, err = run(capsysbinary, "record", "import", "-", *databases("copy"))
    assert status == 1 and "2 refused" in err
    first, second = (json.loads(x) for x in report.splitlines())
    assert first["line"] == 1 and first["error"]["deal"] == 0 and first["error"]["play"] == 0
    assert first["error"]["code"] == "card_not_in_hand" and first["error"]["rule"].startswith("R-")
    assert second["line"] == 2 and second["error"]["code"] == "malformed"
    status, out, _ = run(capsysbinary, "record", "export", "--all", *databases("copy"))
    assert len(out.splitlines()) == 1  # only the one stored before
    status, _, err = run(
        capsysbinary, "record", "import", str(pretty), "--origin", "a b", *databases("copy")
    )
    assert status == 2 and "--origin" in err
