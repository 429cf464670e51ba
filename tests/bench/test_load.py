"""`python -m bench load` end to end, as small as it goes: one table of four pull bots on a
SQLite `king serve`. Checks that it finishes and that its count of actions is the games' own;
no timing is asserted (the benchmark is not a test)."""

from __future__ import annotations

import json

import pytest

from bench import load


@pytest.mark.slow
def test_quick_sqlite_run_counts_the_games_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert load.main(["--quick", "--tables", "1", "--configs", "sqlite", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    (run,) = result["runs"]["sqlite"]
    assert run["games"] == run["finished"] == 1
    assert run["strikes"] == 0 and not run["stalled"]
    assert run["actions"] > 0
    assert run["actions"] == run["actions_stored"]
    assert run["statuses"] == {"200": run["actions"]}
