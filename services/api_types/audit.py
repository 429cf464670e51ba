"""A game's audit report (tournament.games.GameAudit.to_dict), the answer of
GET /api/v1/games/{id}/audit."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from services.api_types.common import Shape


class ChainCheck(Shape):
    """The hash chain's verdict."""

    ok: bool
    events_checked: int
    first_bad_version: Annotated[int | None, Meta(description="the first event that breaks it")]
    reason: str | None


class ReplayCheck(Shape):
    """The replay audit's verdict (domain.audit)."""

    ok: bool
    seed_checked: Annotated[bool, Meta(description="the revealed seed matches the commitment")]
    deals_checked: Annotated[int, Meta(description="deals whose hands were re-derived")]
    first_bad_version: int | None
    event_type: Annotated[str | None, Meta(description="the type of the first bad event")]
    reason: str | None
    notes: list[str]


class AuditReport(Shape):
    """GET /api/v1/games/{id}/audit: the hash chain and the replay audit."""

    game_id: str
    ok: Annotated[bool, Meta(description="both checks passed")]
    events: Annotated[int, Meta(description="events replayed")]
    finished: bool
    chain: ChainCheck
    replay: ReplayCheck


__all__ = ["AuditReport", "ChainCheck", "ReplayCheck"]
