"""The lobby's open tables, a projection of the `lobby-<id>` streams (services.lobby).

Revision ID: king0007
Revises: king0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0007"
down_revision = "king0006"
branch_labels = None
depends_on = None

INDEXED = ("creator", "status", "position")


def upgrade() -> None:
    op.create_table(
        "king_lobby_tables",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("creator", sa.String(40), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("seats", sa.String(1000), nullable=False),
        sa.Column("rules", sa.String(2000), nullable=False),
        sa.Column("decision_ms", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("last_event", sa.String(40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    for column in INDEXED:
        op.create_index(f"ix_king_lobby_tables_{column}", "king_lobby_tables", [column])


def downgrade() -> None:
    for column in INDEXED:
        op.drop_index(f"ix_king_lobby_tables_{column}", "king_lobby_tables")
    op.drop_table("king_lobby_tables")
