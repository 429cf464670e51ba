"""GET /api/v1/games/{id}/analysis and .../deals/{deal}/analysis: ended deals only, the typed
shape, computed once and kept; a deal in play refused with a problem that names no card."""

from __future__ import annotations

import re
import zlib
from types import SimpleNamespace
from typing import Any

import msgspec
import orjson
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient

import services.analysis
from services import analysis_store
from services.analysis_store import TABLE
from services.api_types import AnalysisPending, GameAnalysis
from services.app import create_app
from services.controllers.analysis import STATE_KEY
from tests.service.conftest import SettingsFactory
from tests.service.helpers import bearer, create_game, create_player, wait_for, wait_over

HOUSE = ["house:random", "house:heuristic", "house:random", "house:random"]
# The rules of a test that asks for deals after the first: with no King (R-KING, off at
# `king_tricks` 0) every deal of short12 is played. A King ends the game at once, and the
# heuristic seat against three random ones makes one now and then, as early as deal 1.
NO_KING = {"mode": "short12", "king_tricks": 0}
CARD = re.compile(r"\b[2-9TJQKA][SHDC]\b")


@pytest.fixture(autouse=True)
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.analysis, "NODE_BUDGET", 50)
    monkeypatch.setattr(services.analysis, "CONTRACT_SAMPLES", 4)


def get(client: Any, path: str, **kw: Any) -> Any:
    """GET an analysis route, asking again while it answers 202 (being computed)."""

    def answered() -> Any:
        r = client.get(path, **kw)
        if r.status_code != 202:
            return r
        assert r.headers["retry-after"] == "5"
        pending = msgspec.convert(r.json(), AnalysisPending, strict=True)
        assert pending.done < pending.total
        return None

    return wait_for(answered, f"{path} to be computed")


def check_shape(body: dict[str, Any]) -> GameAnalysis:
    out = msgspec.convert(body, GameAnalysis, strict=True)
    for d in out.deals:
        for c in d.cards:
            assert c.cost >= 0 and (c.cost == 0) == (c.card in c.best)
    return out


