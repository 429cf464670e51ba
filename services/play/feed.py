"""A game's stored events as one audience may see them: a seat (0-3) or the public (None).

The stored `deal_started` holds all four hands; a seat gets only its own, the public none.
When a deal ends (or is given back by a redeal) its hands are public, as in the seat views
(domain.view), so the public `deal_ended` and `redeal_asked` carry them. The seed is public in
`seed_revealed`, the last event, once the game is over. Hashes are never sent: a hash over a
hidden hand is a fingerprint of it.
"""

from __future__ import annotations

from typing import Any

from eventstore import RecordedEvent

# Events whose stored payload is public as it is.
_PUBLIC_AS_IS = frozenset(
    {
        "game_created",
        "contract_declared",
        "card_played",
        "trick_taken",
        "game_ended",
        "seed_revealed",
        "strike_recorded",
        "seat_abandoned",
        "seat_substituted",
    }
)
FINAL_EVENT = "seed_revealed"


class AudienceFeed:
    """Maps stored events, read in stream order from version 1, to one audience's forms."""

    def __init__(self, game_id: str, seat: int | None) -> None:
        self.game_id = game_id
        self.seat = seat
        self._hands: list[list[str]] | None = None
        self.version = 0
        self.finished = False
        self.replaced = False  # the seat has a substitute: its stream ends here

    def form(self, recorded: RecordedEvent) -> dict[str, Any]:
        """The audience's form of one event (call for every event, in order)."""
        self.version = recorded.version
        payload = recorded.payload
        kind = recorded.type
        if kind == FINAL_EVENT:
            self.finished = True
        data: dict[str, Any]
        if kind in _PUBLIC_AS_IS:
            data = dict(payload)
            if kind == "seat_substituted" and payload.get("seat") == self.seat:
                self.replaced = True
        elif kind == "deal_started":
            hands = payload.get("hands")
            self._hands = [list(h) for h in hands] if isinstance(hands, list) else None
            data = {k: payload[k] for k in ("deal", "attempt", "declarer") if k in payload}
            if self.seat is not None and self._hands is not None:
                data["hand"] = list(self._hands[self.seat])
        elif kind in ("deal_ended", "redeal_asked"):
            data = dict(payload)
            if self._hands is not None:
                data["hands"] = self._hands
            self._hands = None
        else:  # an event type this service does not know: say that it happened, nothing more
            data = {}
        return {"id": recorded.version, "game_id": self.game_id, "type": kind, "data": data}
