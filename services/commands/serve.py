"""`king serve`: run the game service (HTTP API, driver, streams) under uvicorn."""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from typing import Any

from services.commands import COMMANDS, add_db_option
from services.settings import Settings, load_settings


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
    add_db_option(serve)
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


# `king serve`'s exit status when it cannot listen on its address (the port taken, an address
# the host does not have) or its start-up fails: a fault of the deployment, told apart from a
# bad setting (2); uvicorn's own start-up failure status.
EXIT_CANNOT_LISTEN = 3


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
    # The address first, before the database is opened and the driver and the scheduler
    # start: a port already in use is one line and exit 3, not a failure half-way through
    # the start (uvicorn would bind only after the app's start-up had run).
    try:
        sock = listen_socket(settings.host, settings.port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        print(f"king: cannot listen on {settings.host}:{settings.port}: {reason}", file=sys.stderr)
        return EXIT_CANNOT_LISTEN
    with sock:
        configure_logging(settings.log_level, settings.log_json)
        app = create_app(settings)
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level.lower(),
            access_log=False,
            log_config=None,
            # Open event streams never end by themselves: without a limit a stop would wait
            # for them, and only then release this process's games to the others.
            timeout_graceful_shutdown=5,
            **socket_options(settings),
        )
        server = uvicorn.Server(config)
        # uvicorn raises the stopping signal again once it has shut down.
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    # As uvicorn.run: a server that never started (its start-up failed and was logged) is 3.
    return 0 if server.started else EXIT_CANNOT_LISTEN


def socket_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's WebSocket settings for the seat sockets: no per-message compression (it cost
    a third more server CPU per action, for messages of a few KB on a bot's connection), and
    frames no larger than a request body may be."""
    return {"ws_per_message_deflate": False, "ws_max_size": settings.max_body_bytes}


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port), as uvicorn would bind it (SO_REUSEADDR)."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock
