"""`king record check`: check a king-record/1 file against the rules; `king record export`:
write a stored game's record, or every game's (`--all`, `--tournament`) as NDJSON;
`king record import`: store records made elsewhere (services.record_import)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, BinaryIO

import orjson

from domain.record import check_record
from services.commands import COMMANDS, add_db_option
from services.errors import UserError


def register(sub: Any) -> None:
    record = sub.add_parser("record", help=COMMANDS["record"])
    actions = record.add_subparsers(dest="record_command", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="check a record against the rules",
        description=(
            "Prints one JSON object; exit 0 valid, 1 illegal action, 2 malformed. For an "
            "illegal action, error.deal and error.play are 0-based indexes into the document's "
            "deals and that entry's plays (a line on standard error says where, in words)."
        ),
    )
    check.add_argument("file", help="the record file, or - for standard input")
    check.add_argument(
        "--key",
        action="append",
        metavar="FILE",
        help="also verify the record's transparency-log proofs with this verifier key "
        "(docs/TRANSPARENCY.md); exit 1 when they fail",
    )
    check.set_defaults(handler=cmd_check)
    export = actions.add_parser(
        "export",
        help="write stored games' king-record/1 (what is public so far)",
        description=(
            "Writes the record of a game in the database: the deals that have ended with "
            "their hands, and the seed once the game is over (the public record). With --all "
            "or --tournament, every such game's record as NDJSON, one a line, oldest game "
            "first: each line the bytes GET /api/v1/games/{id}/record gives."
        ),
    )
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("game_id", nargs="?", default=None, help="the game")
    which.add_argument("--all", action="store_true", help="every game, as NDJSON")
    which.add_argument("--tournament", metavar="ID", help="a tournament's games, as NDJSON")
    export.add_argument(
        "--since", type=_moment, default=None, help="NDJSON: games created at or after (ISO 8601)"
    )
    export.add_argument(
        "--until", type=_moment, default=None, help="NDJSON: games created before (ISO 8601)"
    )
    add_db_option(export)
    export.add_argument(
        "--proofs",
        action="store_true",
        help="one finished game: add its events' inclusion proofs against a checkpoint "
        "signed now (the transparency extension, docs/RECORD.md)",
    )
    export.add_argument(
        "-o",
        "--out",
        "--output",
        dest="output",
        default="-",
        help="output file (default: standard output)",
    )
    export.set_defaults(handler=cmd_export)
    imports = actions.add_parser(
        "import",
        help="store king-record/1 games made elsewhere",
        description=(
            "Reads one record (a JSON document) or many (NDJSON, one a line), checks each "
            "against the rules and stores the good ones as games marked with their origin. "
            "Prints one JSON line per record: stored, already_stored (the same record is in "
            "the database) or refused (with the checker's reason). Exit 0 when none was "
            "refused, 1 when some were, 2 when the input cannot be read."
        ),
    )
    imports.add_argument("file", help="the records file, or - for standard input")
    imports.add_argument(
        "--origin", default="import", help="where the games come from (default: import)"
    )
    imports.add_argument(
        "--id", dest="game_id", default=None, help="one record only: store it under this id"
    )
    add_db_option(imports)
    imports.set_defaults(handler=cmd_import)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# A record of a whole game is tens of kilobytes; the cap keeps an endless source (/dev/zero, a
# pipe that never ends) from reading until memory runs out.
MAX_RECORD_BYTES = 64 * 1024 * 1024


class _OutputClosed(Exception):
    """Standard output is closed or cannot be written: nothing can be printed there."""


def read_source(path: str) -> bytes:
    """The record's bytes, at most MAX_RECORD_BYTES + 1 of them (one more tells it is too big)."""
    if path == "-":
        if sys.stdin is None:
            raise OSError("standard input is closed")
        return sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
    with open(path, "rb") as fh:
        return fh.read(MAX_RECORD_BYTES + 1)


