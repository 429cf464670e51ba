"""`king log`: the transparency log from the command line (docs/TRANSPARENCY.md).

  king log checkpoint                     extend the tree, print the signed checkpoint
  king log key                            print the verifier key
  king log new-key --out FILE             a signer key for KING_LOG_KEY_FILE (one per database)
  king log verify --checkpoint F --key K  does the stored log extend a saved checkpoint?
  king log watch URL --key K              a witness: poll a service's checkpoints, refuse a fork

verify and watch exit 1 on a failed check (verify names the first position that differs,
watch says FORK), 2 for a usage problem.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from services.commands import add_db_option, command_parser
from services.errors import UserError

KEY_HELP = "the log's verifier key; again for a key it replaced (rotation)"


def register(sub: Any) -> None:
    log = command_parser(sub, "log", __doc__)
    cmds = log.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    checkpoint = cmds.add_parser("checkpoint", help="print the current signed checkpoint")
    add_db_option(checkpoint)
    checkpoint.set_defaults(handler=cmd_checkpoint)
    key = cmds.add_parser("key", help="print the log's verifier key")
    key.set_defaults(handler=cmd_key)
    new_key = cmds.add_parser(
        "new-key",
        help="make a signer key for KING_LOG_KEY_FILE (every process of a database shares one)",
    )
    new_key.add_argument(
        "--out", required=True, metavar="FILE", help="where to write it (mode 600; never replaced)"
    )
    new_key.add_argument(
        "--origin", default=None, help="the log's origin and key name (default: KING_LOG_ORIGIN)"
    )
    new_key.add_argument(
        "--keep-existing",
        action="store_true",
        help="if FILE holds a key already, keep it and print its verifier key (a one-shot "
        "set-up step that may run again)",
    )
    new_key.set_defaults(handler=cmd_new_key)
    verify = cmds.add_parser("verify", help="prove the stored log extends a saved checkpoint")
    verify.add_argument("--checkpoint", required=True, metavar="FILE", help="a signed checkpoint")
    verify.add_argument("--key", required=True, action="append", metavar="FILE", help=KEY_HELP)
    add_db_option(verify)
    verify.set_defaults(handler=cmd_verify)
    watch = cmds.add_parser("watch", help="a witness: poll checkpoints, refuse a fork")
    watch.add_argument("url", help="the service's base URL (http://host:port)")
    watch.add_argument("--key", required=True, action="append", metavar="FILE", help=KEY_HELP)
    watch.add_argument("--state", metavar="FILE", help="keep the last checkpoint seen here")
    watch.add_argument("--interval", type=float, default=10.0, help="seconds between polls")
    watch.add_argument("--count", type=int, default=0, help="stop after N polls (0: never)")
    watch.set_defaults(handler=cmd_watch)


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the {what} {path}: {exc}") from None


def read_verifiers(paths: list[str]) -> Any:
    from services.tlog.notes import NoteError, Verifier

    keys = []
    for path in paths:
        try:
            keys.append(Verifier.parse(_read(path, "key")))
        except NoteError as exc:
            raise UserError(f"{path}: {exc}") from None
    return keys


def _settings(db: str | None) -> Any:
    from services.settings import load_settings

    return load_settings(database_url=db) if db else load_settings()


def _store(db: str | None) -> Any:
    from services.commands.audit import open_repository

    return open_repository(db).store


def cmd_checkpoint(args: argparse.Namespace) -> int:
    from eventstore.logtree import TreeError
    from services.tlog.keys import load_signer
    from services.tlog.service import TransparencyLog

    signer = load_signer(_settings(args.db))
    store = _store(args.db)
    try:
        log = TransparencyLog(store, signer)
        log.integrate()  # the whole log, however far behind the tree is
        sys.stdout.write(log.checkpoint())
    except TreeError as exc:
        raise UserError(f"the tree cannot be extended: {exc}") from None
    finally:
        store.close()
    return 0


def cmd_key(args: argparse.Namespace) -> int:
    from services.tlog.keys import load_signer

    print(load_signer(_settings(None)).verifier)
    return 0


def cmd_new_key(args: argparse.Namespace) -> int:
    """Write a new signer key to a file of its own, and print its verifier key: the file is
    the secret every process is given (KING_LOG_KEY_FILE), the verifier key is for the world."""
    from services.tlog.notes import NoteError, Signer, check_name

    origin = args.origin or _settings(None).log_origin
    if args.keep_existing and os.path.exists(args.out):
        try:
            kept = Signer.parse(_read(args.out, "key"))
        except NoteError as exc:
            raise UserError(f"{args.out} is not a signer key: {exc}") from None
        if kept.name != origin:
            raise UserError(f"{args.out} is the key of {kept.name!r}, not of {origin!r}")
        print(kept.verifier)
        return 0
    try:
        signer = Signer.generate(check_name(origin))
    except NoteError as exc:
        raise UserError(f"--origin: {exc}") from None
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UserError(f"{args.out} exists already: a key is never replaced") from None
    except OSError as exc:
        raise UserError(f"cannot write {args.out}: {exc}") from None
    with os.fdopen(fd, "w") as out:
        out.write(signer.encode() + "\n")
    print(signer.verifier)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from eventstore.logtree import LogTree
    from services.tlog.notes import NoteError, open_checkpoint
    from services.tlog.verify import verify_log
    from tournament.log_keys import game_leaf_keys

    verifier = read_verifiers(args.key)
    try:
        checkpoint = open_checkpoint(_read(args.checkpoint, "checkpoint"), verifier)
    except NoteError as exc:
        raise UserError(f"{args.checkpoint}: {exc}") from None
    store = _store(args.db)
    try:
        verdict = verify_log(LogTree(store, game_leaf_keys(store)), checkpoint)
    finally:
        store.close()
    if verdict.ok:
        print(
            f"ok: the log ({verdict.events} events, tree {verdict.tree_size}) extends the "
            f"checkpoint of size {checkpoint.size}; every leaf re-derived from its event"
        )
        if verdict.note:
            print(f"note: {verdict.note}")
        return 0
    where = f" position {verdict.position}" if verdict.position is not None else ""
    print(f"FAIL{where}: {verdict.reason}")
    return 1


def cmd_watch(args: argparse.Namespace) -> int:
    from services.tlog.witness import Fork, Witness

    if args.interval <= 0 or args.count < 0:
        raise UserError("--interval must be > 0 and --count ≥ 0")
    witness = Witness(args.url, read_verifiers(args.key), Path(args.state) if args.state else None)
    polls = 0
    while True:
        try:
            print(witness.poll(), flush=True)
        except Fork as exc:
            print(f"FORK: {exc}", file=sys.stderr, flush=True)
            print("king: the log forked: refusing its checkpoints", file=sys.stderr)
            return 1
        polls += 1
        if args.count and polls >= args.count:
            return 0
        time.sleep(args.interval)