def test_a_finished_game(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        view = wait_over(client, game_id)["view"]
        # Every deal played, in order: twelve, or fewer when a King ended the game (R-KING).
        played = [d["deal"] for d in view["history"] if not d["redeal"]]
        assert played == list(range(1, len(played) + 1)) and played[-1] == view["deal"]
        assert len(played) == 12 or view["king"] is not None
        r = get(client, f"/api/v1/games/{game_id}/deals/1/analysis")
        assert r.status_code == 200, r.text
        one = check_shape(r.json())
        assert one.game_id == game_id and [d.deal for d in one.deals] == [1]
        assert one.node_budget == 50 and one.model == "paranoid"
        assert len(one.deals[0].cards) == sum(1 for _ in one.deals[0].cards) > 0
        service = client.app.state[STATE_KEY]
        computed = service.computed
        again = get(client, f"/api/v1/games/{game_id}/deals/1/analysis")
        assert again.content == r.content and service.computed == computed  # kept
        etag = r.headers["etag"]
        assert (
            client.get(
                f"/api/v1/games/{game_id}/deals/1/analysis", headers={"if-none-match": etag}
            ).status_code
            == 304
        )
        whole = get(client, f"/api/v1/games/{game_id}/analysis")
        assert whole.status_code == 200, whole.text
        every = check_shape(whole.json())
        assert [d.deal for d in every.deals] == played
        assert every.deals[0] == one.deals[0]
        assert service.computed == computed + len(played) - 1  # deal 1 came from the cache
        assert client.get(f"/api/v1/games/{game_id}/deals/13/analysis").status_code == 404
        assert client.get(f"/api/v1/games/{game_id}/deals/21/analysis").status_code == 400


def test_an_unknown_game(client: TestClient) -> None:  # type: ignore[type-arg]
    for url in ("/api/v1/games/nope/analysis", "/api/v1/games/nope/deals/1/analysis"):
        r = client.get(url)
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("application/problem+json")


def test_a_live_deal_is_never_analysed(make_settings: SettingsFactory) -> None:
    """Ada (seat 0) plays with three house bots through deal 1 into deal 2; at her first turn
    of deal 2 that deal is in play: refused, and the game's analysis holds deal 1 only."""
    with TestClient(create_app(make_settings())) as client:
        ada = create_player(client, "ada")
        rules = {**NO_KING, "first_declarer": "seat0"}
        game_id = create_game(client, ada, ["ada", *HOUSE[1:]], rules=rules, decision_seconds=120.0)
        url = f"/api/v1/games/{game_id}"

        def my_turn() -> dict[str, Any] | None:
            body = client.get(f"{url}/seats/0", headers=bearer(ada)).json()
            return body if body["view"]["to_move"] == 0 else None

        seen = 0
        while True:
            turn = wait_for(my_turn, "ada's turn")
            view = turn["view"]
            # At every turn of ada's: the game's analysis holds the deals ended by then only.
            r = get(client, f"{url}/analysis")
            assert r.status_code == 200, r.text
            ended = [d["deal"] for d in view["history"] if not d["redeal"]]
            assert [d["deal"] for d in r.json()["deals"]] == ended
            seen += 1
            if view["deal"] == 2 and view["phase"] == "playing":
                break
            action = view["legal"][0]
            r = client.post(
                f"{url}/actions", json={**action, "version": turn["version"]}, headers=bearer(ada)
            )
            assert r.status_code == 200, r.text
        assert seen > 13  # asked during deal 1 (none ended) and in deal 2 (deal 1 ended)
        r = client.get(f"{url}/deals/2/analysis")
        assert r.status_code == 409
        assert r.headers["content-type"].startswith("application/problem+json")
        problem = r.json()
        assert problem["code"] == "deal_not_ended" and "in play" in problem["detail"]
        assert not CARD.search(r.text)
        r = client.get(f"{url}/deals/3/analysis")
        assert r.status_code == 409 and "not been played" in r.json()["detail"]
        r = get(client, f"{url}/analysis")
        assert r.status_code == 200, r.text
        body = check_shape(r.json())
        assert [d.deal for d in body.deals] == [1]
        # What was analysed is deal 1's public record, nothing of the live deal's hands.
        record = client.get(f"{url}/record").json()
        deal1 = record["deals"][0]
        assert [c.card for c in body.deals[0].cards] == deal1["plays"]


def test_a_long_analysis_answers_202_and_goes_on(
    make_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services.analysis, "WAIT_SECONDS", 0.0)
    with TestClient(create_app(make_settings())) as client:
        token = create_player(client, "owner")
        game_id = create_game(client, token, HOUSE)
        wait_over(client, game_id)
        # Twelve deals, unless a King (R-KING: 11 tricks of a trump deal) ended the game sooner:
        # the heuristic seat against three random ones makes one now and then.
        record = client.get(f"/api/v1/games/{game_id}/record").json()
        played = sum(1 for d in record["deals"] if not d.get("redeal"))
        assert 1 <= played <= 12
        r = client.get(f"/api/v1/games/{game_id}/analysis")
        assert r.status_code == 202 and r.headers["retry-after"] == "5"
        assert r.headers["cache-control"] == "no-store"
        pending = msgspec.convert(r.json(), AnalysisPending, strict=True)
        assert (pending.game_id, pending.status, pending.total) == (game_id, "computing", played)
        done = get(client, f"/api/v1/games/{game_id}/analysis")
        assert done.status_code == 200
        assert len(check_shape(done.json()).deals) == played


PARENT = """
import os, time
from services.analysis import _spawned_pool
pool = _spawned_pool()
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 120)  # a long solve in progress
time.sleep(1)
os._exit(0)  # the service dies without shutting its worker down
"""


def test_the_worker_ends_with_the_service() -> None:
    """A killed service leaves no solver running: the worker watches its parent."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", PARENT], capture_output=True, text=True, cwd=root, check=True
    )
    worker = int(done.stdout.split()[0])
    wait_for(lambda: not Path(f"/proc/{worker}").exists(), "the orphaned worker to end", 10.0)


STOPPING = """
import os, time
from services.analysis import _spawned_pool, stop_pool
pool = _spawned_pool()
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 600)  # a long solve in progress
pool.submit(time.sleep, 600)  # and one queued
time.sleep(1)
stop_pool(pool)  # the service stops; then its process exits as usual
"""


def test_a_stopping_service_ends_its_worker_and_exits_without_waiting_for_the_solve() -> None:
    """A graceful stop abandons the deal being solved: the process does not wait for it at
    its exit (it used to, half a minute and more at the default budget)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", STOPPING],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
        timeout=120,  # a hang guard: waiting for the solve would take 600 s
    )
    worker = int(done.stdout.split()[0])
    assert not Path(f"/proc/{worker}").exists()


