"""Logs: one JSON object per line, whoever writes it (the service or a library), from any thread."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

LINES_PER_THREAD = 1500

WRITERS = textwrap.dedent(
    f"""
    import logging, threading
    from services.observability import configure_logging, get_logger

    configure_logging("info", json=True)

    def ours(n):
        log = get_logger("king.test")
        for i in range({LINES_PER_THREAD}):
            log.info("ours", writer=n, i=i, text="x" * (i % 200))

    def library(name):
        log = logging.getLogger(name)
        for i in range({LINES_PER_THREAD}):
            log.info("plain %s line %d %s", name, i, "y" * (i % 200))

    threads = [threading.Thread(target=ours, args=(n,)) for n in range(2)]
    threads += [threading.Thread(target=library, args=(n,)) for n in ("uvicorn.error", "litestar")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    logging.getLogger("httpx").info("quietened: never written")
    """
)


def test_every_line_is_one_json_object_under_threads() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITERS], capture_output=True, text=True, timeout=120, check=True
    )
    lines = done.stderr.splitlines()
    records = [json.loads(line) for line in lines]  # a line run into another fails here
    ours = [r for r in records if r["event"] == "ours"]
    theirs = [r for r in records if r.get("logger") in ("uvicorn.error", "litestar")]
    assert len(ours) == 2 * LINES_PER_THREAD
    assert len(theirs) == 2 * LINES_PER_THREAD
    assert all(r["level"] == "info" and "timestamp" in r for r in records)
    assert {r["writer"] for r in ours} == {0, 1}
    assert theirs[0]["event"].startswith("plain ")
    assert not any("quietened" in line for line in lines)
    assert done.stdout == ""


SCHEDULER_WARNINGS = textwrap.dedent(
    """
    import logging
    from services.observability import configure_logging

    configure_logging("info", json=True)
    configure_logging("info", json=True)  # configured twice (apps in one process): one filter
    aps = logging.getLogger("apscheduler.scheduler")
    assert len(aps.filters) == 1, aps.filters
    aps.warning(
        'Execution of job "%s" skipped: maximum number of running instances reached (%d)',
        "tick",
        1,
    )
    aps.warning("Run time of job %s was missed by %s", "tick", "0:00:02")
    """
)


def test_a_skipped_scheduler_firing_is_not_a_warning_other_scheduler_warnings_are() -> None:
    """A tournament tick longer than the scheduler's period skips the next firing on purpose
    (`max_instances=1`): APScheduler's warning of it is dropped, its other warnings are not."""
    done = subprocess.run(
        [sys.executable, "-c", SCHEDULER_WARNINGS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [r["event"] for r in lines] == ["Run time of job tick was missed by 0:00:02"]
