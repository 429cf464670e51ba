"""`king serve` as a real process: starts on SQLite, generates the admin token into the data
directory, answers, logs JSON lines that carry game ids but no seed or token, stops cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import orjson

from tests.service.helpers import HTTP, bearer, create_game, wait_for, wait_over

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_king_serve_runs_a_game_and_logs_json_without_secrets(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KING_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "services.cli",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "var"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            try:
                return HTTP.get(base + "/health/ready", timeout=1).status_code == 200
            except httpx.HTTPError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                return False

        wait_for(ready, "king serve to be ready", 60)
        token_file = tmp_path / "var" / "admin-token"
        admin = token_file.read_text().strip()
        assert oct(token_file.stat().st_mode & 0o777) == "0o600"
        assert (tmp_path / "var" / "king.db").exists()
        with httpx.Client(base_url=base, trust_env=False, timeout=30) as client:
            r = client.post("/api/v1/players", json={"id": "ada"}, headers=bearer(admin))
            token = r.json()["token"]
            game_id = create_game(client, token, ["house:random"] * 4)
            final = wait_over(client, game_id)
            seed = final["view"]["seed"]
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    lines = [orjson.loads(line) for line in err.splitlines() if line.startswith(b"{")]
    events = [line["event"] for line in lines]
    assert "admin_token_generated" in events and "game_started" in events
    assert any(line.get("game_id") == game_id for line in lines)
    assert seed.encode() not in err and admin.encode() not in err and token.encode() not in err
    assert b"Traceback" not in err


def test_king_serve_refuses_bad_settings_clearly(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KING_")}
    env.update(PYTHONPATH=str(ROOT), KING_DECISION_SECONDS="-1")
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "serve", "--data-dir", str(tmp_path)],
        env=env,
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert b"KING_DECISION_SECONDS" in proc.stderr and b"Traceback" not in proc.stderr


def test_a_port_in_use_is_one_line_and_exit_3(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KING_")}
    env["PYTHONPATH"] = str(ROOT)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
            cwd=tmp_path,
            env={**env, "KING_DATA_DIR": str(tmp_path / "var")},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        f"king: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert done.stdout == ""
    # Nothing was started before the address was had: no database was made.
    assert not (tmp_path / "var" / "king.db").exists()
