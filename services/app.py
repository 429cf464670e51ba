"""The Litestar application: `create_app(settings)`; `king serve` runs it under uvicorn.

API under /api/v1, OpenAPI schema and docs pages under /schema, health under /health,
Prometheus metrics at /metrics.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from eventstore import EventStore
from services.accounts.csrf import csrf_config, csrf_middleware
from services.allow import fresh_options
from services.compression import compression_config
from services.container import Services, build_services
from services.content_type import require_json
from services.controllers.accounts import AccountController
from services.controllers.analysis import AnalysisController, close_analysis
from services.controllers.deps import (
    SESSION_COOKIE,
    provide_maybe_principal,
    provide_principal,
    services_provider,
)
from services.controllers.games import GameController
from services.controllers.health import HealthController
from services.controllers.invitations import InvitationController
from services.controllers.lobby import LobbyController
from services.controllers.log import LogController
from services.controllers.players import PlayerController
from services.controllers.records import RecordController
from services.controllers.sockets import seat_socket
from services.controllers.streams import StreamController
from services.controllers.tournaments import LeaderboardController, TournamentController
from services.database import open_store
from services.http_observer import observe_http
from services.observability import get_logger
from services.openapi import operation_id, use_truthful_openapi
from services.problems import EXCEPTION_HANDLERS
from services.ratelimit import make_buckets, rate_limit_middleware
from services.settings import Settings
from services.timing import server_timing_middleware
from services.web import template_config, web_handlers

log = get_logger("king.app")


def create_app(settings: Settings, store: EventStore | None = None) -> Litestar:
    """The app on the settings' database (opened and, for SQLite, migrated now)."""
    owned = store is None
    store = store or open_store(settings)
    services = build_services(settings, store)
    buckets = make_buckets(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if services.admin_token_file is not None:
            log.info("admin_token_generated", file=str(services.admin_token_file))
        if buckets is not None:
            await buckets.start()
        # The log-in buckets are not started: a shared store is checked (and its state
        # logged) once, by the general buckets above; log-ins fall back to memory on their own.
        await services.ownership.start()
        await services.watcher.start()
        if services.tlog is not None:
            await services.tlog.start()
        if settings.run_scheduler and services.scheduler is not None:
            await services.scheduler.start()
        log.info("service_started", database=store.backend, driver=settings.run_driver)
        try:
            yield
        finally:
            services.closing = True
            close_analysis(app.state)
            await services.watcher.stop()
            if services.tlog is not None:
                await services.tlog.stop()
            if services.scheduler is not None:
                await services.scheduler.stop()
            await services.ownership.stop()
            # the appends handed over so far are finished before the store closes
            await asyncio.to_thread(services.games.close)
            await services.push.aclose()
            if buckets is not None:
                await buckets.close()
            if services.login_limits is not None:
                await services.login_limits.close()
            if owned:
                store.close()
            log.info("service_stopped")

    app = Litestar(
        route_handlers=[
            PlayerController,
            AccountController,
            GameController,
            AnalysisController,
            RecordController,
            LogController,
            StreamController,
            seat_socket,
            InvitationController,
            LobbyController,
            HealthController,
            TournamentController,
            LeaderboardController,
            *web_handlers(),
        ],
        template_config=template_config(),
        dependencies={
            "services": Provide(services_provider(services), sync_to_thread=False),
            "maybe_principal": Provide(provide_maybe_principal),
            "principal": Provide(provide_principal),
        },
        exception_handlers=EXCEPTION_HANDLERS,
        before_request=require_json,
        cors_config=cors_config(settings),
        compression_config=compression_config(),
        lifespan=[lifespan],
        middleware=[
            server_timing_middleware,
            rate_limit_middleware(buckets),
            csrf_middleware(
                csrf_config(services.csrf_secret, settings.secure_cookies), SESSION_COOKIE
            ),
        ],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="King game service",
            version="1.0.0",
            description="Turkish King (Rıfkı) over HTTP: tables, bots, streams, records, audit.",
            path="/schema",
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin()],
            components=Components(
                security_schemes={
                    "bearer": SecurityScheme(type="http", scheme="bearer", description="API token")
                }
            ),
            operation_id_creator=operation_id,
        ),
        state=State({"king": services, "rate_limits": buckets}),
        debug=False,
        # No logging set-up of Litestar's own (a queue thread writing plain text): its records
        # go to the root logger, where the one handler of configure_logging renders them.
        logging_config=None,
    )
    use_truthful_openapi(app)
    fresh_options(app)
    # Outermost: every request's id and figures, the 404s of unrouted paths included.
    app.asgi_handler = observe_http(app.asgi_handler, services.metrics)  # type: ignore[arg-type,assignment]
    return app


def cors_config(settings: Settings) -> CORSConfig | None:
    """Cross-origin calls from the browser pages of the given origins (none by default: the
    service's own pages are same-origin). Tokens travel in the Authorization header, never
    in cookies, so credentials are not allowed."""
    origins = settings.cors_origin_list
    if not origins:
        return None
    return CORSConfig(
        allow_origins=origins,
        allow_methods=["GET", "POST", "PUT", "DELETE"],
        allow_headers=[
            "authorization",
            "content-type",
            "last-event-id",
            "idempotency-key",
            "x-request-id",
        ],
        allow_credentials=False,
        expose_headers=["Retry-After", "Server-Timing", "Idempotent-Replayed", "X-Request-ID"],
        max_age=600,
    )


def services_of(app: Litestar) -> Services:
    services: Services = app.state.king
    return services
