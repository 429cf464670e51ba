"""`king log verify`: does the stored log extend a saved checkpoint? Every leaf is re-derived
from the stored events and compared, position by position, with the leaf the tree recorded;
the re-derived tree's root at the checkpoint's size must be the checkpoint's, and the stored
tree must prove (RFC 9162) that it extends the checkpoint. Reads only: nothing is written."""

from __future__ import annotations

from dataclasses import dataclass

from eventstore.logtree import LogTree, TreeError
from eventstore.merkle import CompactTree, verify_consistency
from services.tlog.notes import Checkpoint


@dataclass(frozen=True, slots=True)
class LogVerdict:
    """ok, or the first position (1-based, as in `events.position`) that differs and why
    (None when the tree was rewritten along with the events: no position can be named)."""

    ok: bool
    events: int
    tree_size: int
    position: int | None = None
    reason: str = ""
    note: str = ""


def verify_log(tree: LogTree, checkpoint: Checkpoint) -> LogVerdict:
    stored_size = tree.size()
    stored = tree.leaves(0, stored_size)
    compact = CompactTree()
    root_at_checkpoint = compact.root() if checkpoint.size == 0 else None
    expected = 1

    def fail(position: int | None, reason: str) -> LogVerdict:
        return LogVerdict(False, compact.size, stored_size, position, reason)

    for position, leaf in tree.recompute():
        if position != expected:
            return fail(expected, f"no event at position {expected} (deleted or renumbered)")
        if position <= stored_size:
            _, recorded = next(stored)
            if recorded != leaf:
                return fail(
                    position,
                    "the event is not the one the log recorded (its content, "
                    "stream, version, time or position changed)",
                )
        compact.append(leaf)
        if compact.size == checkpoint.size:
            root_at_checkpoint = compact.root()
        expected += 1
    count = compact.size
    if count < max(checkpoint.size, stored_size):
        return fail(
            count + 1,
            f"the log ends at position {count}, but the "
            f"{'checkpoint' if checkpoint.size > stored_size else 'tree'} covers "
            f"{max(checkpoint.size, stored_size)} events (its tail was dropped)",
        )
    if root_at_checkpoint != checkpoint.root:
        behind = stored_size < checkpoint.size
        return fail(
            None,
            f"the first {checkpoint.size} events do not hash to the checkpoint's root, "
            + (
                "and the stored tree does not cover them"
                if behind
                else "though each matches the stored tree: the tree was rewritten with the log"
            )
            + " (no position can be named without the original leaves)",
        )
    if stored_size < checkpoint.size:
        # the events alone re-derive the checkpoint's root: the log extends it; only the
        # stored tree is behind (lost, or restored without it)
        note = f"the stored tree covers {stored_size} events only (lost, or restored without it)"
        return LogVerdict(True, count, stored_size, note=note)
    try:
        _, stored_root = tree.root(stored_size)
        proof = tree.consistency(checkpoint.size, stored_size)
    except TreeError as exc:
        return fail(None, f"the stored tree is damaged: {exc}")
    if not verify_consistency(checkpoint.size, stored_size, checkpoint.root, stored_root, proof):
        return fail(None, "the stored tree does not prove that it extends the checkpoint")
    return LogVerdict(True, count, stored_size)
