"""`king db upgrade`: migrate the event store and the service's tables to the newest schema;
`king db current`, `king db history`, `king db check`: where the schema is, what migrations
there are, and whether the database is at this release's head with no drift from the models;
`king db rebuild-projections`: rebuild the read models from the event feed.

The database holds two migration sets (the event store's and the service's tables'); each is
reported on its own line.
"""

from __future__ import annotations

import argparse
from typing import Any

from services.commands import COMMANDS, add_db_option
from services.settings import load_settings


def register(sub: Any) -> None:
    db = sub.add_parser("db", help=COMMANDS["db"])
    actions = db.add_subparsers(dest="db_command", metavar="ACTION")
    upgrade = actions.add_parser(
        "upgrade",
        help="apply the migrations (event store, then the service's tables)",
        description="Safe to run twice and from several processes at once.",
    )
    add_db_option(upgrade)
    upgrade.set_defaults(handler=cmd_upgrade)
    current = actions.add_parser(
        "current",
        help="show the database's revision of each migration set, against this release's head",
    )
    add_db_option(current)
    current.set_defaults(handler=cmd_current)
    history = actions.add_parser(
        "history",
        help="list the migrations this release ships, newest first (reads no database)",
    )
    history.set_defaults(handler=cmd_history)
    check = actions.add_parser(
        "check",
        help="exit 1 unless the database is at this release's head and its tables match the models",
        description="Exit status 0: every migration set at this release's head and no "
        "difference between the tables and the models (Alembic's autogenerate comparison). "
        "1: a set behind, ahead, never upgraded, or a difference (each listed).",
    )
    add_db_option(check)
    check.set_defaults(handler=cmd_check)
    rebuild = actions.add_parser(
        "rebuild-projections",
        help="rebuild the read models (games index, seats, results) from the event feed",
        description="Resets every projection and folds the whole feed again, from position 1. "
        "Servers may run meanwhile: they keep working, but their lists show a "
        "partial index until it has caught up.",
    )
    add_db_option(rebuild)
    rebuild.set_defaults(handler=cmd_rebuild_projections)


def cmd_upgrade(args: argparse.Namespace) -> int:
    from services.database import upgrade_all

    settings = load_settings(database_url=args.db)
    print(f"king: database {_safe(settings.url)}{_schema(settings.pg_schema)}")
    for before, after in upgrade_all(settings):
        if before.current == after.current:
            print(f"king: {after.part}: already at head {after.current}")
        else:
            was = before.current or "an empty database"
            print(f"king: {after.part}: upgraded from {was} to {after.current}")
    return 0


def cmd_current(args: argparse.Namespace) -> int:
    from services.database import schema_report

    settings = load_settings(database_url=args.db)
    print(f"king: database {_safe(settings.url)}{_schema(settings.pg_schema)}")
    for found, _drift in schema_report(settings):
        print(f"king: {found.describe()}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from services.db.status import PARTS, history

    for part in PARTS:
        print(f"{part.name}:")
        for i, rev in enumerate(history(part)):
            mark = " (head)" if i == 0 else ""
            print(f"  {rev.down or '<base>'} -> {rev.revision}{mark}, {rev.doc}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from services.database import schema_report

    settings = load_settings(database_url=args.db)
    behind = drifted = False
    print(f"king: database {_safe(settings.url)}{_schema(settings.pg_schema)}")
    for found, drift in schema_report(settings, with_drift=True):
        print(f"king: {found.describe()}")
        if not found.at_head:
            behind = True
            continue  # a schema not at this head differs from these models: nothing to add
        for line in drift:
            drifted = True
            print(f"king: {found.part}: differs from the models: {line}")
    if not (behind or drifted):
        print("king: ok: at head, no drift")
        return 0
    if behind:
        print("king: check failed: not at this release's head (`king db upgrade` brings it there)")
    if drifted:
        print("king: check failed: the tables differ from the models (a change made by hand?)")
    return 1


def cmd_rebuild_projections(args: argparse.Namespace) -> int:
    from services.database import rebuild_projections

    settings = load_settings(database_url=args.db)
    for name, position in rebuild_projections(settings).items():
        print(f"king: projection {name} rebuilt up to feed position {position}")
    return 0


def _schema(schema: str | None) -> str:
    return f" (schema {schema})" if schema else ""


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
