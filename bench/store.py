"""`python -m bench store [--json] [--quick]`: the event store beside the eventsourcing library.

Same run, same disk, both at SQLite ``synchronous=FULL`` in WAL mode:
  * one event per commit (a live game appends each card),
  * batches of events per commit,
  * full-stream replay, the two alternating round by round after a warm-up round each
    (ours: read + upcast + verify the hash chain; theirs: rebuild the aggregate from its
    stored events),
  * group commit (many games appending in one transaction; theirs: ``app.save(*aggregates)``),
and the disk's raw limit: a bare sqlite3 insert-and-commit loop at the same settings.
PostgreSQL figures (one per commit, plain and fenced by a lease; batch; group; replay) are
added when a server answers. Medians of several repeats.

eventsourcing does not set ``synchronous`` itself (it takes SQLite's default), so the bench
reads it back from the library's own connection and refuses to report unless it is FULL, as
ours is: figures at different durability would not compare.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get(
    "KING_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


_SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


class NotComparable(RuntimeError):
    """A store under test is not at SQLite synchronous=FULL: its figures would mislead."""


def _sync_of_ours(store: Any) -> int:
    """``PRAGMA synchronous`` on a connection of the store's write engine (every connection
    gets the store's settings when it opens)."""
    with store.engines.write.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA synchronous").scalar())


def _sync_of_peer(app: Any) -> int:
    """``PRAGMA synchronous`` on a writer connection of eventsourcing's own pool
    (``app.recorder.datastore``): a fresh connection to the file would only show the default."""
    datastore = app.recorder.datastore
    with datastore.get_connection(commit=True) as conn:
        cursor = conn.cursor()
        cursor.execute("PRAGMA synchronous")
        return int(cursor.fetchone()[0])


def _require_full(seen: dict[str, set[int]], who: str, value: int) -> None:
    seen.setdefault(who, set()).add(value)
    if value != 2:
        raise NotComparable(
            f"{who} runs at SQLite synchronous={_SYNC_NAMES.get(value, value)} ({value}), "
            "not FULL (2): refusing to report figures at different durability"
        )


def _card(i: int) -> dict[str, Any]:
    return {"seat": i % 4, "card": "QS", "trick": i // 4, "n": i}


# ------------------------------------------------------------------ ours


def _open_ours(url: str, **kw: Any) -> Any:
    from eventstore import EventStore, UpcasterRegistry

    registry = UpcasterRegistry()
    registry.register("CardPlayed", 1, lambda p: {**p, "v2": True})
    return EventStore.open(url, upcasters=registry, create=True, **kw)


def ours_one(store: Any, n: int, sid: str) -> float:
    from eventstore import NewEvent

    start = time.perf_counter()
    for i in range(n):
        store.append(sid, [NewEvent("CardPlayed", _card(i))], i)
    return n / (time.perf_counter() - start)


def ours_one_fenced(store: Any, n: int, sid: str) -> float:
    """One event per commit carrying a lease as its fence (a game driver's append)."""
    from eventstore import NewEvent

    lease = store.acquire_lease(f"bench/{sid}", "bench", 600_000)
    start = time.perf_counter()
    for i in range(n):
        store.append(sid, [NewEvent("CardPlayed", _card(i))], i, fence=lease)
    return n / (time.perf_counter() - start)


def ours_batch(store: Any, commits: int, size: int, sid: str) -> float:
    from eventstore import NewEvent

    start = time.perf_counter()
    for c in range(commits):
        events = [NewEvent("CardPlayed", _card(c * size + k)) for k in range(size)]
        store.append(sid, events, c * size)
    return commits * size / (time.perf_counter() - start)


def ours_group(store: Any, commits: int, games: int, prefix: str) -> float:
    from eventstore import NewEvent

    start = time.perf_counter()
    for c in range(commits):
        store.append_many(
            [(f"{prefix}-{g}", [NewEvent("CardPlayed", _card(c))], c) for g in range(games)]
        )
    return commits * games / (time.perf_counter() - start)


def ours_replay(store: Any, sid: str, rounds: int) -> float:
    count = 0
    start = time.perf_counter()
    for _ in range(rounds):
        state = 0
        for event in store.read_stream(sid, verify=True):  # read + upcast + verify chain
            state += event.payload["n"]
        count += store.stream_version(sid)
    return count / (time.perf_counter() - start)


# ------------------------------------------------------------------ eventsourcing


def _peer_app(path: Path) -> Any:
    from eventsourcing.application import Application

    class Games(Application):  # type: ignore[type-arg]
        pass

    return Games(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)})


