"""Each game stream's progress and result, and the ratings, as projections (services.projections).

The tables start empty: the projections' positions start at 0, so the first process (or
`king db rebuild-projections`) fills them, and the games index, from the feed.

Revision ID: king0003
Revises: king0002
Create Date: 2027-01-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0003"
down_revision = "king0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_game_streams",
        sa.Column("game_id", sa.String(200), primary_key=True),
        sa.Column("phase", sa.String(10), nullable=False),
        sa.Column("players", sa.String(1000), nullable=False),
        sa.Column("totals", sa.String(200), nullable=True),
        sa.Column("winners", sa.String(100), nullable=True),
        sa.Column("ladder", sa.String(400), nullable=True),
        sa.Column("ended_position", sa.Integer(), nullable=True),
    )

    op.create_table(
        "king_ratings",
        sa.Column("id", sa.String(300), primary_key=True),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("king_ratings")
    op.drop_table("king_game_streams")
