"""Each game stream's progress and result, for the games projection (services.projections).

The table starts empty: the projection's position starts at 0, so the first process (or
`king db rebuild-projections`) fills it, and the games index, from the feed.

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


def downgrade() -> None:
    op.drop_table("king_game_streams")
