"""`king analyse`: a stored game or a record file, the table and --json (the analysis shape),
exit 2 with a clear message (never a traceback) for what cannot be analysed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from litestar.testing import TestClient

import tournament.analysis as analysis
from domain.game import replay
from domain.record import to_record
from services.app import create_app
from services.cli import main
from tests.service.conftest import SettingsFactory
from tests.service.helpers import create_game, create_player, wait_over
from tests.tournament.analysis_helpers import RolloutSolver, game_until, played_game

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
REAL_SOLVER = analysis.default_solver


@pytest.fixture(autouse=True)
def stand_in_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's solver replaced by the fixed-rollout stand-in (what is tested here is the
    command, not the solver's values)."""

    def solver(model: str = "paranoid", node_budget: int | None = None) -> RolloutSolver:
        return RolloutSolver(model="paranoid", node_budget=node_budget)

    monkeypatch.setattr(analysis, "default_solver", solver)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def record_file(tmp_path: Path, doc: dict[str, Any], name: str = "game.json") -> str:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(doc))
    return str(path)


def test_a_record_file_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = played_game("short12")
    path = record_file(tmp_path, to_record(replay(events)))
    status, out, err = run(capsys, "analyse", path, "--json", "--exact", "--no-progress")
    assert status == 0, err
    body = orjson.loads(out)
    assert set(body) >= {"game_id", "deals"}
    assert len(body["deals"]) == 12
    for d in body["deals"]:
        assert set(d) >= {"deal", "contract", "cards"}
        for c in d["cards"]:
            assert set(c) >= {"trick", "seat", "card", "best", "cost"}
            assert c["cost"] >= 0 and (c["cost"] == 0) == (c["card"] in c["best"])
    assert body["exact"] is True and body["node_budget"] is None


def test_one_deal_as_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = played_game("short12")
    path = record_file(tmp_path, to_record(replay(events)))
    status, out, _ = run(capsys, "analyse", path, "--deal", "2", "--no-progress")
    assert status == 0
    assert "Deal 2 " in out and "Deal 1 " not in out and "Deal 3 " not in out
    assert "exact" in out and "Players" in out


def test_a_budget_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = played_game("short12")
    path = record_file(tmp_path, to_record(replay(events)))
    status, out, _ = run(
        capsys, "analyse", path, "--deal", "1", "--budget", "1000", "--json", "--no-progress"
    )
    assert status == 0
    assert orjson.loads(out)["node_budget"] == 1000


def test_the_real_solver_on_one_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(analysis, "default_solver", REAL_SOLVER)
    events = played_game("short12")
    path = record_file(tmp_path, to_record(replay(events)))
    argv = ("analyse", path, "--deal", "1", "--budget", "200", "--no-progress")
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    body = orjson.loads(out)
    assert body["model"] == "paranoid" and body["node_budget"] == 200
    cards = body["deals"][0]["cards"]
    assert len(cards) == 52
    assert all(c["exact"] for c in cards if c["trick"] > 13 - analysis.EXACT_TRICKS)
    assert not body["exact"]  # the early tricks were searched within the budget
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert "searched within 200 nodes" in out


def test_a_deal_in_play_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state, _ = game_until(deal=2, cards=6)
    path = record_file(tmp_path, to_record(state, public=False))  # the operator's, with deal 2
    status, out, err = run(capsys, "analyse", path, "--deal", "2", "--no-progress")
    assert status == 2 and out == ""
    assert "deal 2 is in play" in err and "Traceback" not in err
    status, out, _ = run(capsys, "analyse", path, "--json", "--no-progress")
    assert status == 0
    assert [d["deal"] for d in orjson.loads(out)["deals"]] == [1]


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"{not json", "is not JSON"), (b'{"format": "nope"}', "not a king-record/1")],
)
def test_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    status, out, err = run(capsys, "analyse", str(path))
    assert status == 2 and out == "" and says in err and "Traceback" not in err


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["analyse", "g-1", "--deal", "0"])
    assert exc.value.code == 2
    assert "must be 1 or more" in capsys.readouterr().err


def test_a_stored_game_and_an_unknown_one(
    make_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
    monkeypatch.setenv("KING_DATABASE_URL", settings.url)
    capsys.readouterr()  # the service's own log lines
    status, out, err = run(capsys, "analyse", game_id, "--json", "--deal", "1", "--no-progress")
    assert status == 0, err
    body = orjson.loads(out)
    assert body["game_id"] == game_id and [d["deal"] for d in body["deals"]] == [1]
    status, out, err = run(capsys, "analyse", "no-such-game")
    assert status == 2 and out == ""
    assert "no game 'no-such-game' in the database" in err and "Traceback" not in err
