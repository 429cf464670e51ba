"""Versions of an account's bots: what the owner declared, and from when.

A bot changes as its author improves it; its results mean something only beside the version
that earned them. A version is a label and the push URL it played at, numbered from 1 (made
with the bot); a game counts for the version that was current when the game started.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from services.accounts.errors import BadVersion

MAX_LABEL = 60
FIRST_LABEL = "1"


@dataclass(frozen=True, slots=True)
class BotVersion:
    bot_id: str
    number: int
    label: str
    bot_url: str | None
    created_at: datetime


def clean_label(label: str | None, default: str) -> str:
    """The label as stored: trimmed, 1 to 60 printable characters (`default` when absent)."""
    text = default if label is None else label.strip()
    if not text or len(text) > MAX_LABEL or not text.isprintable():
        raise BadVersion(f"a version label has 1 to {MAX_LABEL} printable characters")
    return text


def current_at(versions: Sequence[BotVersion], when: datetime | None) -> BotVersion | None:
    """The version current at `when` (versions in number order); the first for a game
    without a time, None before the first version."""
    if not versions:
        return None
    if when is None:
        return versions[0]
    at = bisect_right([v.created_at for v in versions], when)
    return versions[at - 1] if at else None
