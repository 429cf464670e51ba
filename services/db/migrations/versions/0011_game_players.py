"""Everyone who sat in each game stream (`king_game_players`) and each stream's substitutes
(`king_game_streams.substitutes`), so a player's games are found in SQL however old they are
(services.projections).

As king0008 did, the games projection's position is deleted here, so the first process after
the upgrade (or `king db upgrade`'s catch-up) folds the whole feed again, into the new table and
column too; nothing is copied here.

Revision ID: king0011
Revises: king0010
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0011"
down_revision = "king0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("king_game_streams") as batch:
        batch.add_column(sa.Column("substitutes", sa.Text(), nullable=True))
    op.create_table(
        "king_game_players",
        sa.Column("game_id", sa.String(200), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("player", sa.String(200), primary_key=True),
        sa.Column("substitute", sa.Boolean(), nullable=False),
        sa.Column("started_position", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=True),
        sa.Column("won", sa.Boolean(), nullable=True),
    )
    op.create_index(
        "ix_king_game_players_player_started_position",
        "king_game_players",
        ["player", "started_position"],
    )
    # The event store's `projections` table (its migrations run before these).
    op.execute(sa.text("DELETE FROM projections WHERE name = 'king-games'"))


def downgrade() -> None:
    op.drop_index("ix_king_game_players_player_started_position", "king_game_players")
    op.drop_table("king_game_players")
    with op.batch_alter_table("king_game_streams") as batch:
        batch.drop_column("substitutes")
