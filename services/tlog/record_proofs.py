"""The optional `transparency` extension of a king-record/1 document (docs/RECORD.md): the
game's stored events with their RFC 9162 inclusion proofs against a signed checkpoint, so that
`king record check --key` shows offline that the record is the game the log holds.

    "transparency": {
      "format": "king-tlog-inclusion/1",
      "checkpoint": <the signed note>,
      "events": [{"position", "stream_id", "version", "event_id", "type", "schema_version",
                  "payload", "meta", "recorded_at" (µs since 1970 UTC), "proof": [base64]}]
    }

Only for a game whose seed is revealed: its leaves are keyed with that seed, and its events
(`deal_started` holds every hand) are public only once it is over.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import orjson

from eventstore import EventStore
from eventstore.leaves import event_leaf, micros
from eventstore.merkle import verify_inclusion
from services.tlog.notes import NoteError, Verifier, open_checkpoint
from services.tlog.service import TransparencyLog, b64
from tournament.log_keys import leaf_key

FORMAT: Final = "king-tlog-inclusion/1"
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class ProofRefused(ValueError):
    """No proofs for this game (yet): it is not over, its seed is not revealed."""


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def transparency_extension(store: EventStore, log: TransparencyLog, game_id: str) -> dict[str, Any]:
    """The extension for a finished game, against a checkpoint signed now."""
    sid = f"game-{game_id}"
    events = store.read_stream(sid, upcast=False)
    if not events or events[-1].type != "seed_revealed":
        raise ProofRefused(f"game {game_id!r} has not revealed its seed: no proofs until then")
    log.integrate()  # the whole log: the export waits for the tree to cover the game
    note, checkpoint = log.signed()
    size = checkpoint.size
    out = []
    for e in events:
        _, path = log.tree.inclusion(e.position - 1, size)
        out.append(
            {
                "position": e.position,
                "stream_id": e.stream_id,
                "version": e.version,
                "event_id": e.event_id,
                "type": e.type,
                "schema_version": e.schema_version,
                "payload": e.payload,
                "meta": e.meta,
                "recorded_at": micros(e.recorded_at),
                "proof": [b64(p) for p in path],
            }
        )
    return {"format": FORMAT, "checkpoint": note, "events": out}


def _fail(message: str) -> dict[str, Any]:
    return {"checked": False, "error": {"code": "proof_failed", "message": message}}


def check_extension(doc: Any, verifiers: Sequence[Verifier]) -> dict[str, Any]:
    """{"checked": True, ...} when every event verifies against the signed checkpoint and
    matches the record (players, plays in order, the revealed seed); else the first failure."""
    ext = doc.get("transparency") if isinstance(doc, dict) else None
    if not isinstance(ext, dict) or ext.get("format") != FORMAT:
        return _fail(f"the record carries no {FORMAT} extension")
    try:
        checkpoint = open_checkpoint(str(ext.get("checkpoint")), verifiers)
    except NoteError as exc:
        return _fail(f"the checkpoint: {exc}")
    seed = (doc.get("shuffle") or {}).get("server_seed")
    events = ext.get("events")
    if not isinstance(seed, str) or not isinstance(events, list) or not events:
        return _fail("a record with proofs names its shuffle's server_seed and its events")
    try:
        return _check_events(doc, events, seed, checkpoint)
    except (KeyError, TypeError, ValueError, binascii.Error, orjson.JSONEncodeError) as exc:
        return _fail(f"a malformed event in the extension: {type(exc).__name__}: {exc}")


def _check_events(
    doc: dict[str, Any], events: list[Any], seed: str, checkpoint: Any
) -> dict[str, Any]:
    sid = events[0]["stream_id"]
    key = leaf_key(sid, seed)
    plays: list[str] = []
    for i, e in enumerate(events, 1):
        if e["stream_id"] != sid or e["version"] != i:
            return _fail(f"event {i} is not version {i} of {sid}")
        leaf = event_leaf(
            position=int(e["position"]),
            stream_id=sid,
            version=i,
            event_id=e["event_id"],
            type=e["type"],
            schema_version=int(e["schema_version"]),
            payload=_canonical(e["payload"]),
            meta=_canonical(e["meta"]),
            recorded_at=_EPOCH + timedelta(microseconds=int(e["recorded_at"])),
            key=key,
        )
        proof = [base64.b64decode(p, validate=True) for p in e["proof"]]
        index = int(e["position"]) - 1
        if not verify_inclusion(index, checkpoint.size, leaf, proof, checkpoint.root):
            return _fail(f"event {i} (position {index + 1}) is not in the signed log")
        if e["type"] == "card_played":
            plays.append(e["payload"]["card"])
    first, last = events[0], events[-1]
    if first["type"] != "game_created" or first["payload"].get("players") != doc.get("players"):
        return _fail("the logged game's players are not the record's")
    if last["type"] != "seed_revealed" or last["payload"].get("server_seed") != seed:
        return _fail("the logged game's revealed seed is not the record's")
    recorded_plays = [c for d in doc.get("deals", []) for c in d.get("plays", [])]
    if plays != recorded_plays:
        return _fail("the logged game's cards played are not the record's")
    return {
        "checked": True,
        "events": len(events),
        "checkpoint_size": checkpoint.size,
        "origin": checkpoint.origin,
    }
