"""Every request's id (log lines, problem bodies, the X-Request-ID header) and the metrics at
/metrics: Prometheus text that parses, request figures by route template, the process's own
collectors, bounded label sets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from services.app import create_app, services_of
from services.http_observer import request_id_of
from services.observability import OTHER, PLAYER_LABELS, Metrics, configure_logging
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN_HEADERS, create_game, create_player

HOUSE4 = ["house:random", "house:heuristic", "house:random", "house:heuristic"]


def families(text: str) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def samples(text: str, name: str) -> list[Any]:
    return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == name]


@pytest.fixture
def client(make_settings: SettingsFactory) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(make_settings())) as c:
        yield c


def test_metrics_parse_and_hold_the_request_process_and_king_families(
    client: TestClient[Any],
) -> None:
    token = create_player(client, "ada")
    create_game(client, token, HOUSE4)
    client.get("/api/v1/games/no-such-game")
    client.get("/nowhere/at/all")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.text
    found = families(text)  # raises on text that is not the exposition format
    for name, kind in {
        "king_http_requests": "counter",
        "king_http_request_duration_seconds": "histogram",
        "process_cpu_seconds": "counter",
        "process_resident_memory_bytes": "gauge",
        "process_open_fds": "gauge",
        "python_gc_collections": "counter",
        "python_info": "gauge",
        "king_decision_seconds": "histogram",
        "king_appends": "counter",
        "king_sql_statements": "counter",
        "king_live_games": "gauge",
    }.items():
        assert name in found and found[name].type == kind, name
    requests = samples(text, "king_http_requests_total")
    routes = {(s.labels["method"], s.labels["route"], s.labels["status"]) for s in requests}
    assert ("POST", "/api/v1/players", "201") in routes
    assert ("GET", "/api/v1/games/{game_id}", "404") in routes
    assert ("GET", "unmatched", "404") in routes
    # Route templates only: no raw path of a request is a label value.
    values = {v for s in requests for v in s.labels.values()}
    assert not {"/api/v1/games/no-such-game", "/nowhere/at/all"} & values
    timed = samples(text, "king_http_request_duration_seconds_count")
    assert any(s.labels["route"] == "/api/v1/games" and s.value >= 1 for s in timed)


def test_an_unknown_method_is_counted_as_other(client: TestClient[Any]) -> None:
    client.request("BREW", "/health/live")
    client.get("/health/live")
    requests = samples(client.get("/metrics").text, "king_http_requests_total")
    assert {s.labels["method"] for s in requests} >= {"other", "GET"}
    assert "BREW" not in {s.labels["method"] for s in requests}


def test_the_decision_histogram_names_a_bounded_number_of_players() -> None:
    metrics = Metrics()
    for i in range(PLAYER_LABELS + 25):
        metrics.observe_decision("push", f"bot-{i}", 0.01)
    metrics.observe_decision("push", "bot-0", 0.01)  # a named one stays named
    from prometheus_client import generate_latest

    counts = samples(generate_latest(metrics.registry).decode(), "king_decision_seconds_count")
    players = {s.labels["player"]: s.value for s in counts}
    assert len(players) == PLAYER_LABELS + 1
    assert players[OTHER] == 25 and players["bot-0"] == 2


def test_a_sane_request_id_is_kept_and_any_other_replaced() -> None:
    def scope(value: bytes) -> dict[str, Any]:
        return {"headers": [(b"x-request-id", value)]}

    assert request_id_of(scope(b"abc-123.X:y_z")) == "abc-123.X:y_z"
    for bad in (b"", b"a" * 129, b"has space", b"semi;colon", b"\xc3\xa9t\xc3\xa9"):
        made = request_id_of(scope(bad))
        assert made != bad.decode(errors="replace") and len(made) == 32
    assert request_id_of({"headers": []}) != request_id_of({"headers": []})


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The service's JSON log lines (debug and up) written while the test runs."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    configure_logging("debug", json=True)
    out = io.StringIO()
    king = next(h for h in root.handlers if h.get_name() == "king")
    assert isinstance(king, logging.StreamHandler)
    king.setStream(out)
    try:
        yield out
    finally:
        root.handlers = handlers
        root.setLevel(level)
        structlog.reset_defaults()


def test_every_log_line_of_a_request_and_its_problem_carry_its_id(
    make_settings: SettingsFactory, log_lines: io.StringIO
) -> None:
    # No driver nor scheduler: every line written during a request is the request's own.
    app = create_app(make_settings(run_driver=False, run_scheduler=False, log_level="debug"))
    with TestClient(app) as client:
        token = create_player(client, "ada")

        def lines_of(call: Any) -> tuple[Any, list[dict[str, Any]]]:
            start = log_lines.tell()
            response = call()
            log_lines.seek(start)
            written = [json.loads(line) for line in log_lines.read().splitlines()]
            return response, written

        response, written = lines_of(
            lambda: client.post(
                "/api/v1/games",
                json={"seats": HOUSE4, "rules": {"mode": "short12"}},
                headers={"Authorization": f"Bearer {token}", "X-Request-ID": "req-game-1"},
            )
        )
        assert response.status_code == 201, response.text
        assert response.headers["x-request-id"] == "req-game-1"
        assert any(line["event"] == "game_started" for line in written)
        assert written and all(line.get("request_id") == "req-game-1" for line in written)

        # An unexpected error: its log line, the line of the thread that raised it, and the
        # problem body all name the request; the id is made up when none (or a bad one) came.
        def failing(*_: Any) -> Any:
            logging.getLogger("king.test").warning("failing in a worker thread")
            raise RuntimeError("boom")

        services_of(app).players.list = failing  # type: ignore[method-assign]
        response, written = lines_of(
            lambda: client.get(
                "/api/v1/players", headers={**ADMIN_HEADERS, "X-Request-ID": "bad id!"}
            )
        )
        assert response.status_code == 500
        made = response.headers["x-request-id"]
        assert made != "bad id!" and response.json()["request_id"] == made
        events = {line["event"] for line in written}
        assert {"internal_error", "failing in a worker thread"} <= events
        assert all(line.get("request_id") == made for line in written)
        assert "Traceback" not in log_lines.getvalue()

        # A refusal's problem body carries the id too; requests after it have none left over.
        response = client.get("/api/v1/games/nope", headers={"X-Request-ID": "req-404"})
        assert response.status_code == 404 and response.json()["request_id"] == "req-404"
        again = client.get("/api/v1/games/nope")
        assert again.json()["request_id"] == again.headers["x-request-id"] != "req-404"
