"""The lists' read models: when each game stream started, and every tournament's summary and
games (services.projections), so the home page reads rows instead of folding streams.

The games projection's position (`king-games` in the `projections` table) is forgotten, so the
first process to start folds the feed into the new columns from position 0; nothing is copied
here.

Revision ID: king0008
Revises: king0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0008"
down_revision = "king0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("king_game_streams") as batch:
        batch.add_column(sa.Column("started_position", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_king_game_streams_started_position", "king_game_streams", ["started_position"]
    )
    op.create_table(
        "king_tournaments",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("open_tables", sa.Integer(), nullable=False),
        sa.Column("opened_position", sa.Integer(), nullable=False),
    )
    op.create_index("ix_king_tournaments_opened_position", "king_tournaments", ["opened_position"])
    op.create_table(
        "king_tournament_games",
        sa.Column("game_id", sa.String(200), primary_key=True),
        sa.Column("tournament_id", sa.String(200), nullable=False),
    )
    op.create_index(
        "ix_king_tournament_games_tournament_id", "king_tournament_games", ["tournament_id"]
    )
    # The event store's `projections` table (its migrations run before these).
    op.execute(sa.text("DELETE FROM projections WHERE name = 'king-games'"))


def downgrade() -> None:
    op.drop_index("ix_king_tournament_games_tournament_id", "king_tournament_games")
    op.drop_table("king_tournament_games")
    op.drop_index("ix_king_tournaments_opened_position", "king_tournaments")
    op.drop_table("king_tournaments")
    op.drop_index("ix_king_game_streams_started_position", "king_game_streams")
    with op.batch_alter_table("king_game_streams") as batch:
        batch.drop_column("started_at")
        batch.drop_column("started_position")
