"""Accounts (a password for a player), bots owned by accounts, scoped and named tokens, web
sessions (services.accounts).

Revision ID: king0006
Revises: king0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "king0006"
down_revision = "king0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "king_accounts",
        sa.Column("player_id", sa.String(40), primary_key=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("king_players") as batch:
        batch.add_column(sa.Column("owner_id", sa.String(40), nullable=True))
        batch.create_index("ix_king_players_owner_id", ["owner_id"])
    # Rows made before: no id, name or scopes (NULL scopes: every scope, as before).
    with op.batch_alter_table("king_tokens") as batch:
        batch.add_column(sa.Column("token_id", sa.String(24), nullable=True))
        batch.add_column(sa.Column("name", sa.String(60), nullable=True))
        batch.add_column(sa.Column("scopes", sa.String(60), nullable=True))
        batch.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_index("ix_king_tokens_token_id", ["token_id"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("king_tokens") as batch:
        batch.drop_index("ix_king_tokens_token_id")
        for column in ("expires_at", "last_used_at", "scopes", "name", "token_id"):
            batch.drop_column(column)
    with op.batch_alter_table("king_players") as batch:
        batch.drop_index("ix_king_players_owner_id")
        batch.drop_column("owner_id")
    op.drop_table("king_accounts")
