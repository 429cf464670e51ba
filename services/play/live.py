"""This process's one live cache of games: per game, its newest state, its recent events as
each audience sees them, its ended deals' encoded views, and the streams waiting on it.

It is fed by this process's appends (play.commands) and by the global feed (play.watcher),
both on the event loop. The repository reads and writes the state part from worker threads
(`get`/`put`, under a lock, only ever moving forward). A stream resumes from the tail when it
reaches back far enough; else it reads the store from where the stream stands, never from the
start (unless asked for everything), and discloses with the state held here (domain.view).
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from domain.events import Event
from domain.game import GameState, InconsistentEvent, Phase, apply
from domain.view import Disclosure, SeatView, disclose, summary_dict, trick_dict
from eventstore import RecordedEvent
from tournament.games import to_domain_event

StreamFormat = Literal["sse", "ndjson"]
TAIL = 256
GAMES = 4096


@dataclass(slots=True)
class Message:
    """One stored event of a game as its audiences see it, encoded once per audience and
    format however many streams send it."""

    game_id: str
    version: int
    recorded_at: float
    disclosure: Disclosure
    _encoded: dict[tuple[int | None, str], bytes] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return self.disclosure.type

    def form(self, seat: int | None) -> dict[str, Any]:
        data = self.disclosure.data(seat)
        return {"id": self.version, "game_id": self.game_id, "type": self.type, "data": data}

    def encoded(self, seat: int | None, fmt: StreamFormat) -> bytes:
        key = (seat if self.disclosure.seats is not None else None, fmt)
        out = self._encoded.get(key)
        if out is None:
            out = self._encoded[key] = encode(self.form(seat), fmt)
        return out


def encode(message: dict[str, Any], fmt: StreamFormat) -> bytes:
    """A stream message as NDJSON (a line) or as a Server-Sent Event (id, event, data)."""
    data = orjson.dumps(message)
    if fmt == "ndjson":
        return data + b"\n"
    head = b"event: " + str(message["type"]).encode() + b"\n"
    if message.get("id") is not None:
        head = b"id: " + str(message["id"]).encode() + b"\n" + head
    return head + b"data: " + data + b"\n\n"


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def messages(
    game_id: str,
    records: Sequence[RecordedEvent],
    after: GameState,
    events: Sequence[Event] | None = None,
) -> list[Message]:
    """Consecutive stored events, the last of which made `after`, as messages."""
    domain_events = list(events) if events is not None else [to_domain_event(r) for r in records]
    shown = disclose(domain_events, after)
    return [
        Message(game_id, r.version, r.recorded_at.timestamp(), d)
        for r, d in zip(records, shown, strict=True)
    ]


@dataclass(slots=True)
class LiveGame:
    state: GameState | None = None  # the newest state built here (any thread)
    known: int = 0  # the newest version written here or told of by the feed
    tail: deque[Message] = field(default_factory=lambda: deque(maxlen=TAIL))
    history: list[dict[str, Any]] = field(default_factory=list)  # ended deals, encoded
    history_json: tuple[int, orjson.Fragment] | None = None  # the first n of them, as JSON
    rules: dict[str, Any] | None = None  # the game's rules, encoded
    deal: tuple[int, int] = (0, 0)  # the (deal, attempt) whose ended tricks are in `tricks`
    tricks: list[dict[str, Any]] = field(default_factory=list)
    waiters: set[asyncio.Future[None]] = field(default_factory=set)
    # Streams that wait for one seat's turn (turns-only): the seat each waits for.
    turn_waiters: dict[asyncio.Future[None], int] = field(default_factory=dict)

    def current(self) -> GameState | None:
        """The state when it is the newest known (else None: read the store)."""
        state = self.state
        return state if state is not None and state.version >= self.known else None

    def wake(self, everyone: bool = True) -> None:
        """Wake the game's waiters; unless `everyone`, a turn waiter only when the newest
        state is known here and waits for its seat or is over (when it is not known, all)."""
        waiters, self.waiters = self.waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        if not self.turn_waiters:
            return
        state = None if everyone else self.current()
        if state is None or state.phase is Phase.OVER:
            due = list(self.turn_waiters)
        else:
            seat = state.to_move
            due = [w for w, waits_for in self.turn_waiters.items() if waits_for == seat]
        for waiter in due:
            del self.turn_waiters[waiter]
            if not waiter.done():
                waiter.set_result(None)


class LiveGames:
    """The per-process cache, bounded to the `size` games used most lately."""

    def __init__(self, size: int = GAMES) -> None:
        self._games: OrderedDict[str, LiveGame] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()  # get/put come from worker threads

    def _entry(self, game_id: str) -> LiveGame:
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                game = self._games[game_id] = LiveGame()
                while len(self._games) > self._size:
                    _, gone = self._games.popitem(last=False)
                    gone.wake()  # its streams look again and find it in the store
            else:
                self._games.move_to_end(game_id)
            return game

    # --- the repository's state cache (tournament.games.StateCache), any thread ---------

    def get(self, game_id: str) -> GameState | None:
        with self._lock:
            game = self._games.get(game_id)
            return game.state if game is not None else None

    def put(self, game_id: str, state: GameState) -> None:
        game = self._entry(game_id)
        with self._lock:
            if game.state is None or game.state.version <= state.version:
                game.state = state

    # --- the event loop's side --------------------------------------------------------

    def state(self, game_id: str) -> GameState | None:
        """The game's state when this process holds the newest known (else None)."""
        game = self._games.get(game_id)
        return game.current() if game is not None else None

    def version(self, game_id: str) -> int:
        """The newest version of the game this process has written or been told of."""
        game = self._games.get(game_id)
        return game.known if game is not None else 0

    def record(
        self,
        game_id: str,
        records: Sequence[RecordedEvent],
        state: GameState,
        events: Sequence[Event] | None = None,
    ) -> None:
        """Events appended (here, or brought by the feed and applied) and the state after
        them: extend the tail (starting it afresh after a gap) and wake the game's streams."""
        if not records:
            return
        game = self._entry(game_id)
        if game.tail and (
            records[0].version > game.tail[-1].version + 1  # a gap
            or records[0].version < game.tail[0].version  # reaches back past the tail
        ):
            game.tail.clear()
        if not game.tail or game.tail[-1].version < records[-1].version:
            fresh = [r for r in records if not game.tail or r.version > game.tail[-1].version]
            # Only what the tail keeps is disclosed (any run discloses on its own): a load of
            # a whole finished game would otherwise build a message for each of its events.
            fresh = fresh[-TAIL:]
            skip = len(records) - len(fresh)
            shown = messages(game_id, fresh, state, None if events is None else events[skip:])
            game.tail.extend(shown)
        self.put(game_id, state)
        self.told(game_id, records[-1].version)

    def absorb(self, game_id: str, records: Sequence[RecordedEvent]) -> None:
        """Events of a game that the feed brought (written by any process): carry the state
        and tail forward when they follow on from them; else only note the newer version."""
        if not records:
            return
        game = self._games.get(game_id)
        state = game.state if game is not None else None
        if game is not None and state is not None:
            if records[-1].version == state.version and (
                not game.tail or game.tail[-1].version < state.version
            ):
                # This process's own append, whose state the repository kept from its worker
                # thread before the loop has recorded it: the echo fills the tail now, so the
                # streams it wakes resume from the tail instead of reading the store.
                self.record(game_id, records, state)
                return
            fresh = [r for r in records if r.version > state.version]
            if fresh and fresh[0].version == state.version + 1:
                try:
                    events = [to_domain_event(r) for r in fresh]
                    for event in events:
                        state = apply(state, event)
                except (InconsistentEvent, ValueError, KeyError, TypeError):
                    self.forget(game_id)  # never serve a state the store does not give
                else:
                    self.record(game_id, fresh, state, events)
                    return
        self.told(game_id, records[-1].version)

    def told(self, game_id: str, version: int) -> None:
        """Someone wrote the game up to `version`: waiters here look again."""
        game = self._games.get(game_id)
        if game is None:  # nothing held of it here, nobody waiting
            return
        if version > game.known:  # the feed's echo of what is known already wakes nobody
            game.known = version
            game.wake(everyone=False)

    def since(self, game_id: str, after: int) -> tuple[list[Message], GameState] | None:
        """The messages after version `after` and the state they end at, from the tail; None
        when the tail does not reach back that far or is behind (read the store)."""
        game = self._games.get(game_id)
        if game is None:
            return None
        state = game.current()
        tail = game.tail
        if state is None or not tail or tail[-1].version != state.version:
            return None
        if after >= state.version:
            return [], state
        if tail[0].version > after + 1:
            return None
        start = after + 1 - tail[0].version
        return [tail[i] for i in range(max(start, 0), len(tail))], state

    def recorded_at(self, game_id: str, version: int) -> float | None:
        """When the game's event at `version` was recorded (epoch s), from the tail."""
        game = self._games.get(game_id)
        if game is None or not game.tail:
            return None
        first = game.tail[0].version
        if first <= version <= game.tail[-1].version:
            return game.tail[version - first].recorded_at
        return None

    def view_dict(self, view: SeatView, *, history_as_json: bool = False) -> dict[str, Any]:
        """`view.to_dict()`, with each ended deal encoded once per game (they never change).
        `history_as_json`: the ended deals as one orjson.Fragment, encoded once per deal count,
        for a message orjson writes (a turn's view carries every ended deal, and encoding them
        all again on every turn made a stream's messages dearer with each deal)."""
        game = self._entry(view.game_id)
        if game.rules is None:
            game.rules = view.rules.to_dict()
        if game.deal != (view.deal_no, view.attempt):
            game.deal, game.tricks = (view.deal_no, view.attempt), []
        # The view's ended tricks, encoded once each; the view may be older than the cache
        # (a state read a moment ago), so take no more of them than it has ended.
        over = sum(1 for t in view.tricks if t.winner is not None)
        ended = game.tricks
        for trick in view.tricks[len(ended) : over]:
            ended.append(trick_dict(trick))
        tricks = ended[:over]
        tricks.extend(trick_dict(t) for t in view.tricks[over:])  # the one in progress
        out = view.to_dict(history=False, encoded={"rules": game.rules, "tricks": tricks})
        done = game.history
        if len(done) > len(view.history):  # another game under the same id: start over
            done.clear()
            game.history_json = None
        for deal in view.history[len(done) :]:
            done.append(summary_dict(deal))
        count = len(view.history)
        if not history_as_json:
            out["history"] = done[:count]
            return out
        held = game.history_json
        if held is None or held[0] != count:
            held = game.history_json = (count, orjson.Fragment(orjson.dumps(done[:count])))
        out["history"] = held[1]
        return out

    async def wait(
        self, game_id: str, after_version: int, timeout: float, turn_of: int | None = None
    ) -> bool:
        """Until the game is known past `after_version`, or `timeout` s; True if it is.
        With `turn_of`, until then and the game waits for that seat or is over (a turns-only
        stream, which the other seats' moves need not wake).

        A future and a timer per wait, not an Event and `asyncio.timeout`: every stream of
        a game waits once per append, so this is on the hottest path there is."""
        game = self._games.get(game_id) or self._entry(game_id)
        if game.known > after_version:
            return True
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        if turn_of is None:
            game.waiters.add(waiter)
        else:
            game.turn_waiters[waiter] = turn_of
        timer = loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            game.waiters.discard(waiter)
            game.turn_waiters.pop(waiter, None)
        return self.version(game_id) > after_version

    def forget(self, game_id: str) -> None:
        """Drop what is held of a game (over, lost, or not to be trusted); wake its streams."""
        with self._lock:
            game = self._games.pop(game_id, None)
        if game is not None:
            game.wake()
