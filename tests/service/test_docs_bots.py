"""The example bots in docs/BOTS.md, run as written: each code block marked
`# docs-example: <name>` is saved as a file and started as its own process, then plays a whole
game on a live service (push: its URL registered; pull: its token), and the push bot plays a
`king match` against a built-in."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from domain.rules import Rules
from services.botkit.remote import register
from services.settings import Settings
from tests.processes import free_port
from tests.service.conftest import SettingsFactory
from tests.service.helpers import LiveServer, create_game, create_player, wait_for, wait_over
from tournament.match import run_match

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(# docs-example: ([\w-]+)\n.*?)```", re.S)


def example(name: str) -> str:
    found = {m.group(2): m.group(1) for m in BLOCK.finditer((ROOT / "docs/BOTS.md").read_text())}
    assert name in found, f"docs/BOTS.md has no block marked '# docs-example: {name}'"
    return found[name]


@pytest.fixture
def run_bot(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Save an example as a file and run it (the platform importable, as after pip install)."""
    procs: list[subprocess.Popen[bytes]] = []

    def run(name: str, args: list[str], code: str | None = None) -> subprocess.Popen[bytes]:
        path = tmp_path / f"{name}.py"
        path.write_text(code if code is not None else example(name))
        log = (tmp_path / f"{name}.log").open("wb")
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        proc = subprocess.Popen([sys.executable, str(path), *args], env=env, stderr=log)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        proc.kill()
        proc.wait(timeout=30)


def _listening(url: str) -> bool:
    try:
        httpx.get(url, timeout=1, trust_env=False)
    except httpx.HTTPError:
        return False
    return True  # any answer: the server is up (the example bot only implements POST)


def _play_one_game(client: httpx.Client, owner: str, bot: str) -> None:
    game_id = create_game(
        client, owner, [bot, "house:heuristic", "house:heuristic", "house:random"]
    )
    final = wait_over(client, game_id)
    assert final["view"]["strikes"] == [0, 0, 0, 0], final["view"]["strikes"]
    assert client.get(f"/api/v1/games/{game_id}/audit").json()["ok"]


def test_the_push_example_plays_a_game_and_a_match(
    make_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    run_bot: Callable[..., subprocess.Popen[bytes]],
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = run_bot("push-bot", [str(port)])
    wait_for(lambda: proc.poll() is None and _listening(url), "the example bot to listen")
    server = live_server(make_settings(decision_seconds=10))
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        token = create_player(client, "mybot", bot_url=url)
        _play_one_game(client, token, "mybot")  # the bot sets its table, as in the quick start
    register()  # what `king match` does first: bot URLs play as strategies
    result = run_match([url, "random"], 2, 1, Rules(mode="short12"))
    assert result.games == 2 and result.results[0].name == url


def test_the_kit_example_plays_a_game_by_pull(
    make_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    run_bot: Callable[..., subprocess.Popen[bytes]],
) -> None:
    server = live_server(make_settings(decision_seconds=10))
    code = example("kit-bot")
    assert 'SERVICE = "http://127.0.0.1:8000"' in code
    code = code.replace('"http://127.0.0.1:8000"', repr(server.url))  # this test's service
    with httpx.Client(base_url=server.url, trust_env=False, timeout=30) as client:
        token = create_player(client, "mybot")
        run_bot("kit-bot", [token], code)
        _play_one_game(client, token, "mybot")
