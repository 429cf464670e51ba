"""`king match` sets a push bot at a URL against the built-ins (the bot author's test loop)."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from services.botkit import strategy_decider
from services.botkit.push import PushBotServer
from services.cli import main


def _match(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["match", *args])
    return status, out.getvalue(), err.getvalue()


def test_a_push_bot_plays_a_match_against_a_builtin() -> None:
    server = PushBotServer(strategy_decider("random", 7)).start()
    try:
        status, out, _ = _match(
            server.url, "heuristic", "--games", "2", "--mode", "short12", "--json"
        )
    finally:
        server.stop()
    assert status == 0
    result = json.loads(out)
    names = json.dumps(result)
    assert server.url in names and "heuristic" in names


def test_a_bot_answering_an_illegal_action_stops_the_match_with_the_reason() -> None:
    def always_ace_of_spades(_request: dict[str, Any]) -> dict[str, Any]:
        return {"type": "play", "card": "AS"}

    server = PushBotServer(always_ace_of_spades).start()
    try:
        status, _, err = _match(server.url, "random", "--games", "2", "--mode", "short12")
    finally:
        server.stop()
    assert status == 2
    assert "the bot failed" in err and "not a legal action" in err


@pytest.mark.parametrize("extra", [["--workers", "2"]])
def test_bot_urls_refuse_several_processes(extra: list[str]) -> None:
    status, _, err = _match("http://127.0.0.1:9/", "random", "--games", "2", *extra)
    assert status == 2 and "one process" in err
