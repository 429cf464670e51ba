"""A tournament page's tables: each table's status from the games index (one query for the
whole page), and for a live table a line from the public view: the deal, its contract, the
tricks played and the running totals. Never a card in anyone's hand.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import orjson
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from domain.cards import card_name
from domain.game import GameState, Phase
from domain.results import points_from_json
from domain.view import public_view
from services.db.models import GameRow, GameStreamRow
from services.web.i18n import card_label, card_text, contract_name
from tournament.games import GameFailed, GameNotFound, GameRepository

TRICKS_PER_DEAL = 13
CHUNK = 500  # ids per IN (...) query: well under every backend's parameter limit


def index_statuses(engine: Engine, game_ids: Iterable[str]) -> dict[str, str]:
    """Each indexed game's status ("created", "live", "over"); games the index does not hold
    (run by the tournament runner outside the service) are left out."""
    ids = list(dict.fromkeys(game_ids))
    out: dict[str, str] = {}
    with Session(engine) as session:
        for i in range(0, len(ids), CHUNK):
            query = select(col(GameRow.id), col(GameRow.status)).where(
                col(GameRow.id).in_(ids[i : i + CHUNK])
            )
            out.update((gid, status) for gid, status in session.execute(query).all())
    return out


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game's result as the games projection keeps it."""

    players: tuple[str, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    ladder: tuple[Fraction, ...]


def results_of(engine: Engine, game_ids: Iterable[str]) -> dict[str, GameResult]:
    """The results of those of `game_ids` that are over, from `king_game_streams` (one query
    per CHUNK ids). A row the projection could not fill completely is left out."""
    ids = list(dict.fromkeys(game_ids))
    out: dict[str, GameResult] = {}
    table = GameStreamRow.__table__  # type: ignore[attr-defined]
    with Session(engine) as session:
        for i in range(0, len(ids), CHUNK):
            query = select(table).where(
                table.c.game_id.in_(ids[i : i + CHUNK]), table.c.phase == "over"
            )
            for row in session.execute(query).all():
                try:
                    players = tuple(orjson.loads(row.players))
                    result = GameResult(
                        players,
                        tuple(orjson.loads(row.totals)),
                        tuple(orjson.loads(row.winners)),
                        tuple(points_from_json(x) for x in orjson.loads(row.ladder)),
                    )
                except (ValueError, TypeError, ZeroDivisionError):
                    continue
                if len(players) == 4 and len(result.totals) == 4 and len(result.ladder) == 4:
                    out[row.game_id] = result
    return out


def live_line(state: GameState) -> dict[str, Any]:
    """What a tournament page says about a table in play (public view only)."""
    view = public_view(state)
    contract = view.contract.value if view.contract else None
    # The trick in play: cards on the table, public to everyone watching (never a hand).
    trick: list[dict[str, str]] = []
    last = view.tricks[-1] if view.tricks else None
    if last is not None and last.winner is None:
        for j, c in enumerate(last.cards):
            name = card_name(c)
            trick.append(
                {
                    "player": view.players[(last.leader + j) % 4],
                    "card": name,
                    "suit": name[1],
                    "text": card_text(name),
                    "label_tr": card_label(name, "tr"),
                    "label_en": card_label(name, "en"),
                }
            )
    return {
        "version": state.version,
        "trick": trick,
        "deal": view.deal_no,
        "deals": state.rules.deals,
        "contract_name": contract_name(contract) if contract else None,
        "declarer": view.players[view.declarer] if view.declarer >= 0 else None,
        "declaring": view.phase is Phase.DECLARING,
        "tricks": sum(view.tricks_won),
        "tricks_per_deal": TRICKS_PER_DEAL,
        "to_move": view.players[view.to_move] if view.to_move is not None else None,
        # as on the replay page: the ended deals plus this deal's tricks so far
        "totals": [t + d for t, d in zip(view.totals, view.deal_scores, strict=True)],
    }


def describe(
    repo: GameRepository, game_ids: list[str], budget_s: float
) -> dict[str, GameState | None]:
    """The states of `game_ids`, in order, until `budget_s` seconds have gone (blocking).

    A game missing from the store maps to None; games past the budget are left out (the page
    still shows their status and link). The repository's cache makes a repeat load read only
    the events since the last one."""
    started = time.monotonic()
    out: dict[str, GameState | None] = {}
    for gid in game_ids:
        if time.monotonic() - started >= budget_s:
            break
        try:
            out[gid] = repo.load(gid)
        except (GameNotFound, GameFailed):  # a failed game shows its failure on its own page
            out[gid] = None
    return out
