"""What `king db current | history | check` report: each migration set's revision in a
database, its history, and whether the database's tables are the models' (no drift).

Two sets share one database (eventstore.migrate.MigrationSet): the event store's tables and
the service's. Each is reported on its own line.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, Table
from sqlmodel import SQLModel

from eventstore.migrate import STORE_MIGRATIONS, MigrationSet
from eventstore.tables import STORE_TABLES
from services.db.migrate import APP_MIGRATIONS
from services.db.models import APP_TABLES


@dataclass(frozen=True, slots=True)
class Part:
    """One migration set: its name in messages, its migrations, its tables."""

    name: str
    migrations: MigrationSet
    tables: tuple[Table, ...]


PARTS = (
    Part("event store", STORE_MIGRATIONS, STORE_TABLES),
    Part("service tables", APP_MIGRATIONS, APP_TABLES),
)


@dataclass(frozen=True, slots=True)
class Revision:
    revision: str
    down: str | None
    doc: str


@dataclass(frozen=True, slots=True)
class Status:
    """A set's revision in one database, against the head this code ships."""

    part: str
    current: str | None
    head: str
    known: bool  # the current revision is one this code ships (else: newer, or none)

    @property
    def at_head(self) -> bool:
        return self.current == self.head

    @property
    def ahead(self) -> bool:
        """At a revision this code does not ship: a newer release has upgraded it."""
        return self.current is not None and not self.known

    def describe(self) -> str:
        if self.current is None:
            return f"{self.part}: no revision (never upgraded); head {self.head}"
        if self.at_head:
            return f"{self.part}: {self.current} (head)"
        if self.ahead:
            return f"{self.part}: {self.current} (newer than this release's head {self.head})"
        return f"{self.part}: {self.current} (behind: head is {self.head})"


def history(part: Part) -> list[Revision]:
    """The set's revisions, newest first."""
    scripts = ScriptDirectory.from_config(part.migrations.config())
    out = []
    for script in scripts.walk_revisions():
        down = script.down_revision
        doc = (script.doc or "").strip().splitlines()
        out.append(
            Revision(
                script.revision,
                down if isinstance(down, str) else None,
                doc[0] if doc else "",
            )
        )
    return out


def status(part: Part, engine: Engine) -> Status:
    current = part.migrations.current_revision(engine)
    known = {r.revision for r in history(part)}
    return Status(part.name, current, part.migrations.head_revision(), current in known)


def drift(part: Part, engine: Engine) -> list[str]:
    """The differences between the set's tables in the database and its models, as
    Alembic's autogenerate sees them (an empty list: none)."""
    own = {table.name for table in part.tables}
    return [_describe(diff) for diff in _compare(engine, SQLModel.metadata, own)]


def _compare(engine: Engine, metadata: MetaData, own: Collection[str]) -> list[Any]:
    def include_object(obj: Any, name: str | None, type_: str, *_: Any) -> bool:
        # Other sets share the metadata and the database: compare this set's tables only
        # (and their columns, indexes and constraints), from both sides.
        if type_ == "table":
            return name in own
        table = getattr(obj, "table", None)
        return table is None or getattr(table, "name", None) in own

    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "include_object": include_object,
                "target_metadata": metadata,
                "compare_type": True,  # Alembic's default since 1.12; columns' types are compared
            },
        )
        diffs: list[Any] = compare_metadata(context, metadata)
    return diffs


def _describe(diff: Any) -> str:
    """One line for one of compare_metadata's differences (a tuple, or a list of tuples for
    the changes of one column)."""
    if isinstance(diff, list):
        return "; ".join(_describe(d) for d in diff)
    kind = str(diff[0])
    names = []
    for item in diff[1:]:
        name = getattr(item, "name", None)
        if isinstance(name, str):
            names.append(name)
        elif isinstance(item, str):
            names.append(item)
    return f"{kind} {' '.join(names)}".strip()
