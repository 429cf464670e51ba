"""Versions of the bots accounts own (services.accounts): version 1 for every bot made before.

Revision ID: king0010
Revises: king0009
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0010"
down_revision = "king0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_bot_versions",
        sa.Column("bot_id", sa.String(40), primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("label", sa.String(60), nullable=False),
        sa.Column("bot_url", sa.String(2000), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.execute(
        sa.text(
            "INSERT INTO king_bot_versions (bot_id, number, label, bot_url, created_at) "
            "SELECT id, 1, '1', bot_url, created_at FROM king_players WHERE owner_id IS NOT NULL"
        )
    )


def downgrade() -> None:
    op.drop_table("king_bot_versions")
