"""`king audit --all --workers N` spreads the games over processes and answers as one process
does, in the same order, naming the same tampered game; a progress bar never gets into --json
output (issue 19)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import sqlalchemy as sa

from bench.audit import build_games
from services.cli import main


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object], str]:
    status = main(["audit", "--all", "--json", *args])
    captured = capsys.readouterr()
    return status, orjson.loads(captured.out), captured.err


def test_workers_audit_like_one_process_and_name_the_tampered_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'games.db'}"
    ids = build_games(url, 6, mode="short12")
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # one card of the fourth game changed in place
        conn.execute(
            sa.text(
                'UPDATE events SET payload = replace(payload, \'"card":"\', \'"card":"X\') '
                "WHERE stream_id = :s AND version = 40"
            ),
            {"s": f"game-{ids[3]}"},
        )
    engine.dispose()

    status, alone, _ = audit(capsys, "--db", url, "--workers", "1")
    assert status == 1
    assert [g["game_id"] for g in alone["games"]] == ids  # type: ignore[index]
    assert alone["failed"] == [ids[3]]

    status, spread, err = audit(capsys, "--db", url, "--workers", "2", "--progress")
    assert status == 1
    assert spread == alone  # the same answers, in the same order, and JSON only on stdout
    assert "audit" in err  # the bar went to standard error


def test_a_bad_number_of_workers_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--all", "--workers", "-1"])
    assert exit_.value.code == 2
    assert "workers" in capsys.readouterr().err
