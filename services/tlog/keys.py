"""The log's signing key: a file given by a setting, or one generated into the data
directory at first start (mode 0600). Rotation: see docs/TRANSPARENCY.md."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from services.errors import UserError
from services.settings import Settings
from services.tlog.notes import NoteError, Signer

SIGNER_FILE = "log-signer.key"


def signer_path(settings: Settings) -> Path:
    return settings.log_key_file or settings.data_dir / SIGNER_FILE


def _generate(path: Path, signer: Signer) -> None:
    """Write a new key whole, or keep the one another process wrote first: the file appears
    complete (a hard link of a written file) or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(signer.encode() + "\n")
    try:
        os.link(temp, path)
    except FileExistsError:
        pass  # another process was first: its key is the one
    finally:
        temp.unlink()


def load_signer(settings: Settings, *, create: bool = True) -> Signer:
    """The signer of `settings` (generated when the default file is missing and `create`)."""
    path = signer_path(settings)
    if not path.exists():
        if settings.log_key_file is not None or not create:
            raise UserError(f"no log signer key at {path}")
        _generate(path, Signer.generate(settings.log_origin))
    try:
        signer = Signer.parse(path.read_text())
    except (NoteError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"the log signer key {path} is unusable: {exc}") from None
    if signer.name != settings.log_origin:
        raise UserError(
            f"the log signer key {path} is named {signer.name!r}, the log origin is "
            f"{settings.log_origin!r} (KING_LOG_ORIGIN): they must be the same"
        )
    return signer
