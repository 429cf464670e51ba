"""`king bot serve`: a built-in strategy as a push bot; `king bot pull`: ... as a pull bot
(`--socket`: on the seats' WebSockets)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from services.commands import COMMANDS
from services.errors import UserError


def register(sub: Any) -> None:
    bot = sub.add_parser("bot", help=COMMANDS["bot"])
    actions = bot.add_subparsers(dest="bot_command", metavar="ACTION")
    serve = actions.add_parser(
        "serve",
        help="serve a strategy as a push bot (the service POSTs decisions to it)",
        description="Register the printed URL with PUT /api/v1/me/bot (docs/BOTS.md).",
    )
    serve.add_argument("--strategy", default="heuristic", help="strategy name (default heuristic)")
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    serve.add_argument("--seed", type=int, default=0, help="strategy seed")
    serve.set_defaults(handler=cmd_serve)
    pull = actions.add_parser(
        "pull",
        help="play a strategy as a pull bot (holds the event streams, POSTs actions)",
    )
    pull.add_argument("--strategy", default="heuristic", help="strategy name (default heuristic)")
    pull.add_argument("--url", required=True, help="the service's base URL")
    pull.add_argument("--token", required=True, help="the bot player's API token")
    pull.add_argument("--seed", type=int, default=0, help="strategy seed")
    pull.add_argument(
        "--socket",
        action="store_true",
        help="play each seat over its WebSocket (turns and actions as frames) instead of a "
        "stream and a POST per action",
    )
    pull.set_defaults(handler=cmd_pull)


def _decider(name: str, seed: int) -> Any:
    from services.botkit import strategy_decider
    from tournament.strategies import UnknownStrategy

    try:
        return strategy_decider(name, seed)
    except UnknownStrategy as exc:
        raise UserError(str(exc)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    from services.botkit import PushBotServer

    decide = _decider(args.strategy, args.seed)
    try:
        server = PushBotServer(decide, args.host, args.port)
    except OSError as exc:
        raise UserError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    print(f"king: {args.strategy} push bot at {server.url}", file=sys.stderr, flush=True)
    server.serve()
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    from services.botkit import PullBot, SocketBot

    decide = _decider(args.strategy, args.seed)
    how = "socket" if args.socket else "pull"
    print(f"king: {args.strategy} {how} bot on {args.url}", file=sys.stderr, flush=True)
    bot = SocketBot if args.socket else PullBot
    bot(args.url, args.token, decide).run()
    return 0
