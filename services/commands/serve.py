"""`king serve`: run the game service (HTTP API, driver, streams) under uvicorn."""

from __future__ import annotations

import argparse
from typing import Any

from services.commands import COMMANDS
from services.settings import load_settings


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description=(
            "Run the King game service. Settings come from KING_* environment variables "
            "(docs/API.md); these flags override them. SQLite (the default, "
            "<data-dir>/king.db) is migrated at start; PostgreSQL needs `king db upgrade`."
        ),
    )
    serve.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8000)")
    serve.add_argument("--db", default=None, metavar="URL", help="database URL (KING_DATABASE_URL)")
    serve.add_argument("--data-dir", default=None, help="data directory (default ./var)")
    serve.add_argument(
        "--no-driver",
        action="store_true",
        help="serve the API only: drive no games (the other processes share them)",
    )
    serve.add_argument(
        "--no-scheduler",
        action="store_true",
        help="do not run the tournament scheduler here (another process leads it)",
    )
    serve.add_argument("--log-level", default=None, help="debug, info, warning, error")
    serve.set_defaults(handler=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from services.app import create_app
    from services.observability import configure_logging

    settings = load_settings(
        host=args.host,
        port=args.port,
        database_url=args.db,
        data_dir=args.data_dir,
        run_driver=False if args.no_driver else None,
        run_scheduler=False if args.no_scheduler else None,
        log_level=args.log_level,
    )
    configure_logging(settings.log_level, settings.log_json)
    app = create_app(settings)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        access_log=False,
        log_config=None,
        # Open event streams never end by themselves: without a limit a stop would wait for
        # them, and only then release this process's games to the others.
        timeout_graceful_shutdown=5,
    )
    return 0
