"""C2SP signed notes with Ed25519 and C2SP tlog-checkpoint bodies (pure, no I/O).

note      = text "\\n" signature-line+        (text ends with a newline)
signature = "— " name " " base64(key hash[4] || Ed25519 signature of text) "\\n"
key hash  = SHA-256(name || 0x0A || 0x01 || public key)[:4]
verifier  = name "+" hex(key hash) "+" base64(0x01 || public key)
signer    = "PRIVATE+KEY+" name "+" hex(key hash) "+" base64(0x01 || private key)
checkpoint text = origin "\\n" decimal size "\\n" base64(root) "\\n"
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

ED25519: Final = b"\x01"
DASH: Final = "\u2014"
_NAME = re.compile(r"^[^\s+]+$")
_SIZE = re.compile(r"^(0|[1-9][0-9]{0,19})$")


class NoteError(ValueError):
    """A key, note or checkpoint that is malformed, or a signature that does not verify."""


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise NoteError(f"a key name must be non-empty, without spaces or '+': {name!r}")
    return name


def key_hash(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteError(f"{what} is not base64") from None


@dataclass(frozen=True, slots=True)
class Verifier:
    """A note verifier key: who signs, and the Ed25519 public key."""

    name: str
    public: bytes

    @property
    def hash(self) -> bytes:
        return key_hash(self.name, self.public)

    def __str__(self) -> str:
        return f"{self.name}+{self.hash.hex()}+{_b64(ED25519 + self.public)}"

    @classmethod
    def parse(cls, text: str) -> Verifier:
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("a verifier key is <name>+<hex key hash>+<base64 key>")
        name, hexhash, key = parts
        check_name(name)
        raw = _unb64(key, "the verifier key")
        if len(raw) != 33 or raw[:1] != ED25519:
            raise NoteError("the verifier key is not an Ed25519 key (0x01 and 32 bytes)")
        verifier = cls(name, raw[1:])
        if hexhash.lower() != verifier.hash.hex() or len(hexhash) != 8:
            raise NoteError("the verifier key's hash does not match its name and key")
        return verifier

    def verify(self, note: str) -> str:
        """The note's text when one of its signatures is this key's and verifies."""
        text, signatures = split_note(note)
        key = Ed25519PublicKey.from_public_bytes(self.public)
        for name, blob in signatures:
            if name == self.name and blob[:4] == self.hash:
                try:
                    key.verify(blob[4:], text.encode())
                except InvalidSignature:
                    raise NoteError(f"the signature by {name} does not verify") from None
                return text
        raise NoteError(f"the note carries no signature by {self.name}")


@dataclass(frozen=True, slots=True)
class Signer:
    """A note signer: the name and the Ed25519 private key (never shown)."""

    name: str
    private: Ed25519PrivateKey

    @classmethod
    def generate(cls, name: str) -> Signer:
        return cls(check_name(name), Ed25519PrivateKey.generate())

    @property
    def verifier(self) -> Verifier:
        public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return Verifier(self.name, public)

    def encode(self) -> str:
        raw = self.private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return f"PRIVATE+KEY+{self.name}+{self.verifier.hash.hex()}+{_b64(ED25519 + raw)}"

    @classmethod
    def parse(cls, text: str) -> Signer:
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a signer key is PRIVATE+KEY+<name>+<hex key hash>+<base64 key>")
        name = check_name(parts[2])
        raw = _unb64(parts[4], "the signer key")
        if len(raw) != 33 or raw[:1] != ED25519:
            raise NoteError("the signer key is not an Ed25519 key (0x01 and 32 bytes)")
        signer = cls(name, Ed25519PrivateKey.from_private_bytes(raw[1:]))
        if parts[3].lower() != signer.verifier.hash.hex():
            raise NoteError("the signer key's hash does not match its name and key")
        return signer

    def sign(self, text: str) -> str:
        """The signed note of `text` (which must end with a newline)."""
        if not text.endswith("\n") or "\n\n" in text:
            raise NoteError("a note's text ends with one newline and has no blank line")
        blob = self.verifier.hash + self.private.sign(text.encode())
        return f"{text}\n{DASH} {self.name} {_b64(blob)}\n"


def split_note(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """(text, [(signer name, key hash || signature)]) of a signed note."""
    cut = note.rfind("\n\n")
    if cut < 0 or not note.endswith("\n"):
        raise NoteError("not a signed note: no blank line before the signatures")
    text, lines = note[: cut + 1], note[cut + 2 :].splitlines()
    signatures: list[tuple[str, bytes]] = []
    for line in lines:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != DASH:
            raise NoteError(f"not a signature line: {line[:80]!r}")
        blob = _unb64(parts[2], "a signature")
        if len(blob) < 5:
            raise NoteError("a signature is too short")
        signatures.append((parts[1], blob))
    if not signatures:
        raise NoteError("the note carries no signature")
    return text, signatures


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A C2SP tlog-checkpoint: the log's origin, its size and its root hash."""

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{_b64(self.root)}\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError("a checkpoint is origin, size and root hash, one a line")
        origin, size, root = lines[0], lines[1], lines[2]
        if not origin or not _SIZE.match(size):
            raise NoteError("a checkpoint's first lines are its origin and decimal size")
        digest = _unb64(root, "the checkpoint's root hash")
        if len(digest) != 32:
            raise NoteError("the checkpoint's root hash is not 32 bytes")
        return cls(origin, int(size), digest)


def open_checkpoint(note: str, verifier: Verifier | Sequence[Verifier]) -> Checkpoint:
    """The checkpoint of a signed note, once a signature by `verifier` (or by one of several:
    a key and the one it replaces) verifies and its origin is the key's name."""
    keys = [verifier] if isinstance(verifier, Verifier) else list(verifier)
    if not keys:
        raise NoteError("no verifier key given")
    failure = NoteError("no key given")
    for key in keys:
        try:
            checkpoint = Checkpoint.parse(key.verify(note))
        except NoteError as exc:
            failure = exc
            continue
        if checkpoint.origin != key.name:
            raise NoteError(
                f"the checkpoint's origin {checkpoint.origin!r} is not the key's {key.name!r}"
            )
        return checkpoint
    raise failure
