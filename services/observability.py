"""Structured logs (structlog, JSON) and Prometheus metrics.

Log lines carry game ids, seats, versions, reason codes and timings: never a card of a hidden
hand, never a seed or a token. Metrics live in their own registry (one per app).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError

from eventstore import StoreBusy, StoreUnavailable

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


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


_HANDLER_NAME = "king"


def error_fields(exc: BaseException) -> dict[str, Any]:
    """What a log line may say of an error: its type; a rule violation's reason code; and the
    message only of database and network errors. Other messages are left out, since one from
    the rules engine (or an error wrapping it) can name the cards of a hidden hand."""
    fields: dict[str, Any] = {"error": type(exc).__name__}
    code = getattr(getattr(exc, "violation", None), "code", None)
    if isinstance(code, str):
        fields["code"] = code
    if isinstance(exc, SQLAlchemyError | OSError | StoreBusy | StoreUnavailable):
        fields["detail"] = str(exc)[:200]
    return fields


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)


class Metrics:
    """The service's Prometheus metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.decision_seconds = Histogram(
            "king_decision_seconds",
            "Time a seat took to decide, by controller kind and player",
            ["kind", "player"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.action_seconds = Histogram(
            "king_action_seconds",
            "Service-side time to apply one action (load, decide, append)",
            buckets=LATENCY_BUCKETS,
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
