"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import Controller, Response, get
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.controllers.deps import ServicesDep


class HealthController(Controller):
    tags = ("operations",)

    @get("/health/live")
    async def live(self) -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @get("/health/ready")
    async def ready(self, services: ServicesDep) -> Response[dict[str, Any]]:
        """The database answers and the driver runs (when this process runs one)."""
        checks: dict[str, str] = {}
        try:
            await asyncio.wait_for(asyncio.to_thread(services.store.head_position), 5)
            checks["database"] = "ok"
        except Exception as exc:
            checks["database"] = f"failing: {type(exc).__name__}"
        if services.settings.run_driver:
            checks["driver"] = "ok" if services.driver.running else "not running"
        checks["feed"] = "ok" if services.watcher.running else "not following"
        ok = all(v == "ok" for v in checks.values()) and not services.closing
        body: dict[str, Any] = {"status": "ok" if ok else "unavailable", "checks": checks}
        scheduler = services.scheduler
        if scheduler is not None and services.settings.run_scheduler:
            # Informational, not a readiness check: exactly one process leads.
            body["scheduler"] = {
                "running": scheduler.running,
                "leader": scheduler.leader,
                "owner": scheduler.owner,
            }
        return Response(body, status_code=200 if ok else 503)

    @get("/metrics", media_type=CONTENT_TYPE_LATEST)
    async def metrics(self, services: ServicesDep) -> bytes:
        """Prometheus text format."""
        return generate_latest(services.metrics.registry)
