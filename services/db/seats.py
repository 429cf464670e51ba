"""Repair of the seats index: games whose row has no seat rows get them.

No longer run by the service: the seats index is now a projection of the feed
(services.projections), and rows of older releases become `table_opened` events before the
projection's first fold. Kept for tools and tests that check an index by hand.
"""

from __future__ import annotations

import orjson
from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from services.db.models import GameRow, GameSeatRow


def fill_missing_seats(engine: Engine) -> int:
    """Add the seat rows of games that have none; the number of games filled in."""
    indexed = select(col(GameSeatRow.game_id))
    query = select(col(GameRow.id), col(GameRow.seats)).where(col(GameRow.id).not_in(indexed))
    try:
        with engine.begin() as conn:
            missing = conn.execute(query).all()
            rows = [
                {"game_id": game_id, "seat": seat, "player_id": owner}
                for game_id, seats in missing
                for seat, owner in enumerate(orjson.loads(seats))
            ]
            if rows:
                conn.execute(insert(GameSeatRow), rows)
    except IntegrityError:  # another process filled them in at the same moment
        return 0
    return len(missing)
