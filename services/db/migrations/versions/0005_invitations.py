"""Invitations to the seats of a table a player set for others (services.play.invitations).

Revision ID: king0005
Revises: king0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0005"
down_revision = "king0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_invitations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("inviter", sa.String(40), nullable=False),
        sa.Column("invitee", sa.String(40), nullable=False),
        sa.Column("seats", sa.String(100), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("start", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.String(200), nullable=True),
    )
    for column in ("game_id", "inviter", "invitee", "status", "expires_at"):
        op.create_index(f"ix_king_invitations_{column}", "king_invitations", [column])


def downgrade() -> None:
    for column in ("game_id", "inviter", "invitee", "status", "expires_at"):
        op.drop_index(f"ix_king_invitations_{column}", "king_invitations")
    op.drop_table("king_invitations")
