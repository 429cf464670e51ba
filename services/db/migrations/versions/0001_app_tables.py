"""The service's tables: players, tokens, games index.

Revision ID: king0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_players",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("bot_url", sa.String(2000), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "king_tokens",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("player_id", sa.String(40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_king_tokens_player_id", "king_tokens", ["player_id"])
    op.create_table(
        "king_games",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("seats", sa.String(1000), nullable=False),
        sa.Column("rules", sa.String(2000), nullable=False),
        sa.Column("decision_ms", sa.Integer(), nullable=False),
        sa.Column("client_seed", sa.String(200), nullable=False, server_default=""),
        sa.Column("created_by", sa.String(40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_king_games_status", "king_games", ["status"])


def downgrade() -> None:
    op.drop_table("king_games")
    op.drop_index("ix_king_tokens_player_id", "king_tokens")
    op.drop_table("king_tokens")
    op.drop_table("king_players")
