"""`king audit` names tampered events (raw SQL), `king record export` writes a record that
`king record check` accepts, `king db upgrade` migrates both schemas."""

from __future__ import annotations

import os
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient

from eventstore.backends import create_engines
from eventstore.canonical import canonical_json, chain_hash, event_document
from services.app import create_app
from services.cli import main
from services.database import store_settings
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import create_game, create_player, wait_over

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]


def finished_games(settings: Settings, n: int) -> list[str]:
    with TestClient(create_app(settings)) as client:
        token = create_player(client, "owner")
        ids = [create_game(client, token, HOUSE) for _ in range(n)]
        for game_id in ids:
            wait_over(client, game_id)
    return ids


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def env_for(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("KING_DATABASE_URL", settings.url)
    if settings.pg_schema:
        monkeypatch.setenv("KING_PG_SCHEMA", settings.pg_schema)
    return settings.url


class Rows:
    """Raw SQL on the events of one game stream."""

    def __init__(self, settings: Settings) -> None:
        self.engines = create_engines(settings.url, store_settings(settings))

    def all(self, game_id: str) -> list[Any]:
        with self.engines.read.connect() as conn:
            return list(
                conn.execute(
                    sa.text(
                        "SELECT position, version, event_id, type, schema_version, payload, meta, "
                        "prev_hash, hash FROM events WHERE stream_id = :s ORDER BY version"
                    ),
                    {"s": f"game-{game_id}"},
                )
            )

    def run(self, sql: str, **params: object) -> None:
        with self.engines.write.begin() as conn:
            conn.execute(sa.text(sql), params)

    def close(self) -> None:
        self.engines.dispose()


def audit_json(capsys: pytest.CaptureFixture[str], game_id: str) -> tuple[int, dict[str, Any]]:
    status, out = cli(capsys, "audit", game_id, "--json")
    return status, orjson.loads(out)["games"][0]


def test_king_audit_names_altered_removed_reordered_and_rechained_events(
    backend_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = backend_settings(decision_seconds=5)
    clean, altered, removed, reordered, rechained = finished_games(settings, 5)
    env_for(settings, monkeypatch)
    rows = Rows(settings)
    try:
        status, out = cli(capsys, "audit", "--all")
        assert status == 0 and "5 game(s) audited, 0 failed" in out

        # altered: one card changed in place
        target = next(r for r in rows.all(altered) if r.type == "card_played" and r.version > 30)
        payload = orjson.loads(target.payload)
        payload["card"] = "2C" if payload["card"] != "2C" else "3C"
        rows.run(
            "UPDATE events SET payload = :p WHERE position = :pos",
            p=orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode(),
            pos=target.position,
        )
        status, result = audit_json(capsys, altered)
        assert status == 1 and not result["ok"]
        assert result["chain"]["first_bad_version"] == target.version
        assert result["replay"]["first_bad_version"] is not None

        # removed: one event deleted
        gone = next(r for r in rows.all(removed) if r.type == "card_played" and r.version > 40)
        rows.run("DELETE FROM events WHERE position = :pos", pos=gone.position)
        status, result = audit_json(capsys, removed)
        assert status == 1
        assert result["chain"]["first_bad_version"] in (gone.version, gone.version + 1)
        assert result["replay"]["first_bad_version"] == gone.version + 1
        assert "expected version" in result["replay"]["reason"]

        # reordered: two card plays swap places
        a, b = [r for r in rows.all(reordered) if r.type == "card_played"][5:7]
        rows.run("UPDATE events SET version = -1 WHERE position = :p", p=a.position)
        rows.run("UPDATE events SET version = :v WHERE position = :p", v=a.version, p=b.position)
        rows.run("UPDATE events SET version = :v WHERE position = :p", v=b.version, p=a.position)
        status, result = audit_json(capsys, reordered)
        assert status == 1 and result["chain"]["first_bad_version"] == a.version

        # re-chained: a forger rewrites the second deal's hands and every hash after it;
        # the chain verifies, the replay audit does not
        every = rows.all(rechained)
        deal = [r for r in every if r.type == "deal_started"][1]
        forged = orjson.loads(deal.payload)
        forged["hands"][0][0], forged["hands"][1][0] = forged["hands"][1][0], forged["hands"][0][0]
        forged["hands"] = [sorted(h) for h in forged["hands"]]
        link = deal.prev_hash
        for r in every[deal.version - 1 :]:
            body = canonical_json(forged) if r.version == deal.version else r.payload.encode()
            doc = event_document(
                stream_id=f"game-{rechained}",
                version=r.version,
                event_id=r.event_id,
                type=r.type,
                schema_version=r.schema_version,
                payload=body,
                meta=r.meta.encode(),
            )
            new_hash = chain_hash(link, doc)
            rows.run(
                "UPDATE events SET payload = :p, prev_hash = :ph, hash = :h WHERE position = :pos",
                p=body.decode(),
                ph=link,
                h=new_hash,
                pos=r.position,
            )
            link = new_hash
        rows.run("UPDATE streams SET head_hash = :h WHERE id = :s", h=link, s=f"game-{rechained}")
        status, result = audit_json(capsys, rechained)
        assert status == 1 and result["chain"]["ok"], result
        assert result["replay"]["first_bad_version"] >= deal.version
        assert result["replay"]["reason"]

        status, out = cli(capsys, "audit", "--all")
        assert status == 1 and "5 game(s) audited, 4 failed" in out
        assert f"ok   {clean}" in out
        for game_id in (altered, removed, reordered, rechained):
            assert f"FAIL {game_id}" in out
    finally:
        rows.close()


def test_record_export_checks_and_cli_errors_are_clear(
    make_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
) -> None:
    settings = make_settings()
    (game_id,) = finished_games(settings, 1)
    url = env_for(settings, monkeypatch)
    out_file = tmp_path / "game.json"
    assert cli(capsys, "record", "export", game_id, "--db", url, "-o", str(out_file))[0] == 0
    status, out = cli(capsys, "record", "check", str(out_file))
    assert status == 0 and orjson.loads(out)["finished"] is True
    status, out = cli(capsys, "record", "export", game_id)
    assert status == 0 and orjson.loads(out)["shuffle"]["game_id"] == game_id
    assert main(["record", "export", "nope"]) == 2
    assert main(["audit", "nope"]) == 2
    assert main(["audit"]) == 2
    assert main(["audit", "--all", "--db", f"sqlite:///{tmp_path / 'absent.db'}"]) == 2
    assert main(["audit", "--all", "--db", "mysql://x"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "KING_DATABASE_URL" in err


def test_db_upgrade_migrates_both_schemas(
    backend_settings: SettingsFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = backend_settings()
    url = env_for(settings, monkeypatch)
    for _ in range(2):  # twice: idempotent
        assert main(["db", "upgrade", "--db", url]) == 0
    engines = create_engines(url, store_settings(settings))
    try:
        with engines.read.connect() as conn:
            for table in ("eventstore_alembic_version", "king_alembic_version"):
                assert conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar() == 1
    finally:
        engines.dispose()
    assert os.environ["KING_DATABASE_URL"] == url
