"""Games played by a local `king tournament run` export and audit through the service's API."""

from __future__ import annotations

from litestar.testing import TestClient

from domain.record import check_record
from domain.rules import Rules
from services.app import create_app
from tests.service.conftest import SettingsFactory
from tournament.runner import TournamentRunner, parse_players


def test_a_local_tournament_game_exports_and_audits(make_settings: SettingsFactory) -> None:
    app = create_app(make_settings())
    with TestClient(app) as client:
        store = app.state.king.store
        runner = TournamentRunner(store)
        runner.create("loc", parse_players("random*4"), rounds=1, rules=Rules(mode="short12"))
        state = runner.run("loc")
        game_id = state.results[0].game_id
        record = client.get(f"/api/v1/games/{game_id}/record")
        assert record.status_code == 200, record.text
        status, out = check_record(record.json())
        assert status == 0 and out["finished"] is True
        assert out["totals"] == list(state.results[0].totals)
        audit = client.get(f"/api/v1/games/{game_id}/audit")
        assert audit.status_code == 200 and audit.json()["ok"] is True
        assert client.get("/api/v1/games/nope/record").status_code == 404
        assert client.get("/api/v1/games/nope/audit").status_code == 404
