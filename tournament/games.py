"""Game streams in the event store: create a game, load it, act on it — one place for all.

A game is the stream `game-<id>`. Its secret shuffle seed is sealed beside the log (never in it)
until the game ends, when a `seed_revealed` event publishes it. Every command goes: load the
stream → the domain decides → append at the expected version; a version conflict means someone
else appended first, so the command is decided again on the new state. The HTTP service and the
tournament runner both act through this repository.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from domain.audit import AuditReport, audit_events
from domain.commands import Command, RevealSeed, StartDeal
from domain.events import Event, from_payload, to_payload
from domain.game import GameState, Phase, apply, run
from domain.playout import new_game
from domain.rules import Rules
from domain.shuffle import deal_hands
from domain.violations import Violation
from eventstore import (
    NO_STREAM,
    AppendRequest,
    ConflictError,
    EventStore,
    InvalidEventError,
    Lease,
    NewEvent,
    RecordedEvent,
    SealedValueConflict,
    StreamNotFound,
    VerifyResult,
    VersionConflict,
)

STREAM_PREFIX = "game-"
SEED_PREFIX = "game-seed:"
MAX_RETRIES = 20


class GameNotFound(LookupError):
    """No stream for this game id."""


class GameFailed(ValueError):
    """A stored game that does not replay: its rows were changed or damaged. The reason names
    the first event that does not apply (its version and type), never a card."""

    def __init__(self, game_id: str, reason: str) -> None:
        super().__init__(f"game {game_id!r} does not load: {reason}")
        self.game_id = game_id
        self.reason = reason


class GameExists(ValueError):
    """A game with this id was created already."""


class GameBusy(RuntimeError):
    """Others kept appending to the game faster than a command could be decided."""


class SeedMissing(RuntimeError):
    """The sealed seed of a game is gone: its next deal cannot be dealt."""


def stream_id(game_id: str) -> str:
    return STREAM_PREFIX + game_id


def _commands(command: Command | Sequence[Command]) -> tuple[Command, ...]:
    return tuple(command) if isinstance(command, Sequence) else (command,)


def _decide_all(
    state: GameState, commands: Sequence[Command]
) -> tuple[list[Event], GameState] | Violation:
    """The events of `commands` decided in turn, and the state they leave; or the first
    refusal."""
    events: list[Event] = []
    for command in commands:
        state, decided = run(state, command)
        if isinstance(decided, Violation):
            return decided
        events += decided
    return events, state


def to_new_event(event: Event) -> NewEvent:
    return NewEvent(type=event.TYPE, payload=to_payload(event))


def to_domain_event(recorded: RecordedEvent) -> Event:
    return from_payload(recorded.type, recorded.payload)


@dataclass(frozen=True, slots=True)
class Request:
    """One game's command(s) for `GameRepository.execute_group`, with `execute`'s
    `known_version` and `at_version`."""

    game_id: str
    commands: Command | Sequence[Command]
    known_version: int | None = None
    at_version: int | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did: the new state, the events appended (empty when refused) and the
    refusal if any."""

    state: GameState
    events: tuple[Event, ...]
    recorded: tuple[RecordedEvent, ...]
    violation: Violation | None = None
    stale: bool = False  # asked at a version the game has left: nothing decided or written

    @property
    def ok(self) -> bool:
        return self.violation is None


@dataclass(frozen=True, slots=True)
class GameAudit:
    """The hash chain's verdict and the replay audit's, for one game."""

    game_id: str
    chain: VerifyResult
    replay: AuditReport

    @property
    def ok(self) -> bool:
        return self.chain.ok and self.replay.ok

    def to_dict(self) -> dict[str, object]:
        finding = self.replay.finding
        return {
            "game_id": self.game_id,
            "ok": self.ok,
            "events": self.replay.events,
            "finished": self.replay.finished,
            "chain": {
                "ok": self.chain.ok,
                "events_checked": self.chain.events_checked,
                "first_bad_version": self.chain.version,
                "reason": self.chain.reason,
            },
            "replay": {
                "ok": self.replay.ok,
                "seed_checked": self.replay.seed_checked,
                "deals_checked": self.replay.deals_checked,
                "first_bad_version": finding.version if finding else None,
                "event_type": finding.type if finding else None,
                "reason": finding.reason if finding else None,
                "notes": list(self.replay.notes),
            },
        }


