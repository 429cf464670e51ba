"""The command line imports only what the command being run needs (issue 19): `king --help`
and `king record check` start without the web framework, the database layer or the bots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "conformance" / "04-partial.json"
HEAVY = ("litestar", "sqlalchemy", "sqlmodel", "httpx", "rich", "eventstore", "tournament")
# The one part of `tournament` every command loads, standard library only: the choice of the
# rules core's build, made before `domain` loads (tournament/native.py).
LIGHT = {"tournament", "tournament.native"}

# Run the CLI's main in a fresh interpreter, then write down what was imported.
PROBE = """
import json, sys
from services.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def imported(tmp: Path, *args: str) -> tuple[dict[str, object], str]:
    """What `king ARGS` imported (and its exit status), and what it printed."""
    out = tmp / "probe.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.read_text())
    return result, done.stdout


@pytest.mark.parametrize(
    "args", [("--help",), ("--version",), ("record", "check", str(RECORD))], ids=" ".join
)
def test_a_light_command_imports_nothing_heavy(args: tuple[str, ...], tmp_path: Path) -> None:
    result, _ = imported(tmp_path, *args)
    assert result["code"] == 0
    names = {str(m) for m in result["modules"]}  # type: ignore[attr-defined]
    modules = {m.split(".")[0] for m in names - LIGHT}
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_the_help_still_lists_every_command(tmp_path: Path) -> None:
    from services.commands import COMMANDS

    _, out = imported(tmp_path, "--help")
    for name, help_text in COMMANDS.items():
        assert name in out
        assert help_text.split()[0] in out


def test_each_command_registers_the_help_it_is_listed_with() -> None:
    """The full parser (every command loaded) shows the same one-line help as the listing."""
    from services.cli import build_parser
    from services.commands import COMMANDS

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    listed = {a.dest: a.help for a in sub._get_subactions()}  # type: ignore[attr-defined]
    assert listed == COMMANDS
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[arg-type]


def test_the_service_loads_the_redis_client_only_for_a_redis_store(tmp_path: Path) -> None:
    """`king serve` and the CLI commands that open the service import services.app; the Redis
    client (a tenth of a second of CPU) comes in only with a Redis store for the buckets."""
    probe = (
        "import json, sys\n"
        "import services.app\n"
        "from services.ratelimit import make_buckets\n"
        "from services.settings import load_settings\n"
        "before = 'redis' in sys.modules\n"
        "base = dict(data_dir=sys.argv[1], rate_limit_per_second=5)\n"
        "make_buckets(load_settings(**base))\n"
        "memory = 'redis' in sys.modules\n"
        "make_buckets(load_settings(**base, rate_limit_store='redis://127.0.0.1:1/0'))\n"
        "print(json.dumps([before, memory, 'redis' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [False, False, True]
