"""`king audit` names tampered events (raw SQL), `king record export` writes a record that
`king record check` accepts, `king db upgrade` migrates both schemas."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from eventstore.backends import create_engines
from eventstore.canonical import canonical_json, chain_hash, event_document
from services.app import create_app
from services.cli import main
from services.database import store_settings
from services.settings import Settings
from tests.service.conftest import SettingsFactory
from tests.service.helpers import create_game, create_player, wait_over

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
# No King (R-KING: 11 tricks in a trump deal end the game): the forgeries need every game's
# twelve deals, and about 1 game in 100 of these seats ended with a King in its first four
# (which once failed CI with an IndexError, the fourth `deal_ended` missing).
WHOLE_GAMES = {"mode": "short12", "king_tricks": 0}


def finished_games(settings: Settings, n: int) -> list[str]:
    with TestClient(create_app(settings)) as client:
        token = create_player(client, "owner")
        ids = [create_game(client, token, HOUSE, rules=WHOLE_GAMES) for _ in range(n)]
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

    def forge(self, game_id: str, version: int, payload: dict[str, Any]) -> None:
        """Replace one event's payload as a forger would: every hash from it on recomputed
        (and the stream's head), so the hash chain verifies and only the content can tell."""
        every = self.all(game_id)
        link = every[version - 1].prev_hash
        for r in every[version - 1 :]:
            body = canonical_json(payload) if r.version == version else r.payload.encode()
            doc = event_document(
                stream_id=f"game-{game_id}",
                version=r.version,
                event_id=r.event_id,
                type=r.type,
                schema_version=r.schema_version,
                payload=body,
                meta=r.meta.encode(),
            )
            new_hash = chain_hash(link, doc)
            self.run(
                "UPDATE events SET payload = :p, prev_hash = :ph, hash = :h WHERE position = :pos",
                p=body.decode(),
                ph=link,
                h=new_hash,
                pos=r.position,
            )
            link = new_hash
        self.run("UPDATE streams SET head_hash = :h WHERE id = :s", h=link, s=f"game-{game_id}")

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
        rows.forge(rechained, deal.version, forged)
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


def _forge_seed(p: dict[str, Any]) -> None:
    p["server_seed"] = "00" * 32  # well-formed, but not the committed seed


def _forge_trick(p: dict[str, Any]) -> None:
    p["winner"] = (p["winner"] + 1) % 4


def _forge_deal(p: dict[str, Any]) -> None:
    p["scores"] = [p["scores"][1], p["scores"][0] + 50, *p["scores"][2:]]


def _forge_game(p: dict[str, Any]) -> None:
    p["totals"] = [p["totals"][0] + 1, *p["totals"][1:]]


# (event type, which one of that type, the forgery, what the audit must say)
FORGERIES = [
    ("seed_revealed", 0, _forge_seed, "does not match the commitment"),
    ("trick_taken", 7, _forge_trick, "trick differs"),
    ("deal_ended", 3, _forge_deal, "deal result differs"),
    ("game_ended", 0, _forge_game, "game result differs"),
]


def forged_games(settings: Settings) -> dict[str, tuple[int, str, str]]:
    """Finished games, one per FORGERIES entry, each forged and re-chained:
    game id -> (forged version, event type, what the audit must say)."""
    games = finished_games(settings, len(FORGERIES))
    rows = Rows(settings)
    forged_at: dict[str, tuple[int, str, str]] = {}
    try:
        for game_id, (kind, nth, forge, reason) in zip(games, FORGERIES, strict=True):
            every = rows.all(game_id)
            of_kind = [r for r in every if r.type == kind]
            assert len(of_kind) > nth, (game_id, kind, nth, Counter(r.type for r in every))
            target = of_kind[nth]
            payload = orjson.loads(target.payload)
            forge(payload)
            rows.forge(game_id, target.version, payload)
            forged_at[game_id] = (target.version, kind, reason)
    finally:
        rows.close()
    return forged_at


def test_king_audit_names_forged_seeds_tricks_and_scores_behind_a_valid_chain(
    backend_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Content forgeries re-chained so the hash chain verifies: only the replay audit (seed
    against its commitment, derived facts recomputed) can name them."""
    settings = backend_settings(decision_seconds=5)
    forged_at = forged_games(settings)
    env_for(settings, monkeypatch)
    capsys.readouterr()  # the service's log lines while the games were played
    for game_id, (version, kind, reason) in forged_at.items():
        status, result = audit_json(capsys, game_id)
        assert status == 1 and not result["ok"], result
        assert result["chain"]["ok"], result["chain"]
        replay = result["replay"]
        assert (replay["first_bad_version"], replay["event_type"]) == (version, kind), replay
        assert reason in replay["reason"], replay
        status, out = cli(capsys, "audit", game_id)
        assert status == 1 and f"FAIL {game_id}" in out
        assert f"replay: event {version} ({kind}): " in out and reason in out, out
    status, out = cli(capsys, "audit", "--all")
    assert status == 1 and f"{len(FORGERIES)} game(s) audited, {len(FORGERIES)} failed" in out


def test_the_audit_endpoint_counts_a_failed_audit(make_settings: SettingsFactory) -> None:
    """A stored hash altered (the events themselves intact, so the game still loads): the
    endpoint names the event and king_audit_failures_total counts it."""
    settings = make_settings(decision_seconds=5)
    clean, broken = finished_games(settings, 2)
    rows = Rows(settings)
    try:
        target = next(r for r in rows.all(broken) if r.type == "card_played")
        rows.run("UPDATE events SET hash = :h WHERE position = :p", h="0" * 64, p=target.position)
    finally:
        rows.close()
    with TestClient(create_app(settings)) as client:
        before = audit_failures(client.get("/metrics").text)
        assert client.get(f"/api/v1/games/{clean}/audit").json()["ok"]
        assert audit_failures(client.get("/metrics").text) == before
        r = client.get(f"/api/v1/games/{broken}/audit")
        assert r.status_code == 200 and not r.json()["ok"], r.text
        assert r.json()["chain"]["first_bad_version"] == target.version
        assert audit_failures(client.get("/metrics").text) == before + 1


def test_the_audit_endpoint_names_forged_games_and_counts_them(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(decision_seconds=5)
    forged_at = forged_games(settings)
    with TestClient(create_app(settings)) as client:
        before = audit_failures(client.get("/metrics").text)
        for game_id, (version, kind, reason) in forged_at.items():
            r = client.get(f"/api/v1/games/{game_id}/audit")
            assert r.status_code == 200, (kind, r.text)
            replay = r.json()["replay"]
            assert not r.json()["ok"] and replay["first_bad_version"] == version, replay
            assert replay["event_type"] == kind and reason in replay["reason"]
        assert audit_failures(client.get("/metrics").text) == before + len(FORGERIES)


def audit_failures(metrics: str) -> float:
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.name == "king_audit_failures_total":
                return float(sample.value)
    raise AssertionError("no king_audit_failures_total in /metrics")


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
