"""The `king` command line.

Sub-commands live in `services/commands/`, one module each with `register(subparsers)`.
A handler returns the exit status; errors become a clear message, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

from services import commands
from services.errors import UserError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="king",
        description="Turkish King (Rıfkı): tournaments, bots over HTTP and auditable replays.",
    )
    parser.add_argument("--version", action="version", version=f"king {package_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"services.commands.{info.name}")
        module.register(sub)
    return parser


def package_version() -> str:
    """The installed release (the source tree's own when run without installing)."""
    try:
        return metadata.version("king-platform")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return handler(args)
    except UserError as exc:
        print(f"king: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("king: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
