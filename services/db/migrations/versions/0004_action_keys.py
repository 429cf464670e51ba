"""Actions' Idempotency-Keys: one row per (player, game, key), the first answer kept.

Revision ID: king0004
Revises: king0003
Create Date: 2027-02-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0004"
down_revision = "king0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_action_keys",
        sa.Column("player_id", sa.String(60), primary_key=True),
        sa.Column("game_id", sa.String(200), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("media_type", sa.String(60), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Expired keys are pruned by their age.
    op.create_index("ix_king_action_keys_created_at", "king_action_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_king_action_keys_created_at", "king_action_keys")
    op.drop_table("king_action_keys")