class StateCache(Protocol):
    """Where a repository keeps the states it built (called from any thread)."""

    def get(self, game_id: str) -> GameState | None: ...

    def put(self, game_id: str, state: GameState) -> None: ...


class Versioned(Protocol):
    """A state folded from a stream, up to its `version`."""

    @property
    def version(self) -> int: ...


S = TypeVar("S", bound=Versioned)


class LruStates(Generic[S]):
    """The states of the `size` streams used most lately (for callers without a live cache):
    games here, tournaments in the runner. A state is kept only if it is no older than the one
    kept, so a slow thread cannot put an older state back."""

    def __init__(self, size: int = 512) -> None:
        self._states: OrderedDict[str, S] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: str) -> S | None:
        with self._lock:
            return self._states.get(key)

    def put(self, key: str, state: S) -> None:
        with self._lock:
            known = self._states.get(key)
            if known is None or known.version <= state.version:
                self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > self._size:
                self._states.popitem(last=False)


class GameRepository:
    """Event-sourced games on an EventStore, keeping the states it builds in `states`.

    The cache only saves replaying: a state is always extended from the stream's version it
    was built at, so another process's appends are picked up on the next load. The service
    passes its live cache (play.live); other callers get a small LRU of their own.
    """

    def __init__(self, store: EventStore, states: StateCache | None = None) -> None:
        self.store = store
        self.states: StateCache = states if states is not None else LruStates[GameState]()

    # --- reading ---------------------------------------------------------------------------

    def load(self, game_id: str) -> GameState:
        """The game's current state (GameNotFound if there is no such game)."""
        return self.load_news(game_id)[0]

    def load_news(self, game_id: str) -> tuple[GameState, list[RecordedEvent], list[Event]]:
        """The game's current state, with the events read to bring the kept state up to it
        (stored and as domain events), for a caller that keeps a tail of them."""
        cached = self.states.get(game_id)
        state = cached if cached is not None else GameState()
        try:
            recorded = self.store.read_stream(stream_id(game_id), from_version=state.version + 1)
        except ValueError:  # a payload that is no longer JSON
            raise GameFailed(game_id, "its stored events cannot be read") from None
        if not recorded and state.version == 0:
            raise GameNotFound(f"no game {game_id!r}")
        events: list[Event] = []
        for r in recorded:
            try:
                event = to_domain_event(r)
                state = apply(state, event)
            except (ValueError, KeyError, TypeError):  # InconsistentEvent, MalformedEvent, ...
                reason = f"event v{r.version} ({r.type}) does not apply to the game's state"
                raise GameFailed(game_id, reason) from None
            events.append(event)
        self._remember(game_id, state)
        return state, recorded, events

    def events(self, game_id: str, from_version: int = 1) -> list[RecordedEvent]:
        return self.store.read_stream(stream_id(game_id), from_version=from_version)

    def audit(self, game_id: str) -> GameAudit:
        """Check the game's hash chain, then re-run it through the core (domain.audit)."""
        try:
            chain, recorded = self.store.read_verified_payloads(stream_id(game_id))
        except StreamNotFound:
            raise GameNotFound(f"no game {game_id!r}") from None
        if not recorded:
            raise GameNotFound(f"no game {game_id!r}")
        report = audit_events(game_id, recorded)
        return GameAudit(game_id, chain, report)

    def game_ids(self) -> list[str]:
        """Every game id in the store, in the order the games were created."""
        return [s[len(STREAM_PREFIX) :] for s in self.store.stream_ids("game")]

    def exists(self, game_id: str) -> bool:
        return self.store.stream_info(stream_id(game_id)) is not None

    # --- writing ---------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        players: Sequence[str],
        rules: Rules | None = None,
        client_seed: str = "",
        server_seed: bytes | None = None,
        shuffle_id: str = "",
    ) -> GameState:
        """Create the game, seal its seed and deal the first hands, in one append.

        server_seed is for tests and duplicate deals; by default 32 bytes from the operating
        system's CSPRNG, as king-shuffle/1 requires. shuffle_id: see GameCreated.
        """
        if self.exists(game_id):
            raise GameExists(f"game {game_id!r} exists already")
        seed = server_seed if server_seed is not None else secrets.token_bytes(32)
        try:
            self.store.seal(SEED_PREFIX + game_id, seed.hex())
        except SealedValueConflict:
            raise GameExists(f"game {game_id!r} was created with another seed") from None
        state, events = new_game(game_id, players, seed, rules, client_seed, shuffle_id)
        more, state = self._follow_up(state, seed)
        try:
            self.store.append(
                stream_id(game_id),
                [to_new_event(e) for e in [*events, *more]],
                NO_STREAM,
                stream_type="game",
            )
        except VersionConflict:
            raise GameExists(f"game {game_id!r} exists already") from None
        self._remember(game_id, state)
        return state

    def execute(
        self,
        game_id: str,
        command: Command | Sequence[Command],
        known_version: int | None = None,
        *,
        at_version: int | None = None,
        fence: Lease | None = None,
    ) -> Outcome:
        """Decide `command` on the latest state and append its events (retrying on conflict).

        A sequence of commands is decided in turn, each on the state the one before left, and
        appended as one: all or nothing (a refusal of any of them appends none). A strike and
        its default move go this way, so no reader and no crash ever finds one without the
        other.

        After the command, what the game does by itself follows in the same append: the next
        hands are dealt from the sealed seed, and the seed is revealed when the game ends.
        `known_version`: the newest version the caller knows of; when the cached state is at
        it, the first attempt decides on the cache without reading the stream (the append's
        expected version still refuses a stale one, and a refusal is only ever given on a
        state just read).
        `at_version`: decide only at this version (a decision asked of a bot, a time-out, a
        strike's default move): once the game has moved on, the command is stale and nothing
        is decided again on the newer state (`Outcome.stale`), so nothing is ever done twice.
        `fence`: append only while this owner's lease is held (`LeaseLost` otherwise).
        """
        commands = _commands(command)
        for attempt in range(MAX_RETRIES):
            cached = self._cached_at(game_id, known_version) if attempt == 0 else None
            state = cached if cached is not None else self.load(game_id)
            if at_version is not None and state.version != at_version:
                if cached is not None:
                    continue  # the cache may lag: judge staleness on the stored state
                return Outcome(state, (), (), stale=True)
            done = self._decide(state, commands, game_id)
            if isinstance(done, Violation):
                if cached is not None:
                    continue  # a refusal is judged on the stored state, never on the cache
                return Outcome(state, (), (), done)
            events, new_state = done
            try:
                recorded = self.store.append(
                    stream_id(game_id),
                    [to_new_event(e) for e in events],
                    state.version,
                    fence=fence,
                )
            except VersionConflict:
                continue  # at_version: the next attempt reads the newer state and is stale
            self._remember(game_id, new_state)
            return Outcome(new_state, events, tuple(recorded))
        raise GameBusy(f"game {game_id!r} kept changing under {MAX_RETRIES} attempts")

    def execute_group(self, requests: Sequence[Request]) -> list[Outcome | Exception]:
        """Several games' commands, their appends committed together: one transaction, so one
        flush to disk for all (a group commit), where one `execute` each would flush each.

        Each request's outcome is what `execute` would give it, at the same place in the list
        (or the exception it raised). Requests decided on the cached state go in the group;
        the rest (no cached state at the known version, a refusal, which is judged on the
        stored state) go through `execute` one by one. When the group cannot be written as one
        (a conflict: another writer moved a game), nothing of it is, and each of its requests
        goes through `execute` too, which decides again on what is stored. A game with more
        than one request here (a caller that gave up while its request waited, then sent
        another) has them all go through `execute`, in their order. Unfenced only: a fenced
        append checks its lease in its own transaction."""
        results: list[Outcome | Exception | None] = [None] * len(requests)
        grouped: list[tuple[int, GameState, tuple[Event, ...]]] = []
        appends: list[AppendRequest] = []
        counts = Counter(r.game_id for r in requests)
        for i, request in enumerate(requests):
            if counts[request.game_id] > 1:
                continue
            try:
                planned = self._plan(request)
            except Exception as exc:  # a malformed command, a missing seed: its own failure
                results[i] = exc
                continue
            if planned is None:
                continue
            state, events, new_state = planned
            grouped.append((i, new_state, events))
            appends.append(
                AppendRequest(
                    stream_id(request.game_id), [to_new_event(e) for e in events], state.version
                )
            )
        if appends:
            try:
                recorded = self.store.append_many(appends)
            except (ConflictError, InvalidEventError):
                pass  # nothing was written: each goes alone below, deciding on what is stored
            except Exception as exc:  # written or not, nobody knows: each is told, as alone
                for i, _, _ in grouped:
                    results[i] = exc
            else:
                for (i, new_state, events), done in zip(grouped, recorded, strict=True):
                    self._remember(requests[i].game_id, new_state)
                    results[i] = Outcome(new_state, events, tuple(done))
        for i, request in enumerate(requests):
            if results[i] is not None:
                continue
            try:
                results[i] = self.execute(
                    request.game_id,
                    request.commands,
                    request.known_version,
                    at_version=request.at_version,
                )
            except Exception as exc:  # the request's own failure, not the group's
                results[i] = exc
        return [r for r in results if r is not None]  # (all of them: each was given one)

    def _plan(self, request: Request) -> tuple[GameState, tuple[Event, ...], GameState] | None:
        """The state a request is decided on, its events and the state they leave, when it
        can be decided on the cache and is taken there; None when it must go by `execute`."""
        state = self._cached_at(request.game_id, request.known_version)
        if state is None:
            return None
        if request.at_version is not None and state.version != request.at_version:
            return None  # stale, or a lagging cache: judged on the stored state
        done = self._decide(state, _commands(request.commands), request.game_id)
        if isinstance(done, Violation):
            return None  # a refusal is judged on the stored state, never on the cache
        events, new_state = done
        return state, events, new_state

    def _decide(
        self, state: GameState, commands: Sequence[Command], game_id: str
    ) -> tuple[tuple[Event, ...], GameState] | Violation:
        """The commands' events with what the game then does by itself (`_follow_up`), and
        the state they leave; or the first refusal."""
        done = _decide_all(state, commands)
        if isinstance(done, Violation):
            return done
        decided, new_state = done
        more, new_state = self._follow_up(new_state, None, game_id)
        return (*decided, *more), new_state

    def _follow_up(
        self, state: GameState, seed: bytes | None, game_id: str | None = None
    ) -> tuple[list[Event], GameState]:
        """The events the game makes by itself after a command: deal, or reveal the seed."""
        out: list[Event] = []
        # A seed shared by several games (duplicate rounds) is revealed by whoever runs them,
        # once all are over: revealing it at one table's end would show every other table's
        # hands (see reveal_seed).
        own_seed = state.shuffle_id == state.game_id
        if state.phase is Phase.AWAITING_DEAL or (
            state.phase is Phase.OVER and not state.seed and own_seed
        ):
            if seed is None:
                seed = self._seed(game_id or state.game_id)
            if state.phase is Phase.AWAITING_DEAL:
                hands = deal_hands(
                    seed, state.shuffle_id, state.deal_no, state.attempt, state.client_seed
                )
                command: Command = StartDeal(hands)
            else:
                command = RevealSeed(seed.hex())
            state, events = run(state, command)
            assert not isinstance(events, Violation)
            out += events
        return out, state

    def reveal_seed(self, game_id: str) -> GameState:
        """Publish a finished game's seed now (for games that share a shuffle: call it when
        every game dealt from the seed is over). Does nothing before the end or twice."""
        state = self.load(game_id)
        if state.phase is not Phase.OVER or state.seed is not None:
            return state
        return self.execute(game_id, RevealSeed(self._seed(game_id).hex())).state

    def _seed(self, game_id: str) -> bytes:
        sealed = self.store.unseal(SEED_PREFIX + game_id)
        if sealed is None:
            raise SeedMissing(f"the sealed seed of game {game_id!r} is missing")
        return bytes.fromhex(sealed)

    def _cached_at(self, game_id: str, version: int | None) -> GameState | None:
        if version is None:
            return None
        cached = self.states.get(game_id)
        return cached if cached is not None and cached.version == version else None

    def _remember(self, game_id: str, state: GameState) -> None:
        self.states.put(game_id, state)
