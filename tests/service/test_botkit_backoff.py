"""The pull bot honours 429 and 503: it waits as `Retry-After` says, stretched by jitter,
resends the same action (its version makes a resend safe), and gives up once the turn's time
would be gone."""

from __future__ import annotations

import random
from typing import Any

import httpx

from services.botkit.pull import PullBot, backoff

KEYS: list[str | None] = []  # each request's Idempotency-Key
TURN = {"version": 7, "seat": 2, "deadline_ms": 10_000, "legal": [{"type": "redeal"}]}


def _bot(answers: list[httpx.Response]) -> tuple[PullBot, list[bytes], list[float], httpx.Client]:
    sent: list[bytes] = []
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        KEYS.append(request.headers.get("idempotency-key"))
        return answers.pop(0)

    bot = PullBot("http://king.test", "tok", lambda req: req["legal"][0])
    bot.sleep = slept.append
    bot.rng = random.Random(1)
    client = httpx.Client(base_url="http://king.test", transport=httpx.MockTransport(handler))
    return bot, sent, slept, client


def test_retry_after_is_waited_out_with_jitter_and_the_same_action_resent() -> None:
    answers = [
        httpx.Response(429, headers={"retry-after": "2"}),
        httpx.Response(503, headers={"retry-after": "1"}),
        httpx.Response(200, json={"ok": True}),
    ]
    bot, sent, slept, client = _bot(answers)
    KEYS.clear()
    bot._act(client, "g1", TURN)
    assert len(sent) == 3 and len(set(sent)) == 1, "the same body each time"
    assert len(set(KEYS)) == 1 and KEYS[0], "the same Idempotency-Key each time"
    assert 2.0 <= slept[0] <= 3.0 and 1.0 <= slept[1] <= 1.5
    assert bot.errors == []


def test_no_wait_outlasts_the_turn() -> None:
    answers = [httpx.Response(429, headers={"retry-after": "30"})]
    bot, sent, slept, client = _bot(answers)
    bot._act(client, "g1", {**TURN, "deadline_ms": 1500})
    assert len(sent) == 1 and slept == []
    assert bot.errors == ["g1: action refused (429)"]


def test_backoff_without_a_retry_after_grows_and_is_capped() -> None:
    rng = random.Random(3)
    bare = httpx.Response(429)
    waits: list[Any] = [backoff(bare, attempt, rng) for attempt in range(12)]
    assert waits[0] < waits[3] < waits[6]
    assert max(waits) <= 30.0
    assert backoff(httpx.Response(429, headers={"retry-after": "soon"}), 0, rng) <= 0.375


def test_each_action_has_its_own_idempotency_key() -> None:
    bot, sent, _slept, client = _bot([httpx.Response(200, json={"ok": True}) for _ in range(2)])
    KEYS.clear()
    bot._act(client, "g1", TURN)
    bot._act(client, "g1", {**TURN, "version": 9})
    assert len(sent) == 2 and len(set(KEYS)) == 2 and None not in KEYS
