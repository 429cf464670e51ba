"""Structured logs (structlog, JSON) and Prometheus metrics.

Log lines carry game ids, seats, versions, reason codes and timings: never a card of a hidden
hand, never a seed or a token. Metrics live in their own registry (one per app).
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import structlog
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError, StatementError

from eventstore import StoreBusy, StoreUnavailable

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# The players the decision histogram names one by one; any further player is `other`, so the
# number of its series stays bounded however many players the service ever sees.
PLAYER_LABELS = 50
OTHER = "other"
# The HTTP methods the request metrics name; any other is `other`.
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# The id of the HTTP request being served (services/http_observer.py sets it), for the
# problem bodies; log lines get it through structlog's context variables.
REQUEST_ID: ContextVar[str | None] = ContextVar("king_request_id", default=None)


def current_request_id() -> str | None:
    return REQUEST_ID.get()


def configure_logging(level: str = "info", json: bool = True) -> None:
    """Every log line of the process, the service's and the libraries', through one handler.

    structlog hands its events to the standard library's logging, and one StreamHandler renders
    them and the libraries' own records (uvicorn, Litestar, httpx, ...) alike. One writer
    writes each line whole under its lock: two writers on one stream once ran a library's
    plain-text line into the end of a JSON line.
    """
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    renderer: Any = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if h.get_name() != _HANDLER_NAME] + [handler]
    root.setLevel(numeric)
    # Libraries that log every request or job firing at INFO would drown the service's own
    # lines (a line per push request, per scheduler tick): only their warnings get through.
    for chatty in ("httpx", "httpcore", "apscheduler"):
        logging.getLogger(chatty).setLevel(max(numeric, logging.WARNING))
    aps = logging.getLogger("apscheduler.scheduler")
    aps.filters = [f for f in aps.filters if not isinstance(f, SkippedFiring)] + [SkippedFiring()]


class SkippedFiring(logging.Filter):
    """Drops APScheduler's warning that a firing was skipped because the last one still runs.
    The scheduler's jobs are `max_instances=1, coalesce=True` on purpose: a tournament tick
    longer than the period is simply not run twice, which is no cause for a warning a tick."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "maximum number of running instances reached" not in str(record.msg)


_HANDLER_NAME = "king"


def error_fields(exc: BaseException) -> dict[str, Any]:
    """What a log line may say of an error: its type; a rule violation's reason code; and the
    message only of the errors whose message cannot hold a card (`message_is_safe`). Other
    messages are left out, since one from the rules engine (or an error wrapping it, or a bot's
    reply quoted back) can name the cards of a hidden hand."""
    fields: dict[str, Any] = {"error": type(exc).__name__}
    code = getattr(getattr(exc, "violation", None), "code", None)
    if isinstance(code, str):
        fields["code"] = code
    detail = safe_message(exc)
    if detail is not None:
        fields["detail"] = detail
    return fields


def safe_message(exc: BaseException) -> str | None:
    """The part of an exception's message a log line may carry (docs/OPERATIONS.md, "Logs"),
    or None. Only database and network errors have one: their messages are written by the
    database driver or the operating system about a connection, a lock or a statement, never
    about a game's state. Even of those, only the first line, at most 200 characters:
    SQLAlchemy puts the statement and its bound parameters (an event's payload: a dealt
    hand) on the lines after it, and of a statement's error only the driver's own first line
    is kept."""
    if not isinstance(exc, SQLAlchemyError | OSError | StoreBusy | StoreUnavailable):
        return None
    source: BaseException = exc
    orig = getattr(exc, "orig", None)
    if isinstance(exc, StatementError) and isinstance(orig, BaseException):
        source = orig
    lines = str(source).strip().splitlines()
    return (lines[0] if lines else type(source).__name__)[:200]


def log_failure(logger: Any, event: str, exc: BaseException, **fields: Any) -> None:
    """Log an error at `error` with its `error_fields` only, and its stack trace at `debug`
    (a second line, the same event with `trace`): where it was raised, as `file:line in
    function` frames, without the message and without the source lines, either of which can
    quote a hidden hand."""
    logger.error(event, **fields, **error_fields(exc))
    logger.debug(event, **fields, error=type(exc).__name__, trace=stack_trace(exc))


def stack_trace(exc: BaseException) -> list[str]:
    """The frames an exception went through, innermost last, and of the exceptions it was
    raised from or during (by type): no message, no source line, no local value."""
    out: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if out:
            out.append(f"-- while handling {type(current).__name__}")
        for frame in traceback.extract_tb(current.__traceback__):
            out.append(f"{frame.filename}:{frame.lineno} in {frame.name}")
        current = current.__cause__ or current.__context__
    return out


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)


