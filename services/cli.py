"""The `king` command line.

Sub-commands live in `services/commands/`, one module each with `register(subparsers)`,
listed with their help in `services.commands.COMMANDS`. Only the command being run has its
module imported (`king --help` imports none), so the command line starts at once.
A handler returns the exit status; errors become a clear message, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

from services.commands import COMMANDS
from services.errors import UserError

Handler = Callable[[argparse.Namespace], int]


class _Version(argparse.Action):
    """--version, with the installed release looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"king {package_version()}")  # on standard output, as argparse's own does
        parser.exit()


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The `king` parser, with the full parsers of the commands in `load` (default: every
    command); the others are listed with their help only."""
    parser = argparse.ArgumentParser(
        prog="king",
        description="Turkish King (Rıfkı): tournaments, bots over HTTP and auditable replays.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if load is None or name in load:
            importlib.import_module(f"services.commands.{name}").register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def package_version() -> str:
    """The installed release (the source tree's own when run without installing)."""
    from importlib import metadata

    try:
        return metadata.version("king-platform")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # The command is the first word (the top level has no option that takes a value).
    parser = build_parser(load=words[:1])
    args = parser.parse_args(words)
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
    except BrokenPipeError:
        # The reader of standard output went away (`king db history | head`): stop quietly;
        # the interpreter's flush at exit would complain again, so stdout goes nowhere now.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
