"""Ended deals' analyses, kept in the database so every process computes a deal once
(services.analysis).

Revision ID: king0009
Revises: king0008
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0009"
down_revision = "king0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_deal_analyses",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("game_id", sa.String(200), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_king_deal_analyses_game_id", "king_deal_analyses", ["game_id"])


def downgrade() -> None:
    op.drop_index("ix_king_deal_analyses_game_id", "king_deal_analyses")
    op.drop_table("king_deal_analyses")
