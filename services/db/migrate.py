"""Alembic migrations of the service's tables, run programmatically (`king db upgrade`).

The version table is `king_alembic_version`, beside the event store's own
`eventstore_alembic_version`, so both packages' migrations share one database; the machinery is
the store's `MigrationSet`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from eventstore.backends import Engines
from eventstore.migrate import MigrationSet

APP_MIGRATIONS: Final = MigrationSet(
    Path(__file__).with_name("migrations"),
    "king_alembic_version",
    0x4B494E47,  # "KING"
)


def upgrade_engines(engines: Engines, revision: str = "head") -> None:
    """Upgrade the service's tables in the database behind `engines`."""
    APP_MIGRATIONS.upgrade_engines(engines, revision)


def is_compatible(engines: Engines) -> bool:
    """At this code's head or ahead of it (a newer, additive schema)."""
    return APP_MIGRATIONS.is_compatible(engines.write)
