"""Leases: named, expiring ownership with a fencing epoch (one owner per live game).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(300), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("epoch", sa.BigInteger, nullable=False),
        sa.Column("expires_ms", sa.BigInteger, nullable=False),
        sa.Column("acquired_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_leases_owner", "leases", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_leases_owner", "leases")
    op.drop_table("leases")
