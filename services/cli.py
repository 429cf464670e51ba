"""The `king` command line.

Each sub-command is a small function; errors become a clear message and an exit status,
never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import orjson

from domain.record import check_record

Handler = Callable[[argparse.Namespace], int]


def _read_source(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as fh:
        return fh.read()


def cmd_record_check(args: argparse.Namespace) -> int:
    """Check a king-record/1 file: JSON on stdout, exit 0 valid, 1 illegal, 2 malformed."""
    try:
        raw = _read_source(args.file)
    except OSError as exc:
        return _emit_malformed(f"cannot read {args.file}: {exc.strerror or exc}")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _emit_malformed(f"not JSON: {exc}")
    try:
        status, out = check_record(doc)
    except RecursionError:
        return _emit_malformed("the document is nested too deeply")
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    return status


def _emit_malformed(message: str) -> int:
    out = {"valid": False, "error": {"code": "malformed", "message": message}}
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="king", description="Turkish King tournaments, bots and auditable replays."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    record = sub.add_parser("record", help="king-record/1 game records")
    record_sub = record.add_subparsers(dest="record_command", metavar="ACTION")
    check = record_sub.add_parser("check", help="check a record against the rules")
    check.add_argument("file", help="the record file, or - for standard input")
    check.set_defaults(handler=cmd_record_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