class Metrics:
    """The service's Prometheus metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        # The process's own figures (CPU, memory, open files, start time), the garbage
        # collector's and the Python version, as prometheus-client's default registry has them.
        ProcessCollector(registry=r)
        GCCollector(registry=r)
        PlatformCollector(registry=r)
        self.http_requests = Counter(
            "king_http_requests_total",
            "HTTP requests answered, by method, route template and status",
            ["method", "route", "status"],
            registry=r,
        )
        self.http_seconds = Histogram(
            "king_http_request_duration_seconds",
            "Time to the response's head (for streams: to open them), by method and route template",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.decision_seconds = Histogram(
            "king_decision_seconds",
            f"Time a seat took to decide, by controller kind and player (the first "
            f"{PLAYER_LABELS} players this process timed by name, the others as '{OTHER}')",
            ["kind", "player"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.players = BoundedLabel(PLAYER_LABELS)
        self.action_seconds = Histogram(
            "king_action_seconds",
            "Service-side time to apply one action (load, decide, append)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.commit_group = Histogram(
            "king_commit_group_actions",
            "Actions whose appends were committed together (SQLite's group commit)",
            buckets=(1, 2, 4, 8, 16, 32, 64),
            registry=r,
        )
        self.strikes = Counter(
            "king_strikes_total", "Strikes recorded, by reason", ["reason"], registry=r
        )
        self.forfeits = Counter("king_forfeits_total", "Seats forfeited for strikes", registry=r)
        self.appends = Counter("king_appends_total", "Events appended to game streams", registry=r)
        self.rejections = Counter(
            "king_rejected_actions_total", "Actions refused, by reason code", ["code"], registry=r
        )
        self.audits = Counter("king_audits_total", "Game audits run", registry=r)
        self.audit_failures = Counter(
            "king_audit_failures_total", "Game audits that found a problem", registry=r
        )
        self.live_games = Gauge("king_live_games", "Games the driver is running", registry=r)
        self.games_owned = Gauge(
            "king_games_owned",
            "Live games whose lease this process holds (it drives them)",
            registry=r,
        )
        self.games_unowned = Gauge(
            "king_games_unowned", "Live games that no process holds a lease on", registry=r
        )
        self.game_owners = Gauge(
            "king_game_owners", "Driving processes with a live membership lease", registry=r
        )
        self.takeovers = Counter(
            "king_takeovers_total",
            "Games this process took over from an owner whose lease had lapsed or was released",
            registry=r,
        )
        self.lease_failures = Counter(
            "king_lease_renewal_failures_total",
            "Lease renewals that failed (the database did not answer)",
            registry=r,
        )
        self.feed_position = Gauge(
            "king_feed_position",
            "Last position of the store's feed this process has followed (the feed watcher)",
            registry=r,
        )
        self.feed_errors = Counter(
            "king_feed_errors_total", "Failed reads of the store's feed by the watcher", registry=r
        )
        self.push_failures = Counter(
            "king_push_failures_total",
            "Push requests without a usable reply",
            ["reason"],
            registry=r,
        )
        self.sockets_open = Gauge(
            "king_seat_sockets", "Seat WebSockets open on this process", registry=r
        )
        self.socket_frames = Counter(
            "king_socket_frames_total",
            "Frames bots sent on seat WebSockets, by the status of their answer (200: accepted)",
            ["status"],
            registry=r,
        )

    def observe_decision(self, kind: str, player: str, seconds: float) -> None:
        """One decision's time, the player named by a bounded label."""
        self.decision_seconds.labels(kind, self.players(player)).observe(seconds)


class BoundedLabel:
    """A label's values with a bound: the first `limit` values seen are kept as they are, any
    further one becomes `other`. Series are never dropped once exported (a counter or a
    histogram must not go back), so the first come keep their names."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, value: str) -> str:
        if value in self.seen:
            return value
        with self.lock:
            if len(self.seen) < self.limit:
                self.seen.add(value)
                return value
        return OTHER


class StatementsCollector(Collector):
    """`king_sql_statements_total`: the SQL statements this process's event store has sent
    (`EventStore.statements`: every query and the transaction statements around them)."""

    def __init__(self, count: Callable[[], int]) -> None:
        self.count = count

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            "king_sql_statements",
            "SQL statements sent to the database by this process's event store",
            value=self.count(),
        )