@functools.cache
def _peer_game_class() -> Any:
    """One class per process: eventsourcing registers each aggregate class by its topic."""
    from eventsourcing.domain import Aggregate, event

    class Game(Aggregate):
        def __init__(self) -> None:
            self.total = 0

        @event("CardPlayed")
        def play(self, card: dict[str, Any]) -> None:
            self.total += card["n"]

    return Game


def peer_batch(app: Any, game_cls: Any, commits: int, size: int) -> float:
    game = game_cls()
    app.save(game)
    start = time.perf_counter()
    for c in range(commits):
        for k in range(size):
            game.play(_card(c * size + k))
        app.save(game)
    return commits * size / (time.perf_counter() - start)


def peer_group(app: Any, game_cls: Any, commits: int, games: int) -> float:
    aggregates = [game_cls() for _ in range(games)]
    app.save(*aggregates)
    start = time.perf_counter()
    for c in range(commits):
        for g in aggregates:
            g.play(_card(c))
        app.save(*aggregates)
    return commits * games / (time.perf_counter() - start)


def peer_replay(app: Any, game_id: Any, events: int, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        app.repository.get(game_id)
    return events * rounds / (time.perf_counter() - start)


# ------------------------------------------------------------------ interleaved


def one_per_commit_interleaved(
    d: Path, n: int, seen: dict[str, set[int]], chunk: int = 50
) -> tuple[float, float, float]:
    """Raw loop, ours and eventsourcing one event per commit, in alternating chunks.

    The disk and CPUs are shared with other work; alternating small chunks (rotating which
    goes first) exposes all three to the same conditions, so their ratios mean something.
    """
    from eventstore import NewEvent

    raw = sqlite3.connect(d / "raw-i.db", isolation_level=None)
    raw.execute("PRAGMA journal_mode=WAL")
    raw.execute("PRAGMA synchronous=FULL")
    raw.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    body = json.dumps(_card(1))
    store = _open_ours(f"sqlite:///{d / 'ours-i.db'}")
    app = _peer_app(d / "peer-i.db")
    _require_full(seen, "raw sqlite3", int(raw.execute("PRAGMA synchronous").fetchone()[0]))
    _require_full(seen, "ours", _sync_of_ours(store))
    _require_full(seen, "eventsourcing", _sync_of_peer(app))
    game = _peer_game_class()()
    app.save(game)
    spent = {"raw": 0.0, "ours": 0.0, "peer": 0.0}
    done = 0

    def run_raw(k: int) -> None:
        for _ in range(k):
            raw.execute("BEGIN IMMEDIATE")
            raw.execute("INSERT INTO t (body) VALUES (?)", (body,))
            raw.execute("COMMIT")

    def run_ours(k: int) -> None:
        for i in range(done, done + k):
            store.append("game-i", [NewEvent("CardPlayed", _card(i))], i)

    def run_peer(k: int) -> None:
        for i in range(done, done + k):
            game.play(_card(i))
            app.save(game)

    runners = [("raw", run_raw), ("ours", run_ours), ("peer", run_peer)]
    for c in range(max(1, n // chunk)):
        turn = runners[c % 3 :] + runners[: c % 3]
        for name, fn in turn:
            start = time.perf_counter()
            fn(chunk)
            spent[name] += time.perf_counter() - start
        done += chunk
    raw.close()
    store.close()
    app.close()
    return done / spent["raw"], done / spent["ours"], done / spent["peer"]


def with_and_without_tree(
    plain: Any, treed: Any, n: int, chunk: int = 50, prefix: str = "game"
) -> tuple[float, float]:
    """One event per commit into two stores alike, in alternating chunks: one without the
    transparency log, one whose tree an integrator extends after every chunk (as a service
    asked for a checkpoint every `chunk` events would), its time counted with the appends'."""
    from eventstore import NewEvent
    from eventstore.logtree import LogTree

    tree = LogTree(treed)
    spent = {"plain": 0.0, "tree": 0.0}
    done = 0

    def run_plain(k: int) -> None:
        for i in range(done, done + k):
            plain.append(f"{prefix}-t", [NewEvent("CardPlayed", _card(i))], i)

    def run_tree(k: int) -> None:
        for i in range(done, done + k):
            treed.append(f"{prefix}-t", [NewEvent("CardPlayed", _card(i))], i)
        tree.integrate()

    runners = [("plain", run_plain), ("tree", run_tree)]
    for c in range(max(1, n // chunk)):
        for name, fn in runners[c % 2 :] + runners[: c % 2]:
            start = time.perf_counter()
            fn(chunk)
            spent[name] += time.perf_counter() - start
        done += chunk
    assert tree.size() == treed.head_position() == done
    return done / spent["plain"], done / spent["tree"]


# ------------------------------------------------------------------ running


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def run(quick: bool, repeats: int) -> dict[str, Any]:
    n_one = 300 if quick else 1500
    commits, size = (30, 20) if quick else (150, 20)
    games, group_commits = 16, (20 if quick else 100)
    replay_len, rounds = (1000, 3) if quick else (4000, 5)
    base = ROOT / "var"
    base.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-store-", dir=base))
    results: dict[str, list[float]] = {}
    seen: dict[str, set[int]] = {}

    def add(key: str, value: float) -> None:
        results.setdefault(key, []).append(value)

    try:
        for r in range(repeats):
            d = work / f"r{r}"
            d.mkdir()
            raw_rate, ours_rate, peer_rate = one_per_commit_interleaved(d, n_one, seen)
            add("raw_sqlite_commits_per_s", raw_rate)
            add("ours_one_per_commit", ours_rate)
            add("peer_one_per_commit", peer_rate)
            plain = _open_ours(f"sqlite:///{d / 'plain.db'}")
            treed = _open_ours(f"sqlite:///{d / 'treed.db'}")
            without, with_tree = with_and_without_tree(plain, treed, n_one)
            plain.close()
            treed.close()
            add("ours_one_per_commit_without_tree", without)
            add("ours_one_per_commit_with_tree", with_tree)

            store = _open_ours(f"sqlite:///{d / 'ours.db'}")
            _require_full(seen, "ours", _sync_of_ours(store))
            add("ours_batch", ours_batch(store, commits, size, "game-batch"))
            add("ours_group", ours_group(store, group_commits, games, "grp"))
            ours_batch(store, replay_len // 20, 20, "game-replay")

            app = _peer_app(d / "peer.db")
            _require_full(seen, "eventsourcing", _sync_of_peer(app))
            game_cls = _peer_game_class()
            add("peer_batch", peer_batch(app, game_cls, commits, size))
            add("peer_group", peer_group(app, game_cls, group_commits, games))
            replay_game = game_cls()
            for i in range(replay_len):
                replay_game.play(_card(i))
                if i % 20 == 19:
                    app.save(replay_game)
            # Replays alternate, one round each at a time after one unmeasured round each,
            # so both read warm files under the same moment's load.
            ours_replay(store, "game-replay", 1)
            peer_replay(app, replay_game.id, replay_len, 1)
            ours_t = peer_t = 0.0
            for _ in range(rounds):
                ours_t += 1 / ours_replay(store, "game-replay", 1)
                peer_t += 1 / peer_replay(app, replay_game.id, replay_len, 1)
            add("ours_replay", rounds / ours_t)
            add("peer_replay", rounds / peer_t)
            store.close()
            app.close()
            shutil.rmtree(d, ignore_errors=True)
        pg = _postgres(repeats, n_one // 2, commits, size, games, group_commits, replay_len, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: _median(v) for k, v in results.items()}
    out: dict[str, Any] = {
        "settings": {
            "sqlite": "WAL, synchronous=FULL (both)",
            "synchronous (read back)": ", ".join(
                f"{who} " + "/".join(f"{_SYNC_NAMES[v]}({v})" for v in sorted(values))
                for who, values in seen.items()
            ),
            "repeats": repeats,
            "one_per_commit_events": n_one,
            "batch": f"{commits} commits x {size} events",
            "group": f"{group_commits} commits x {games} games",
            "replay": f"{replay_len} events x {rounds} rounds",
            "disk": str(work.parent),
        },
        "sqlite": med,
        "ratios": {
            "one_per_commit_vs_peer": med["ours_one_per_commit"] / med["peer_one_per_commit"],
            "batch_vs_peer": med["ours_batch"] / med["peer_batch"],
            "group_vs_peer": med["ours_group"] / med["peer_group"],
            "replay_vs_peer": med["ours_replay"] / med["peer_replay"],
            "with_tree_of_without": med["ours_one_per_commit_with_tree"]
            / med["ours_one_per_commit_without_tree"],
            "ours_one_per_commit_of_raw": med["ours_one_per_commit"]
            / med["raw_sqlite_commits_per_s"],
            "peer_one_per_commit_of_raw": med["peer_one_per_commit"]
            / med["raw_sqlite_commits_per_s"],
        },
        "postgresql": pg,
    }
    return out


def _postgres(
    repeats: int,
    n_one: int,
    commits: int,
    size: int,
    games: int,
    group_commits: int,
    replay_len: int,
    rounds: int,
) -> dict[str, Any] | str:
    try:
        import sqlalchemy as sa

        engine = sa.create_engine(PG_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        engine.dispose()
    except Exception as exc:
        return f"skipped: PostgreSQL not reachable ({type(exc).__name__})"
    import uuid

    import sqlalchemy as sa

    from eventstore import StoreSettings

    samples: dict[str, list[float]] = {}
    spent: dict[str, list[float]] = {}

    def per_append(store: Any, key: str, n: int, fn: Any, sid: str) -> float:
        """`fn(store, n, sid)`, noting the statements each append sent (`store.statements`)."""
        before = store.statements
        rate = float(fn(store, n, sid))
        spent.setdefault(key, []).append((store.statements - before) / n)
        return rate

    for _ in range(repeats):
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        store = _open_ours(PG_URL, settings=StoreSettings(pg_schema=schema))
        try:
            samples.setdefault("ours_one_per_commit", []).append(
                per_append(store, "one_per_commit", n_one, ours_one, "game-one")
            )
            samples.setdefault("ours_one_per_commit_fenced", []).append(
                per_append(store, "fenced", n_one, ours_one_fenced, "game-fenced")
            )
            samples.setdefault("ours_batch", []).append(
                ours_batch(store, commits, size, "game-batch")
            )
            samples.setdefault("ours_group", []).append(
                ours_group(store, group_commits, games, "grp")
            )
            ours_batch(store, replay_len // 20, 20, "game-replay")
            samples.setdefault("ours_replay", []).append(ours_replay(store, "game-replay", rounds))
            store.close()
            store = _open_ours(PG_URL, settings=StoreSettings(pg_schema=schema))
            treed_schema = schema + "_t"
            treed = _open_ours(PG_URL, settings=StoreSettings(pg_schema=treed_schema))
            try:
                without, with_tree = with_and_without_tree(store, treed, n_one, prefix="pg")
            finally:
                treed.close()
                engine = sa.create_engine(PG_URL)
                with engine.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA "{treed_schema}" CASCADE'))
                engine.dispose()
            samples.setdefault("ours_one_per_commit_without_tree", []).append(without)
            samples.setdefault("ours_one_per_commit_with_tree", []).append(with_tree)
        finally:
            store.close()
            engine = sa.create_engine(PG_URL)
            with engine.begin() as conn:
                conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            engine.dispose()
    out: dict[str, Any] = {k: _median(v) for k, v in samples.items()}
    out["statements_per_append"] = {k: _median(v) for k, v in spent.items()}
    return out


def _print(result: dict[str, Any]) -> None:
    s, r = result["sqlite"], result["ratios"]
    print("event store vs eventsourcing 9 (SQLite, WAL, synchronous=FULL; medians, events/s)")
    for key, value in result["settings"].items():
        print(f"  {key:<24} {value}")
    rows: list[tuple[str, str, str, str]] = [
        (
            "one event per commit",
            "ours_one_per_commit",
            "peer_one_per_commit",
            "one_per_commit_vs_peer",
        ),
        ("batch per commit", "ours_batch", "peer_batch", "batch_vs_peer"),
        ("group commit (16 games)", "ours_group", "peer_group", "group_vs_peer"),
        ("replay (read+upcast+verify)", "ours_replay", "peer_replay", "replay_vs_peer"),
    ]
    print(f"\n  {'':<30}{'ours':>12}{'eventsourcing':>15}{'ratio':>8}")
    for label, ours, peer, ratio in rows:
        print(f"  {label:<30}{s[ours]:>12,.0f}{s[peer]:>15,.0f}{r[ratio]:>7.2f}x")
    print(
        f"\n  transparency log (one event per commit; tree extended every 50 events): "
        f"{s['ours_one_per_commit_with_tree']:,.0f}/s with the tree beside "
        f"{s['ours_one_per_commit_without_tree']:,.0f}/s without = "
        f"{r['with_tree_of_without']:.0%} (target: at least 85%)"
    )
    raw = s["raw_sqlite_commits_per_s"]
    print(f"\n  raw disk limit (bare sqlite3 insert+commit loop): {raw:,.0f} commits/s")
    print(
        f"  ours one-per-commit = {r['ours_one_per_commit_of_raw']:.0%} of raw; "
        f"eventsourcing = {r['peer_one_per_commit_of_raw']:.0%} of raw"
    )
    pg = result["postgresql"]
    if isinstance(pg, dict):
        rates = {k: v for k, v in pg.items() if isinstance(v, float)}
        print(
            "\n  PostgreSQL (ours, events/s): "
            + ", ".join(f"{k}={v:,.0f}" for k, v in rates.items())
        )
        spent = pg["statements_per_append"]
        print(
            "  PostgreSQL statements per one-event append: "
            + ", ".join(f"{k}={v:.2f}" for k, v in spent.items())
        )
    else:
        print(f"\n  PostgreSQL: {pg}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench store", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeats", type=int, default=None, help="repeats (default 3)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    try:
        import eventsourcing  # noqa: F401
    except ImportError:
        print("the eventsourcing library is needed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    try:
        result = run(args.quick, repeats)
    except NotComparable as exc:
        print(f"bench store: {exc}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0
