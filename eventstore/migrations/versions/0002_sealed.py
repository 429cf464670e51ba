"""Sealed values: secrets kept beside the log until a stream reveals them.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sealed",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("sealed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sealed")
