"""The answers of GET /health/live and GET /health/ready (services.controllers.health)."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, UnsetType

from services.api_types.common import Shape

Check = Annotated[
    str, Meta(description='"ok", or what fails ("failing: <why>", "not running", ...)')
]


class Live(Shape):
    """GET /health/live: the process answers."""

    status: Literal["ok"]


class ReadyChecks(Shape):
    """Each readiness check: `driver` and `leases` only in a process that drives games."""

    database: Check
    feed: Check
    driver: Check | UnsetType = UNSET
    leases: Check | UnsetType = UNSET


class Ownership(Shape):
    """Who owns how many live games, as this process's last tick saw it."""

    owner: Annotated[str | None, Meta(description="this process's owner id (null: no driver)")]
    live_games: int
    unowned_games: int
    owned_here: int
    owners: Annotated[dict[str, int], Meta(description="live games held, by owner id")]
    driving_processes: int
    takeovers_here: int
    takeover_bound_seconds: float


class SchedulerStatus(Shape):
    """Whether this process leads the tournament scheduler (informational)."""

    running: bool
    leader: bool
    owner: str


class Ready(Shape):
    """GET /health/ready: 200 with status ok, or 503 with status unavailable."""

    status: Literal["ok", "unavailable"]
    checks: ReadyChecks
    warnings: Annotated[list[str], Meta(description="live games left without an owner")]
    ownership: Ownership
    scheduler: SchedulerStatus | UnsetType = UNSET


__all__ = ["Live", "Ownership", "Ready", "ReadyChecks", "SchedulerStatus"]
