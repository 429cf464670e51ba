"""Sub-commands of `king`: each module here has `register(subparsers)`.

`COMMANDS` names them with their one-line help, so that `king --help` can list them, and
`king NAME ...` build only its own parser, without importing the others (some import the
whole service).
"""

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
