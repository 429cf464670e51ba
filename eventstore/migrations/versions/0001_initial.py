"""Initial schema: streams, events, projections, claims.

Revision ID: 0001
Revises:
Create Date: 2026-05-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "streams",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("position", _BIG_ID, primary_key=True, autoincrement=False),
        sa.Column("stream_id", sa.String(200), nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("event_id", sa.String(100), nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("meta", sa.Text, nullable=False),
        sa.Column("recorded_at", _TS, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("stream_id", "version", name="uq_events_stream_version"),
        sa.UniqueConstraint("event_id", name="uq_events_event_id"),
    )
    op.create_table(
        "projections",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("position", sa.BigInteger, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )
    op.create_table(
        "claims",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("claimed_at", _TS, nullable=False),
    )


def downgrade() -> None:
    for name in ("claims", "projections", "events", "streams"):
        op.drop_table(name)
