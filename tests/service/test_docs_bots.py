"""The example bots in docs/BOTS.md, run as written: each code block marked
`# docs-example: <name>` (```javascript blocks: `// docs-example: <name>`) is saved as a file and
started as its own process, then plays whole games on a live service (push: its URL registered;
pull: its token), and the push bot plays a `king match` against a built-in. The complete pull
bots (Python, standard library only; JavaScript for Node with plain fetch) play two games, one
of them holding two seats, to the end without a strike, and exit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from domain.rules import Rules
from services.botkit.remote import register
from services.settings import Settings
from tests.processes import HTTP, free_port
from tests.service.conftest import SettingsFactory
from tests.service.helpers import (
    ADMIN,
    HANG_GUARD,
    LiveServer,
    allow_one_player_twice,
    create_game,
    create_player,
    wait_for,
    wait_over,
)
from tournament.match import run_match

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(# docs-example: ([\w-]+)\n.*?)```", re.S)
JS_BLOCK = re.compile(r"```javascript\n(// docs-example: ([\w-]+)\n.*?)```", re.S)
# What a bot author does not have: this project's packages.
PROJECT_IMPORT = re.compile(r"^\s*(import|from)\s+(services|domain|tournament|eventstore)\b", re.M)


def example(name: str, block: re.Pattern[str] = BLOCK) -> str:
    found = {m.group(2): m.group(1) for m in block.finditer((ROOT / "docs/BOTS.md").read_text())}
    assert name in found, f"docs/BOTS.md has no block marked 'docs-example: {name}'"
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
        HTTP.get(url, timeout=1)
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


@pytest.fixture
def run_program(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Run a command as a bot author would: only PATH, KING_URL and KING_TOKEN set, in an
    empty folder; standard error kept in a log the test shows when it fails."""
    procs: list[subprocess.Popen[bytes]] = []

    def run(command: list[str], url: str, token: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"bot-{len(procs)}.log").open("wb")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "KING_URL": url,
            "KING_TOKEN": token,
        }
        proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=log, stderr=log)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        proc.kill()
        proc.wait(timeout=30)
    for log in sorted(tmp_path.glob("bot-*.log")):  # shown by pytest when the test failed
        print(f"--- {log.name}\n{log.read_text(errors='replace')}")


def _strikes(client: httpx.Client, game_id: str) -> list[dict[str, object]]:
    """Every strike, forfeit and substitution in the game's public events."""
    r = client.get(
        f"/api/v1/games/{game_id}/events", params={"format": "ndjson", "follow": "false"}
    )
    events = [orjson.loads(line) for line in r.text.splitlines() if line.strip()]
    assert events[-1]["type"] == "seed_revealed"  # the whole game
    bad = ("strike_recorded", "seat_abandoned", "seat_substituted")
    return [e for e in events if e["type"] in bad]


def _plays_two_games_and_exits(
    url: str, start: Callable[[str], subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot, told to play two games, plays one seat of the first and two of the second, to
    the end and without a strike, then exits by itself."""
    allow_one_player_twice(monkeypatch)
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:
        owner = ADMIN  # seats the bot with no invitation to accept
        proc = start(create_player(client, "mybot"))
        games = [
            create_game(
                client, owner, ["mybot", "house:heuristic", "house:random", "house:random"]
            ),
            create_game(client, owner, ["house:random", "mybot", "house:heuristic", "mybot"]),
        ]
        for game_id in games:
            final = wait_over(client, game_id)
            assert final["view"]["phase"] == "over"
            assert _strikes(client, game_id) == [], game_id
            assert final["view"]["strikes"] == [0, 0, 0, 0]
            assert client.get(f"/api/v1/games/{game_id}/audit").json()["ok"]
        assert proc.wait(timeout=HANG_GUARD) == 0  # two games over: it exits


def test_the_python_pull_example_plays_whole_games_with_the_standard_library(
    make_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    run_program: Callable[..., subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    code = example("pull-bot")
    assert not PROJECT_IMPORT.search(code), "the example imports the platform"
    (tmp_path / "pullbot.py").write_text(code)
    server = live_server(make_settings(decision_seconds=30))
    # -I -S: no site-packages and no current folder on the path: the standard library only
    command = [sys.executable, "-I", "-S", str(tmp_path / "pullbot.py"), "2"]
    _plays_two_games_and_exits(
        server.url, lambda token: run_program(command, server.url, token), monkeypatch
    )


def test_the_javascript_pull_example_plays_whole_games_with_plain_fetch(
    make_settings: SettingsFactory,
    live_server: Callable[[Settings], LiveServer],
    run_program: Callable[..., subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    node = shutil.which("node")
    if node is None:
        message = "node (18 or later) is not installed: the JavaScript example cannot run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: the JavaScript example must run)")
        pytest.skip(message)
    code = example("pull-bot-js", JS_BLOCK)
    assert "require(" not in code and not re.search(r'from "(?!node:)', code), "a package import"
    (tmp_path / "pullbot.mjs").write_text(code)
    server = live_server(make_settings(decision_seconds=30))
    command = [node, str(tmp_path / "pullbot.mjs"), "2"]
    _plays_two_games_and_exits(
        server.url, lambda token: run_program(command, server.url, token), monkeypatch
    )
