"""Fixtures of the web suites: an app on SQLite in tmp_path, games played by house bots,
a live uvicorn server and Playwright driving Debian's Chromium headless.

Browser tests skip with the reason when Chromium or Playwright is missing on a developer's
machine; under CI=true they fail instead, so a green CI always means the pages were driven.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from services.app import create_app
from services.settings import Settings, load_settings
from tests.service.helpers import ADMIN, LiveServer, bearer, create_player

CHROMIUM = os.environ.get("KING_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"


def web_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": str(tmp_path),
        "admin_token": ADMIN,
        "decision_seconds": 600.0,
        "rate_limit_per_second": 0,
        "poll_seconds": 0.2,
        "stream_keepalive_seconds": 1.0,
        "sqlite_synchronous": "NORMAL",
        "log_level": "warning",
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture
def client(tmp_path: Path, seed_sqlite: Callable[[Path], None]) -> Iterator[TestClient[Any]]:
    seed_sqlite(tmp_path)
    with TestClient(create_app(web_settings(tmp_path))) as c:
        yield c


def new_game(client: Any, token: str, seats: list[str], game_id: str, **extra: Any) -> str:
    body = {"seats": seats, "rules": {"mode": "short12"}, "id": game_id, **extra}
    r = client.post("/api/v1/games", json=body, headers=bearer(token))
    assert r.status_code == 201, r.text
    return game_id


@pytest.fixture
def ada(client: TestClient[Any]) -> str:
    return create_player(client, "ada")


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = _browser_missing()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: the browser tests must run)")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.js_errors = errors
    try:
        yield p
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        p.screenshot(path=str(ARTIFACTS / f"{request.node.name}-final.png"), full_page=True)
        context.close()


@pytest.fixture
def server(tmp_path: Path, seed_sqlite: Callable[[Path], None]) -> Iterator[LiveServer]:
    seed_sqlite(tmp_path)
    live = LiveServer(create_app(web_settings(tmp_path))).start()
    try:
        yield live
    finally:
        live.stop()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def press(page: Any, target: Any) -> dict[str, float]:
    """Press the mouse on `target` (a locator) and hold it there; its box, to compare with
    where it is at the release (`page.mouse.up()`)."""
    box: dict[str, float] = target.bounding_box(timeout=15_000)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    return box
