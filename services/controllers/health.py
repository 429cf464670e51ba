"""Liveness, readiness and Prometheus metrics."""

import asyncio
import time
from typing import Any

from litestar import Controller, Response, get
from litestar.datastructures import State
from prometheus_client import generate_latest

from services.api_types import Live, Ready
from services.controllers.deps import ServicesDep
from services.openapi import answer

METRICS_MEDIA_TYPE = "text/plain; version=0.0.4"


class HealthController(Controller):
    tags = ("operations",)

    @get("/health/live", responses={200: answer(Live, "the process answers")})
    async def health_live(self) -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @get(
        "/health/ready",
        responses={
            200: answer(Ready, "ready"),
            503: answer(Ready, "not ready: the failing checks say why"),
        },
    )
    async def health_ready(self, services: ServicesDep, state: State) -> Response[dict[str, Any]]:
        """The database answers, the driver runs and renews its leases (when this process
        drives) and the feed is followed. The body also says who owns how many live games and
        warns of live games left without an owner for longer than the takeover bound."""
        checks: dict[str, str] = {}
        try:
            await asyncio.wait_for(asyncio.to_thread(services.store.head_position), 5)
            checks["database"] = "ok"
        except Exception as exc:
            checks["database"] = f"failing: {type(exc).__name__}"
        ownership = services.ownership
        report = ownership.report
        if services.settings.run_driver:
            checks["driver"] = "ok" if services.driver.running else "not running"
            renewed = report.renewed_at
            if renewed is None or time.monotonic() - renewed > ownership.lease_seconds:
                checks["leases"] = f"failing: not renewed ({report.error or 'not yet'})"
            else:
                checks["leases"] = "ok"
        checks["feed"] = "ok" if services.watcher.running else "not following"
        ok = all(v == "ok" for v in checks.values()) and not services.closing
        body: dict[str, Any] = {"status": "ok" if ok else "unavailable", "checks": checks}
        # Games without an owner are a fact about the whole database, not about this process:
        # said here (and in king_games_unowned), never a reason to take this process out of
        # service, which would take every process out at once and help no game.
        warnings = []
        if report.unowned_over_bound:
            warnings.append(
                f"{report.unowned_over_bound} live games have had no owner for over "
                f"{ownership.bound_seconds:g} s"
            )
        # The shared rate-limit store unreachable: each process limits on its own meanwhile,
        # which serves requests still; not a reason to take this process out either.
        buckets = state.get("rate_limits")
        if buckets is not None and buckets.warning:
            warnings.append(buckets.warning)
        body["warnings"] = warnings
        body["ownership"] = {
            "owner": ownership.owner if services.settings.run_driver else None,
            "live_games": report.live,
            "unowned_games": report.unowned,
            "owned_here": report.owned_here,
            "owners": report.owners,
            "driving_processes": report.members,
            "takeovers_here": report.takeovers,
            "takeover_bound_seconds": ownership.bound_seconds,
        }
        scheduler = services.scheduler
        if scheduler is not None and services.settings.run_scheduler:
            # Informational, not a readiness check: exactly one process leads.
            body["scheduler"] = {
                "running": scheduler.running,
                "leader": scheduler.leader,
                "owner": scheduler.owner,
            }
        return Response(body, status_code=200 if ok else 503)

    # Litestar adds `; charset=utf-8` to a text/ type itself: the type is given without it, so
    # the header names the charset once (`text/plain; version=0.0.4; charset=utf-8`).
    @get("/metrics", media_type=METRICS_MEDIA_TYPE)
    async def get_metrics(self, services: ServicesDep) -> bytes:
        """Prometheus text format (0.0.4)."""
        return generate_latest(services.metrics.registry)
