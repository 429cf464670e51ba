"""`king record check`: check a king-record/1 file against the rules."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from domain.record import check_record


def register(sub: Any) -> None:
    record = sub.add_parser("record", help="king-record/1 game records")
    actions = record.add_subparsers(dest="record_command", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="check a record against the rules",
        description="Prints one JSON object; exit 0 valid, 1 illegal action, 2 malformed.",
    )
    check.add_argument("file", help="the record file, or - for standard input")
    check.set_defaults(handler=cmd_check)


def read_source(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as fh:
        return fh.read()


def emit(out: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")


def malformed(message: str) -> int:
    emit({"valid": False, "error": {"code": "malformed", "message": message}})
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    try:
        raw = read_source(args.file)
    except OSError as exc:
        return malformed(f"cannot read {args.file}: {exc.strerror or exc}")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return malformed(f"not JSON: {exc}")
    try:
        status, out = check_record(doc)
    except RecursionError:
        return malformed("the document is nested too deeply")
    emit(out)
    return status
