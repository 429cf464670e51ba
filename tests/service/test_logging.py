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
