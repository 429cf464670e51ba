"""Leak test of the service's own log: a real `king serve` (debug level, JSON lines) runs a
game with push and pull bots, strikes and a forfeit included, and its log names no card, no
hand and no seed. While a deal is live every card is in some hidden hand, and the service has
no reason to log a card at all, so any card word in the log counts as a leak. Also: the
driver's error line keeps the type and reason code of an error, never its message."""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
from structlog.testing import capture_logs

from domain.game import InconsistentEvent
from domain.violations import IllegalAction, Violation
from services.botkit import PushBotServer, strategy_decider
from services.observability import Metrics
from services.play.driver import GameDriver
from tests.processes import Serve, serve_env, wait_for
from tests.service.bad_bots import BadBot
from tests.service.helpers import ADMIN, create_game, create_player
from tests.service.test_leak import Seat
from tournament.games import GameNotFound

CARD_WORD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][SHDC](?![A-Za-z0-9])")
SECRET_KEYS = {"hand", "hands", "seed", "server_seed", "deck", "cards"}


def json_start(line: str) -> Any:
    """The JSON object a log line starts with (None for a plain-text line)."""
    if not line.startswith("{"):
        return None
    try:
        return json.JSONDecoder().raw_decode(line)[0]
    except ValueError:
        return None


def secret_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {k for k in node if k in SECRET_KEYS}
        return found.union(*(secret_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(secret_keys(v) for v in node))
    return set()


def scan(log: str, seed: str) -> list[str]:
    """Every leak in a log: a card word, the seed, a field named for hands or seeds."""
    leaks = []
    for n, line in enumerate(log.splitlines(), 1):
        if seed and seed in line:
            leaks.append(f"line {n}: the seed")
        cards = CARD_WORD.findall(line)
        if cards:
            leaks.append(f"line {n}: card(s) {sorted(set(cards))}")
        keys = secret_keys(json_start(line))
        if keys:
            leaks.append(f"line {n}: field(s) {sorted(keys)}")
    return leaks


class FirstTurnIllegal(random.Random):
    """Makes a test_leak.Seat try every misdeed on its first turn (an illegal card: a
    strike), then only the refused act-for-another-seat on later turns."""

    def random(self) -> float:
        return 0.0


def test_the_service_log_names_no_card_hand_or_seed(tmp_path: Path) -> None:
    env = serve_env(tmp_path, None, None)
    env["KING_LOG_LEVEL"] = "debug"
    server = Serve(tmp_path, "king", env)
    good = PushBotServer(strategy_decider("random", 3)).start()
    illegal = BadBot("illegal").start()
    try:
        server.ready()
        with httpx.Client(base_url=server.url, trust_env=False, timeout=60) as client:
            create_player(client, "pushgood", bot_url=good.url)
            create_player(client, "pushbad", bot_url=illegal.url)
            puller = create_player(client, "puller")
            seats = ["pushgood", "pushbad", "puller", "house:heuristic"]
            game_id = create_game(client, ADMIN, seats, rules={"mode": "short12"})
            seat = Seat(server.url, puller, game_id, 2, FirstTurnIllegal())
            runner = threading.Thread(target=seat.run, daemon=True)
            runner.start()

            def over() -> bool:
                r = client.get(f"/api/v1/games/{game_id}")
                return bool(r.json()["game"]["status"] == "over")

            wait_for(over, f"game {game_id} to end", 300)
            runner.join(timeout=60)
            text = client.get(f"/api/v1/games/{game_id}/events", params={"follow": False}).text
    finally:
        server.stop()
        good.stop()
        illegal.stop()
    events = [orjson.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    seed = next(e for e in events if e["type"] == "seed_revealed")["data"]["server_seed"]
    hands = next(e for e in events if e["type"] == "deal_ended")["data"]["hands"]
    log = server.log_path.read_text(errors="replace")
    lines = [json_start(line) for line in log.splitlines()]
    strikes = [e for e in lines if e and e.get("event") == "strike"]
    # the log saw the misdeeds: a pull seat's illegal card, a push bot's three, its forfeit
    assert {(e["player"], e["reason"]) for e in strikes} == {
        ("puller", "illegal_action"),
        ("pushbad", "illegal_action"),
    }, strikes
    assert any(e and e.get("event") == "forfeit" for e in lines)
    assert scan(log, seed) == [], scan(log, seed)[:10]
    # the scan can see a leak: a hand, the seed or a hand field in a line is caught
    assert scan(json.dumps({"event": "x", "detail": " ".join(hands[0][:3])}), seed)
    assert scan(json.dumps({"event": "x", "detail": f"seed {seed}"}), seed)
    assert scan(json.dumps({"event": "x", "hands": []}), seed)


class _FailingGames:
    """Just enough of a GameService for the driver's loop: errors whose messages name cards."""

    def __init__(self) -> None:
        self.on_start: list[Any] = []
        self.calls = 0

    async def load_fresh(self, game_id: str) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise InconsistentEvent("trick differs: expected cards AS KH QD JC, stored 2C")
        if self.calls == 2:
            raise IllegalAction(Violation("card_not_in_hand", "you do not hold 7S (hand: 8S 9H)"))
        raise GameNotFound(game_id)


def test_a_driver_error_is_logged_by_type_and_code_never_by_its_message() -> None:
    driver = GameDriver(_FailingGames(), None, Metrics(), 0.01)  # type: ignore[arg-type]
    with capture_logs() as logged:
        asyncio.run(driver._run("g-1"))
    errors = [e for e in logged if e["event"] == "driver_error" and e["log_level"] == "error"]
    assert [(e["error"], e.get("code")) for e in errors] == [
        ("InconsistentEvent", None),
        ("IllegalAction", "card_not_in_hand"),
    ]
    # Each with its stack trace at debug: frames only, no message, no source line.
    traces = [e for e in logged if e["event"] == "driver_error" and e["log_level"] == "debug"]
    assert [e["error"] for e in traces] == ["InconsistentEvent", "IllegalAction"]
    assert all(any("in load_fresh" in f for f in e["trace"]) for e in traces)
    assert scan("\n".join(json.dumps(e) for e in logged), "") == []
    assert logged[-1]["event"] == "driver_skipped"


def test_only_database_and_network_errors_are_logged_with_their_message() -> None:
    from sqlalchemy.exc import OperationalError

    from services.observability import error_fields

    db = OperationalError("SELECT 1", {}, Exception("server closed the connection"))
    assert "server closed" in error_fields(db)["detail"]
    assert error_fields(ConnectionRefusedError("refused"))["detail"] == "refused"
    for hidden in (
        InconsistentEvent("hands differ: AS KH"),
        ValueError("seat 2 holds QS"),
        RuntimeError("wrapped: 7C"),
    ):
        assert error_fields(hidden) == {"error": type(hidden).__name__}
    illegal = IllegalAction(Violation("must_follow_suit", "play a heart: AH KH"))
    assert error_fields(illegal) == {"error": "IllegalAction", "code": "must_follow_suit"}


def test_a_push_failure_is_logged_at_info_without_the_url_and_traced_at_debug() -> None:
    from services.bots.push import PushReply

    secret_url = "http://127.0.0.1:9/bot/s3cret-token-in-the-path"
    try:
        raise ConnectionRefusedError(111, "Connection refused")
    except ConnectionRefusedError as exc:
        refused = exc
    # An httpx error may quote the URL (where a bot may keep a secret): not a safe message.
    quoting = httpx.ConnectError(f"cannot connect to {secret_url}")
    failures = [
        PushReply(None, "unreachable", "ConnectionRefusedError", 0.01, "unreachable", refused),
        PushReply(None, "unreachable", "ConnectError", 0.01, "unreachable", quoting),
        PushReply(None, "bad_reply", "HTTP status 500", 0.01, "http_status"),
    ]
    with capture_logs() as logged:
        for reply in failures:
            GameDriver._log_push_failure("g-1", 2, "pushy", reply)
    info = [e for e in logged if e["log_level"] == "info"]
    assert [(e["event"], e["code"]) for e in info] == [
        ("push_failed", "unreachable"),
        ("push_failed", "unreachable"),
        ("push_failed", "http_status"),
    ]
    assert info[0]["error"] == "ConnectionRefusedError"
    assert info[0]["detail"] == "[Errno 111] Connection refused"
    assert info[1]["error"] == "ConnectError" and "detail" not in info[1]
    assert all(e["game_id"] == "g-1" and e["seat"] == 2 for e in info)
    debug = [e for e in logged if e["log_level"] == "debug"]
    assert len(debug) == 2
    assert any("in test_a_push_failure" in frame for frame in debug[0]["trace"])
    text = json.dumps(logged)
    assert "s3cret" not in text and secret_url not in text


def test_a_database_error_is_logged_by_its_first_line_never_its_statement_or_parameters() -> None:
    from sqlalchemy.exc import OperationalError

    from eventstore import StoreUnavailable
    from services.observability import error_fields

    hand = '{"hands": [["AS", "KH", "QD"]]}'
    statement = OperationalError(
        "INSERT INTO events (payload) VALUES (%(payload)s)",
        {"payload": hand},
        Exception("server closed the connection unexpectedly\n\tThis probably means ..."),
    )
    assert "[parameters:" in str(statement) and "AS" in str(statement)  # what is left out
    assert error_fields(statement)["detail"] == "server closed the connection unexpectedly"
    wrapped = StoreUnavailable(f"database unavailable: {statement}")
    detail = error_fields(wrapped)["detail"]
    assert detail.startswith("database unavailable: (builtins.Exception) server closed")
    assert "AS" not in detail and "INSERT" not in detail
