"""Sub-commands of `king`: each module here has `register(subparsers)`, building its parser
with `command_parser` and the shared options below.

`COMMANDS` names them with their one-line help, so that `king --help` can list them, and
`king NAME ...` build only its own parser, without importing the others (some import the
whole service).
"""

import argparse
from typing import Any

COMMANDS: dict[str, str] = {
    "analyse": "analyse ended deals: each card's cost against an open-hand solver",
    "audit": "audit games: hash chain, seed, hands and a replay of every action",
    "bot": "run a built-in strategy as an HTTP bot",
    "db": "database schema",
    "log": "the transparency log: checkpoints, offline verification, a witness",
    "match": "play strategies head to head (duplicate deals, seats rotated)",
    "record": "king-record/1 game records",
    "serve": "run the game service over HTTP",
    "tournament": "Swiss and round-robin tournaments",
}


DB_HELP = "database URL (KING_DATABASE_URL)"


def command_parser(sub: Any, name: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of `king NAME`: its one-line help from `COMMANDS`, its module's docstring as
    the description, kept as written."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=COMMANDS[name],
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """`--db URL`: the database (else KING_DATABASE_URL, else the embedded default)."""
    parser.add_argument("--db", default=None, metavar="URL", help=DB_HELP)
