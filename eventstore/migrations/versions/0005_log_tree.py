"""The transparency log's Merkle tree: its perfect subtrees' hashes and its size.

Existing events are not hashed here: the tree catches up with the log the first time it is
extended (`eventstore.logtree.LogTree.integrate`).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "log_nodes",
        sa.Column("level", sa.SmallInteger, primary_key=True),
        sa.Column("idx", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("hash", sa.LargeBinary(32), nullable=False),
    )
    size = op.create_table(
        "log_size",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("size", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(size, [{"id": 1, "size": 0}])


def downgrade() -> None:
    op.drop_table("log_size")
    op.drop_table("log_nodes")
