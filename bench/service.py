"""`python -m bench service [--json] [--quick]`: the game service under pull bots, beside a
bare Litestar JSON endpoint on the same server settings.

Two uvicorn servers run in child processes with identical settings (one worker, loopback,
the same event loop and HTTP implementation): the King service (SQLite, synchronous=FULL, its
default) and a bare Litestar app whose one POST endpoint decodes a JSON body and answers a
small JSON object. The same client threads drive both from this process:
  * service: G games at once, every seat a pull bot (an NDJSON seat stream plus POST /actions
    on each `your_turn`, a random legal action), whole games to the end, three times: with
    the seat's whole stream and answers with the view ("full"), with a turns-only stream and
    minimal answers ("lean": `?only=turns`, `Prefer: return=minimal`), and on the seat's
    WebSocket, turns and actions as frames ("socket"), each on a server and database of its
    own;
  * bare: as many threads POSTing a body of the same size in a loop, for as long.
With KING_BENCH_PROFILE=FILE the service's server runs under cProfile and writes its stats
to FILE (the figures are then not comparable with the bare endpoint's).
Reported for each protocol: actions (requests, or action frames) per second, and the
service-side latency of each request from the `Server-Timing` header (p50, p99; none for
frames), the ratio of the two rates (target >= 0.5) and of the server CPU per request (the
bare endpoint's over the service's per action, target >= 0.3).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from typing import Any

from bench.live import (
    ADMIN,
    ServerProcess,
    cpu_seconds,
    free_port,
    latency_summary,
    server_timing_ms,
)

TARGET_RATIO = 0.5  # request rate, service / bare
TARGET_CPU_RATIO = 0.3  # server CPU per request, bare / service
# How the bots follow their games: the seat's whole stream with the view in every answer, or
# only their turns (`?only=turns`) with minimal answers (`Prefer: return=minimal`).
# Or on the seat's WebSocket: its turns as frames, its actions as frames ("socket").
PROTOCOLS = ("full", "lean", "socket")


# ------------------------------------------------------------------ servers


def bare_app() -> Any:
    from litestar import Litestar, post

    from services.timing import server_timing_middleware

    @post("/echo", status_code=200)
    async def echo(data: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "type": data.get("type"), "version": data.get("version")}

    return Litestar([echo], middleware=[server_timing_middleware])


def serve(kind: str, port: int, data_dir: str) -> None:
    import uvicorn

    options: dict[str, Any] = {}
    if kind == "bare":
        app = bare_app()
    else:
        from services.app import create_app
        from services.commands.serve import socket_options
        from services.settings import load_settings

        settings = load_settings(
            data_dir=data_dir,
            admin_token=ADMIN,
            rate_limit_per_second=0,
            decision_seconds=60,
            log_level="warning",
        )
        app = create_app(settings)
        options = socket_options(settings)  # as `king serve` runs it
    profile_to = os.environ.get("KING_BENCH_PROFILE")
    if not profile_to or kind == "bare":
        uvicorn.run(
            app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **options
        )
        return
    # Where the service's CPU per request goes: cProfile over the whole server run.
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        uvicorn.run(
            app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **options
        )
    finally:
        profiler.disable()
        profiler.dump_stats(profile_to)


def start_child(kind: str, data_dir: str) -> ServerProcess:
    """A uvicorn child running `serve(kind, ...)` (this module's `--serve`), ready."""
    port = free_port()
    args = [sys.executable, "-m", "bench.service", "--serve", kind, "--port", str(port)]
    server = ServerProcess(
        kind,
        [*args, "--data-dir", data_dir],
        port=port,
        health="/health/live" if kind == "game" else "/",
    )
    try:
        server.ready(60)
    except BaseException:
        server.stop()
        raise
    return server


# ------------------------------------------------------------------ clients


def play_seat(
    url: str,
    token: str,
    game_id: str,
    seat: int,
    rng: random.Random,
    out: list[float],
    lean: bool = False,
) -> int:
    import httpx
    import orjson

    actions = 0
    headers = {"authorization": f"Bearer {token}"}
    params = {"format": "ndjson", **({"only": "turns"} if lean else {})}
    post_headers = {"prefer": "return=minimal"} if lean else {}
    with httpx.Client(base_url=url, headers=headers, timeout=60, trust_env=False) as c:
        path = f"/api/v1/games/{game_id}/seats/{seat}/events"
        with c.stream("GET", path, params=params) as stream:
            for line in stream.iter_lines():
                # a bot reads only what it acts on: its turns, and the game's last event
                if '"type":"seed_revealed"' in line:
                    break
                if '"type":"your_turn"' not in line:
                    continue
                message = orjson.loads(line)
                turn = message["data"]
                body = {**rng.choice(turn["legal"]), "seat": seat, "version": turn["version"]}
                r = c.post(f"/api/v1/games/{game_id}/actions", json=body, headers=post_headers)
                if r.status_code == 200:
                    actions += 1
                    ms = server_timing_ms(r.headers)
                    if ms is not None:
                        out.append(ms)
    return actions


def play_seat_socket(url: str, token: str, game_id: str, seat: int, rng: random.Random) -> int:
    """One seat on its WebSocket: a random legal action on each turn, as an action frame."""
    import orjson
    from websockets.sync.client import connect

    from services.botkit.socket import socket_url

    actions = 0
    headers = {"authorization": f"Bearer {token}"}
    address = socket_url(url, game_id, seat, {"only": "turns"})
    with connect(address, additional_headers=headers, compression=None, proxy=None) as ws:
        for text in ws:
            if '"type":"accepted"' in text:
                actions += 1
                continue
            if '"type":"seed_revealed"' in text:
                break
            if '"type":"your_turn"' not in text:
                continue
            turn = orjson.loads(text)["data"]
            action = {**rng.choice(turn["legal"]), "version": turn["version"]}
            ws.send(orjson.dumps({"action": action}).decode())
    return actions


def run_games(url: str, games: int, mode: str, protocol: str = "full") -> dict[str, Any]:
    import httpx

    admin = {"authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as c:
        tokens = []
        for i in range(4):
            r = c.post("/api/v1/players", json={"id": f"bench-{i}-{time.time_ns()}"}, headers=admin)
            tokens.append(r.json()["token"])
        players = [
            c.get("/api/v1/me", headers={"authorization": f"Bearer {t}"}).json()["id"]
            for t in tokens
        ]
        table = {"seats": players, "rules": {"mode": mode}, "start": False}
        ids = [
            c.post("/api/v1/games", json=table, headers=admin).json()["game"]["id"]
            for _ in range(games)
        ]
    latencies: list[float] = []
    counts: list[int] = []
    threads = []
    lean = protocol == "lean"
    for n, game_id in enumerate(ids):
        for seat in range(4):
            rng = random.Random(n * 4 + seat)

            def work(g: str = game_id, s: int = seat, r: random.Random = rng) -> None:
                if protocol == "socket":
                    counts.append(play_seat_socket(url, tokens[s], g, s, r))
                else:
                    counts.append(play_seat(url, tokens[s], g, s, r, latencies, lean))

            threads.append(threading.Thread(target=work, daemon=True))
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as c:
        start = time.perf_counter()
        for game_id in ids:
            c.post(f"/api/v1/games/{game_id}/start", headers=admin)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
    actions = sum(counts)
    return _summary(actions, elapsed, latencies, games=games, mode=mode, protocol=protocol)


def run_bare(url: str, threads_n: int, seconds: float, body_bytes: int) -> dict[str, Any]:
    import httpx

    latencies: list[float] = []
    counts: list[int] = []
    stop = threading.Event()
    body = {
        "type": "play",
        "card": "QS",
        "seat": 1,
        "version": 42,
        "pad": "x" * max(0, body_bytes - 60),
    }

    def work() -> None:
        n = 0
        with httpx.Client(base_url=url, timeout=60, trust_env=False) as c:
            while not stop.is_set():
                r = c.post("/echo", json=body)
                if r.status_code == 200:
                    n += 1
                    ms = server_timing_ms(r.headers)
                    if ms is not None:
                        latencies.append(ms)
        counts.append(n)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(threads_n)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return _summary(sum(counts), elapsed, latencies, threads=threads_n)


def _summary(n: int, elapsed: float, latencies: list[float], **extra: Any) -> dict[str, Any]:
    return {
        "requests": n,
        "seconds": round(elapsed, 3),
        "per_second": round(n / elapsed, 1) if elapsed else 0.0,
        **latency_summary(latencies),
        **extra,
    }


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench service",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter games")
    parser.add_argument("--games", type=int, default=None, help="games at once (default 8)")
    parser.add_argument("--serve", choices=("game", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port, args.data_dir)
        return 0
    games = args.games or (4 if args.quick else 8)
    mode = "short12" if args.quick else "standard20"
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="king-bench-") as tmp:
        for protocol in PROTOCOLS:
            game_server = start_child("game", os.path.join(tmp, protocol))
            try:
                cpu0 = cpu_seconds(game_server.pid)
                run = run_games(game_server.url, games, mode, protocol)
                _add_cpu(run, cpu_seconds(game_server.pid) - cpu0)
                runs[protocol] = run
            finally:
                game_server.stop()
        bare_server = start_child("bare", tmp)
        try:
            longest = max(r["seconds"] for r in runs.values())
            seconds = min(max(longest, 3.0), 20.0)
            cpu0 = cpu_seconds(bare_server.pid)
            bare = run_bare(bare_server.url, games, seconds, 120)
            _add_cpu(bare, cpu_seconds(bare_server.pid) - cpu0)
        finally:
            bare_server.stop()
    result: dict[str, Any] = {
        "benchmark": "service",
        "protocols": PROTOCOLS,
        "bare_litestar": bare,
        "target_ratio": TARGET_RATIO,
        "target_cpu_ratio": TARGET_CPU_RATIO,
        "server": "uvicorn, 1 worker, loopback; SQLite synchronous=FULL (the service default)",
    }
    for protocol, run in runs.items():
        result[protocol] = {**run, **_ratios(run, bare)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"King service, {games} {mode} games at once, every seat a pull bot:")
    for protocol in PROTOCOLS:
        _line(f"service, {protocol}", runs[protocol])
    _line("bare Litestar JSON", bare)
    print(
        "  (full: the seat's whole NDJSON stream and POST /actions answered with the view; "
        "lean: ?only=turns and Prefer: return=minimal; socket: the seat's WebSocket, turns-only "
        "frames and action frames, no request per action, so no Server-Timing figures)"
    )
    for protocol in PROTOCOLS:
        r = result[protocol]
        print(
            f"{protocol}: rate ratio {r['ratio']} ({_verdict(r['meets_target'])} the "
            f"{TARGET_RATIO} target); server CPU per request {r['server_cpu_ms_per_request']} ms "
            f"against the bare endpoint's {bare['server_cpu_ms_per_request']} ms: ratio "
            f"{r['cpu_ratio']} ({_verdict(r['meets_cpu_target'])} the {TARGET_CPU_RATIO} "
            f"target); server busy {r['server_busy']:.0%} of a core"
        )
    print(
        f"bare server busy {bare['server_busy']:.0%} of a core (far from busy: the clients, "
        "not it, set its rate)"
    )
    return 0


def _verdict(met: bool) -> str:
    return "meets" if met else "misses"


def _ratios(run: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """The service's rate over the bare endpoint's, and the bare endpoint's server CPU per
    request over the service's: what one core of the server can serve, whatever the clients
    manage (the Python clients here can hold the bare endpoint back, which flatters the rate
    ratio; the CPU ratio they cannot)."""
    ratio = round(run["per_second"] / bare["per_second"], 3) if bare["per_second"] else None
    cpu = run["server_cpu_ms_per_request"]
    cpu_ratio = round(bare["server_cpu_ms_per_request"] / cpu, 3) if cpu else None
    return {
        "ratio": ratio,
        "cpu_ratio": cpu_ratio,
        "meets_target": ratio is not None and ratio >= TARGET_RATIO,
        "meets_cpu_target": cpu_ratio is not None and cpu_ratio >= TARGET_CPU_RATIO,
    }


def _add_cpu(summary: dict[str, Any], cpu: float) -> None:
    """The server's CPU over the run: per request, and as a share of one core."""
    n, seconds = summary["requests"], summary["seconds"]
    summary["server_cpu_seconds"] = round(cpu, 3)
    summary["server_cpu_ms_per_request"] = round(1000 * cpu / n, 4) if n else None
    summary["server_busy"] = round(cpu / seconds, 3) if seconds else 0.0


def _line(name: str, r: dict[str, Any]) -> None:
    print(
        f"  {name:<20} {r['per_second']:>9.1f} req/s   service-side p50 {r['latency_ms_p50']} ms"
        f"   p99 {r['latency_ms_p99']} ms   ({r['requests']} requests in {r['seconds']} s)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