def emit(out: dict[str, Any]) -> None:
    """Print the one JSON object, flushed now so that a full or closed output is seen here."""
    stream = sys.stdout
    if stream is None:
        raise _OutputClosed("standard output is closed")
    data = orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
    except (OSError, ValueError) as exc:  # ValueError: the stream object was closed
        _discard_output(stream)
        raise _OutputClosed(f"cannot write to standard output: {_reason(exc)}") from None


def _discard_output(stream: Any) -> None:
    # The unwritten bytes stay buffered and Python would fail again flushing them at exit
    # (exit status 120): point the descriptor at /dev/null so that last flush succeeds.
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _tell(message: str) -> None:
    """One line on standard error, if there is one to write to."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(f"king record check: {message}\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def malformed(message: str) -> int:
    emit({"valid": False, "error": {"code": "malformed", "message": message}})
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 valid, 1 illegal action, 2 malformed or when the answer cannot be printed."""
    try:
        if sys.stdout is None:  # checked first: a closed descriptor 1 could be reused by open
            raise _OutputClosed("standard output is closed")
        return _check(args.file, args.key)
    except _OutputClosed as exc:
        _tell(str(exc))
        return 2


def _check(path: str, keys: list[str] | None = None) -> int:
    try:
        raw = read_source(path)
    except OSError as exc:
        where = "standard input" if path == "-" else path
        return malformed(f"cannot read {where}: {_reason(exc)}")
    except MemoryError:
        return malformed("out of memory reading the record")
    if len(raw) > MAX_RECORD_BYTES:
        del raw
        return malformed(f"the record is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return malformed(f"not JSON: {exc}")
    except MemoryError:
        return malformed("out of memory reading the JSON")
    del raw
    try:
        status, out = check_record(doc)
    except RecursionError:
        return malformed("the document is nested too deeply")
    except MemoryError:
        return malformed("out of memory checking the record")
    if keys and status == 0:
        from services.commands.log import read_verifiers
        from services.tlog.record_proofs import check_extension

        proofs = check_extension(doc, read_verifiers(keys))
        out["transparency"] = proofs
        if not proofs["checked"]:
            emit(out)
            _tell(f"transparency log: {proofs['error']['message']}")
            return 1
    emit(out)
    if status == 1:
        _tell(where_illegal(out["error"]))
    return status


def where_illegal(error: dict[str, Any]) -> str:
    """The error object's place said for people: its `deal` and `play` are 0-based indexes
    into the document (the record format's), not the 1-based deal numbers shown elsewhere."""
    deal, play = error["deal"], error["play"]
    place = f"deal entry {deal} (0-based index into deals, redeal entries counted)"
    if play is None:
        place += ", its declaration"
    else:
        place += f", play {play} (0-based index into that entry's plays)"
    return f"illegal action at {place}: {error['code']} ({error['rule']}): {error['message']}"


def cmd_export(args: argparse.Namespace) -> int:
    from services.commands.audit import open_repository

    repo = open_repository(args.db)
    try:
        if args.game_id is not None:
            return _write(args.output, [_one_record(repo, args.game_id, args.proofs, args.db)])
        if args.proofs:
            raise UserError("--proofs is for one game")
        return _write(args.output, _all_records(repo.store, args))
    finally:
        repo.store.close()


def _one_record(repo: Any, game_id: str, proofs: bool = False, db: str | None = None) -> bytes:
    from domain.record import to_record
    from services.errors import UserError
    from tournament.games import GameNotFound

    try:
        state = repo.load(game_id)
    except GameNotFound:
        raise UserError(f"no game {game_id!r} in the database") from None
    doc = to_record(state, public=True)
    if proofs:
        from services.settings import load_settings
        from services.tlog.keys import load_signer
        from services.tlog.record_proofs import ProofRefused, transparency_extension
        from services.tlog.service import TransparencyLog

        settings = load_settings(database_url=db) if db else load_settings()
        log = TransparencyLog(repo.store, load_signer(settings))
        try:
            doc["transparency"] = transparency_extension(repo.store, log, game_id)
        except ProofRefused as exc:
            raise UserError(str(exc)) from None
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _all_records(store: Any, args: argparse.Namespace) -> Iterator[bytes]:
    from services.errors import UserError
    from services.record_export import RecordExport, Selection, UnknownTournament

    export = RecordExport(store)
    selection = Selection(args.tournament, None, args.since, args.until, limit=None)
    if args.tournament is not None:
        try:
            export.tournament_games(args.tournament)  # says so before writing anything
        except UnknownTournament as exc:
            raise UserError(str(exc)) from None
    return export.lines(selection)


def _write(output: str, chunks: Iterable[bytes]) -> int:
    from services.errors import UserError

    if output == "-":
        for chunk in chunks:
            sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        return 0
    try:
        with open(output, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from services.database import open_store
    from services.record_import import BadOrigin, RecordImporter, check_origin
    from services.settings import load_settings
    from tournament.games import GameRepository

    try:
        check_origin(args.origin)
    except BadOrigin as exc:
        raise UserError(f"--origin: {exc}") from None
    try:
        source = _open_source(args.file)
    except OSError as exc:
        where = "standard input" if args.file == "-" else args.file
        raise UserError(f"cannot read {where}: {_reason(exc)}") from None
    store = open_store(load_settings(database_url=args.db))
    importer = RecordImporter(GameRepository(store))
    counts = {"stored": 0, "already_stored": 0, "refused": 0}
    try:
        with source:
            documents = _documents(source)
            for number, raw in documents:
                line = _import_one(importer, raw, args.origin, args.game_id)
                counts[line["status"]] += 1
                sys.stdout.buffer.write(orjson.dumps({"line": number, **line}) + b"\n")
                sys.stdout.flush()
    finally:
        store.close()
    summary = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items())
    print(f"king record import: {summary}", file=sys.stderr)
    return 1 if counts["refused"] else 0


def _open_source(path: str) -> BinaryIO:
    if path == "-":
        if sys.stdin is None:
            raise OSError("standard input is closed")
        return sys.stdin.buffer
    return open(path, "rb")


def _import_one(importer: Any, raw: bytes | None, origin: str, game_id: str | None) -> Any:
    from services.record_import import (
        MAX_RECORD_BYTES,
        RecordImportError,
        RecordRefused,
        RecordTooLarge,
    )

    try:
        if raw is None:
            raise RecordTooLarge(f"a record is at most {MAX_RECORD_BYTES // 1024} KiB")
        result = importer.import_bytes(raw, origin, game_id)
    except RecordImportError as exc:
        error = dict(exc.error) if isinstance(exc, RecordRefused) else {"message": str(exc)}
        error.setdefault("code", exc.code)
        out: dict[str, Any] = {"status": "refused", "error": error}
        taken = getattr(exc, "game_id", None)
        if taken is not None:
            out["game_id"] = taken
        return out
    return {"status": result.status, "game_id": result.game_id, "origin": result.origin}


def _documents(source: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, record bytes) of the input: one JSON document (pretty-printed or not),
    or NDJSON, told apart by whether the first line that is not blank is JSON by itself.
    None for a line beyond MAX_RECORD_BYTES (not held, only skipped)."""
    from services.record_import import MAX_RECORD_BYTES

    number = 0
    for number, line in _lines(source, MAX_RECORD_BYTES):  # noqa: B007 (used after)
        if line is None or line.strip():
            break
    else:
        return
    if line is not None and not _is_json(line):  # a document over several lines
        rest = source.read(MAX_RECORD_BYTES + 1 - len(line))
        yield number, line + rest if len(line) + len(rest) <= MAX_RECORD_BYTES else None
        return
    yield number, line
    for later, text in _lines(source, MAX_RECORD_BYTES, start=number):
        if text is None or text.strip():
            yield later, text


def _is_json(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def _lines(source: BinaryIO, limit: int, start: int = 0) -> Iterator[tuple[int, bytes | None]]:
    """Numbered lines with their newline kept (so a document's lines join back as they were);
    None for one longer than `limit`, whose rest is read and dropped."""
    number = start
    while True:
        line = source.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = source.readline(64 * 1024)
            yield number, None
            continue
        yield number, line
