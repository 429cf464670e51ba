"""The games' seats as rows, indexed by player, filled in for the games already there.

Revision ID: king0002
Revises: king0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "king0002"
down_revision = "king0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    seats = op.create_table(
        "king_game_seats",
        sa.Column("game_id", sa.String(64), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("player_id", sa.String(60), nullable=False),
    )
    op.create_index("ix_king_game_seats_player_id", "king_game_seats", ["player_id"])
    games = sa.table("king_games", sa.column("id", sa.String), sa.column("seats", sa.String))
    conn = op.get_bind()
    batch: list[dict[str, object]] = []
    for game_id, text in conn.execute(sa.select(games.c.id, games.c.seats)).all():
        for seat, player in enumerate(json.loads(text)):
            batch.append({"game_id": game_id, "seat": seat, "player_id": player})
        if len(batch) >= 4000:
            op.bulk_insert(seats, batch)
            batch = []
    if batch:
        op.bulk_insert(seats, batch)


def downgrade() -> None:
    op.drop_index("ix_king_game_seats_player_id", "king_game_seats")
    op.drop_table("king_game_seats")
