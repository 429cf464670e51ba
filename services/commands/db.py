"""`king db upgrade`: migrate the event store and the service's tables to the newest schema;
`king db rebuild-projections`: rebuild the read models from the event feed."""

from __future__ import annotations

import argparse
from typing import Any

from services.commands import COMMANDS
from services.settings import load_settings


def register(sub: Any) -> None:
    db = sub.add_parser("db", help=COMMANDS["db"])
    actions = db.add_subparsers(dest="db_command", metavar="ACTION")
    upgrade = actions.add_parser(
        "upgrade",
        help="apply the migrations (event store, then the service's tables)",
        description="Safe to run twice and from several processes at once.",
    )
    upgrade.add_argument(
        "--db", default=None, metavar="URL", help="database URL (KING_DATABASE_URL)"
    )
    upgrade.set_defaults(handler=cmd_upgrade)
    rebuild = actions.add_parser(
        "rebuild-projections",
        help="rebuild the read models (games index, seats, results) from the event feed",
        description="Resets every projection and folds the whole feed again, from position 1. "
        "Servers may run meanwhile: they keep working, but their lists show a "
        "partial index until it has caught up.",
    )
    rebuild.add_argument(
        "--db", default=None, metavar="URL", help="database URL (KING_DATABASE_URL)"
    )
    rebuild.set_defaults(handler=cmd_rebuild_projections)


def cmd_upgrade(args: argparse.Namespace) -> int:
    from services.database import upgrade_all

    settings = load_settings(database_url=args.db)
    upgrade_all(settings)
    print(f"king: database at the newest schema ({_safe(settings.url)})")
    return 0


def cmd_rebuild_projections(args: argparse.Namespace) -> int:
    from services.database import rebuild_projections

    settings = load_settings(database_url=args.db)
    for name, position in rebuild_projections(settings).items():
        print(f"king: projection {name} rebuilt up to feed position {position}")
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
