"""What the live-service benchmarks share (`bench.service`, `bench.load`): a server child
process started and stopped cleanly, free ports, the `Server-Timing` header, percentiles and
the CPU time of a process read from /proc (psutil is not a dependency)."""

from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "bench-admin-token-0123456789"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_timing_ms(headers: Any) -> float | None:
    """The `app;dur=<ms>` of a response's Server-Timing header (None without one)."""
    header = headers.get("server-timing", "")
    if "dur=" not in header:
        return None
    return float(header.split("dur=", 1)[1].split(",", 1)[0])


def percentile(ordered: Sequence[float], p: float) -> float | None:
    """The p-quantile (0-1) of sorted values, nearest rank; None when there are none."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)


def latency_summary(values: Sequence[float], prefix: str = "latency_ms") -> dict[str, Any]:
    ordered = sorted(values)
    return {
        f"{prefix}_p50": percentile(ordered, 0.50),
        f"{prefix}_p99": percentile(ordered, 0.99),
        f"{prefix}_mean": round(statistics.fmean(ordered), 3) if ordered else None,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (0.0 once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rsplit(")", 1)[1].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])
    return (total - idle) / CLOCK_TICKS, total / CLOCK_TICKS


class ServerProcess:
    """An HTTP server in a child process. `ready()` waits until `health` answers below 500
    (/health/ready says 503 until the service is up); `stop()` interrupts it (SIGINT, so it
    shuts down cleanly), then kills it if it lingers."""

    def __init__(
        self,
        name: str,
        args: Sequence[str],
        *,
        port: int,
        env: dict[str, str] | None = None,
        cwd: Path | str = ROOT,
        log: Path | None = None,
        health: str = "/health/live",
    ) -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.health = health
        self.log_path = log
        self._log: IO[bytes] | None = log.open("wb") if log is not None else None
        self.proc = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=env if env is not None else {**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=self._log if self._log is not None else subprocess.PIPE,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, chars: int = 1500) -> str:
        if self.log_path is not None:
            try:
                return self.log_path.read_text(errors="replace")[-chars:]
            except OSError:
                return ""
        if self.proc.stderr is not None and self.proc.poll() is not None:
            return self.proc.stderr.read().decode(errors="replace")[-chars:]
        return ""

    def ready(self, timeout: float = 90.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        # One client for the whole wait: `httpx.get` would make one (and load the certificate
        # store, about 70 ms of CPU) every 0.1 s, beside the server starting up.
        with httpx.Client(trust_env=False) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise SystemExit(
                        f"bench: the {self.name} server did not start: {self.log_tail()}"
                    )
                try:
                    r = client.get(self.url + self.health, timeout=2)
                    if r.status_code < 500:  # up (a 503 from /health/ready: not yet)
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
        raise SystemExit(f"bench: the {self.name} server did not answer in {timeout:.0f} s")

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        if self._log is not None:
            self._log.close()
            self._log = None
