"""The replay audit of one game: re-derive everything from the moves and compare.

Given a game's stored events in order, the audit re-runs each one through the core (which
recomputes every trick, deal result and game result and refuses a stored fact that differs),
checks that the revealed seed matches the commitment and that every dealt hand is the one the
seed gives, and names the first event that is wrong, and why. The hash chain is the store's to
check; this is the part that knows King.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from domain.events import DealStarted, Event, SeedRevealed
from domain.fold import StoredEventError, fold_stored
from domain.game import GameState, Phase
from domain.shuffle import ALGORITHM, deal_hands


@dataclass(frozen=True, slots=True)
class AuditFinding:
    """The first event that is wrong: its version in the stream, its type and the reason."""

    version: int
    type: str
    reason: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    game_id: str
    events: int
    finished: bool
    seed_checked: bool
    deals_checked: int
    finding: AuditFinding | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.finding is None


class _HandsDiffer(Exception):
    """A dealt hand is not the seed's: stops the fold at the seed_revealed that showed it."""

    def __init__(self, finding: AuditFinding, read: int) -> None:
        self.finding = finding
        self.read = read  # events read, that seed_revealed included


def audit_events(game_id: str, events: Iterable[tuple[int, str, object]]) -> AuditReport:
    """Audit `(version, type, payload)` triples of one game stream, in stream order."""
    dealt: list[tuple[int, DealStarted]] = []

    def seen(version: int, event: Event, state: GameState) -> None:
        if isinstance(event, DealStarted):
            dealt.append((version, event))
        elif isinstance(event, SeedRevealed) and state.shuffle == ALGORITHM:
            seed = bytes.fromhex(event.server_seed)
            for v, d in dealt:
                hands = deal_hands(seed, state.shuffle_id, d.deal, d.attempt, state.client_seed)
                if hands != d.hands:
                    reason = (
                        f"deal {d.deal} attempt {d.attempt}: the hands are not the ones "
                        "king-shuffle/1 gives for the revealed seed"
                    )
                    raise _HandsDiffer(AuditFinding(v, d.TYPE, reason), version)

    try:
        state = fold_stored(events, seen=seen)
    except StoredEventError as exc:
        finding = AuditFinding(exc.version, exc.type, exc.reason)
        return AuditReport(game_id, exc.ordinal, False, False, 0, finding)
    except _HandsDiffer as exc:
        return AuditReport(game_id, exc.read, False, True, 0, exc.finding)
    count = state.version
    if state.game_id and state.game_id != game_id:
        finding = AuditFinding(1, "game_created", f"the stream holds game {state.game_id!r}")
        return AuditReport(game_id, count, False, False, 0, finding)
    finished = state.phase is Phase.OVER
    notes = []
    if finished and state.seed is None:
        notes.append("the game is over but its seed has not been revealed yet")
    if not finished:
        notes.append("the game is in progress: hands are checked once the seed is revealed")
    return AuditReport(
        game_id,
        count,
        finished,
        state.seed is not None,
        len(dealt) if state.seed is not None else 0,
        None,
        tuple(notes),
    )
