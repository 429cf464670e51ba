"""`king log watch`: a witness. It polls a service's signed checkpoints, checks each one's
signature and that it extends (RFC 9162 consistency proof) the last one it accepted, and
refuses a fork: a checkpoint of the same size with another root, a smaller one, or one the
service cannot prove consistent. The last accepted note can be kept in a file, so a witness
restarted later still holds the log to what it saw; the two notes of a fork are evidence."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from eventstore.merkle import verify_consistency
from services.errors import UserError
from services.tlog.notes import Checkpoint, NoteError, Verifier, open_checkpoint


class Fork(Exception):
    """The service showed a checkpoint that does not extend the last one accepted."""


class Witness:
    def __init__(
        self,
        url: str,
        verifier: Verifier | Sequence[Verifier],
        state: Path | None = None,
        client: Any = None,
    ) -> None:
        self.base = url.rstrip("/")
        self.verifier = verifier
        self.state = state
        self.client = client or httpx.Client(timeout=10.0)
        self.last: Checkpoint | None = None
        self.last_note = ""
        if state is not None and state.exists():
            try:
                self.last_note = state.read_text(encoding="utf-8")
                self.last = open_checkpoint(self.last_note, verifier)
            except (OSError, UnicodeDecodeError, NoteError) as exc:
                raise UserError(f"the witness state {state} is unusable: {exc}") from None

    def _get(self, path: str, **params: int) -> httpx.Response:
        """The answer; a service that cannot answer is a usage problem (UserError), one that
        answers a proof request with a refusal cannot prove its checkpoint (Fork)."""
        try:
            answer = self.client.get(self.base + path, params=params)
        except httpx.HTTPError as exc:
            raise UserError(f"cannot reach {self.base}: {exc}") from None
        if answer.status_code >= 500 or (answer.status_code != 200 and not params):
            raise UserError(f"{self.base}{path} answered {answer.status_code}")
        if answer.status_code != 200:
            raise Fork(f"{path} answered {answer.status_code}: {answer.text[:200]}")
        return answer

    def poll(self) -> str:
        """Check the service's current checkpoint; a line saying what was accepted."""
        note = self._get("/api/v1/log/checkpoint").text
        try:
            new = open_checkpoint(note, self.verifier)
        except NoteError as exc:
            raise Fork(f"a checkpoint without a valid signature by the log's key: {exc}") from None
        last = self.last
        if last is not None:
            self._check(last, new, note)
        self.last, self.last_note = new, note
        if self.state is not None:
            self.state.write_text(note, encoding="utf-8")
        return f"ok size {new.size} root {base64.b64encode(new.root).decode()}"

    def _check(self, last: Checkpoint, new: Checkpoint, note: str) -> None:
        evidence = f"\n--- accepted before:\n{self.last_note}--- now:\n{note}"
        if new.size < last.size:
            raise Fork(f"the log shrank from {last.size} to {new.size} events{evidence}")
        if new.size == last.size:
            if new.root != last.root:
                raise Fork(f"two roots for the same size {new.size}{evidence}")
            return
        body = self._get("/api/v1/log/proof/consistency", first=last.size, second=new.size)
        try:
            proof = [base64.b64decode(p, validate=True) for p in body.json()["proof"]]
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise Fork(f"a malformed consistency proof {last.size} → {new.size}") from None
        if not verify_consistency(last.size, new.size, last.root, new.root, proof):
            raise Fork(
                f"the checkpoint of size {new.size} does not extend the one of size "
                f"{last.size}{evidence}"
            )