def stored_rows(client: Any, game_id: str) -> dict[int, str]:
    """The game's analyses in the database, read here (not through the store): deal -> key."""
    engine = client.app.state.king.repo.store.engines.write
    query = sa.select(TABLE.c.key, TABLE.c.body).where(TABLE.c.game_id == game_id)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return {orjson.loads(zlib.decompress(row.body))["deal"]: row.key for row in rows}


def test_a_deal_is_computed_once_for_every_process_of_the_database(
    backend_settings: SettingsFactory,
) -> None:
    """An ended deal's analysis is kept in the database: a second app on the same database (a
    replica, or this one after a restart) answers it without solving it again, byte for byte."""
    settings_ = backend_settings()
    with TestClient(create_app(settings_)) as first:
        token = create_player(first, "owner")
        game_id = create_game(first, token, HOUSE, rules=NO_KING)
        wait_over(first, game_id)
        path = f"/api/v1/games/{game_id}/deals/2/analysis"
        r = get(first, path)
        assert r.status_code == 200, r.text
        assert first.app.state[STATE_KEY].computed == 1

        wait_for(lambda: stored_rows(first, game_id) or None, "the analysis to be stored")
    with TestClient(create_app(settings_)) as second:
        again = second.get(path)
        assert again.status_code == 200, again.text
        assert again.content == r.content
        assert second.app.state[STATE_KEY].computed == 0
        one = second.get(f"/api/v1/games/{game_id}/deals/1/analysis")  # not stored: computed
        assert one.status_code in (200, 202)


def test_asking_for_one_deal_reads_only_its_row(
    backend_settings: SettingsFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deal's analysis not in this process's memory is read from the database by its key
    alone: one row read and decompressed, not every stored deal of the game (as it was)."""
    settings_ = backend_settings()
    with TestClient(create_app(settings_)) as first:
        token = create_player(first, "owner")
        game_id = create_game(first, token, HOUSE, rules=NO_KING)
        wait_over(first, game_id)
        answers = {d: get(first, f"/api/v1/games/{game_id}/deals/{d}/analysis") for d in (1, 2, 3)}
        assert all(r.status_code == 200 for r in answers.values())
        wait_for(lambda: len(stored_rows(first, game_id)) == 3 or None, "the analyses stored")
        rows = stored_rows(first, game_id)
    decompressed: list[bytes] = []

    def decompress(data: bytes) -> bytes:
        decompressed.append(data)
        return zlib.decompress(data)

    monkeypatch.setattr(analysis_store, "zlib", SimpleNamespace(decompress=decompress))
    with TestClient(create_app(settings_)) as second:
        reads: list[str] = []

        def seen(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
            if "king_deal_analyses" in statement:
                reads.append(f"{statement} {params}")

        engine = second.app.state.king.repo.store.engines.write  # the AnalysisStore's
        sa.event.listen(engine, "before_cursor_execute", seen)
        try:
            again = second.get(f"/api/v1/games/{game_id}/deals/2/analysis")
            assert again.status_code == 200 and again.content == answers[2].content
            assert len(decompressed) == 1
            [read] = reads
            assert rows[2] in read and rows[1] not in read and rows[3] not in read, read
            assert second.get(f"/api/v1/games/{game_id}/deals/2/analysis").content == again.content
            assert len(reads) == 1 and len(decompressed) == 1  # kept in memory now
        finally:
            sa.event.remove(engine, "before_cursor_execute", seen)
        assert second.app.state[STATE_KEY].computed == 0
