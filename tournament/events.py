"""The events of a tournament stream and the state they fold into (pure).

A tournament is the stream `tournament-<id>`: created, players registered or withdrawn, each
round paired (tables, seats, game ids, byes), each game's result recorded, rounds closed,
finished. Everything the standings and the next pairing need is in these events, so anyone
holding the stream can recompute both.

An organiser may set the next round's pairing by hand (`manual_pairing`); the runner then pairs
that round as given, and the round is marked manual: it follows no pairing system, so no
verifier tries to reproduce it. A registration or a withdrawal before the round is paired drops
the hand pairing (it no longer seats exactly the active players).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any, ClassVar

from tournament.model import (
    ByeScore,
    GameResult,
    PlayerId,
    Round,
    Table,
    TournamentSettings,
)


class MalformedTournamentEvent(ValueError):
    """A payload that is not a valid tournament event."""


class TournamentInconsistency(ValueError):
    """An event that cannot follow the tournament's state."""


@dataclass(frozen=True, slots=True)
class TournamentCreated:
    TYPE: ClassVar[str] = "tournament_created"
    tournament_id: str
    name: str
    format: str
    rounds: int
    fill: str
    bye_points: str
    duplicate: bool
    seed: str
    rules: dict[str, Any]
    house_strategy: str


@dataclass(frozen=True, slots=True)
class PlayerRegistered:
    """A player joins: `kind` is builtin (spec = a strategy like `heuristic`), bot (spec = the
    bot's URL or account) or human (spec = the account)."""

    TYPE: ClassVar[str] = "player_registered"
    player_id: str
    name: str
    kind: str
    spec: str


@dataclass(frozen=True, slots=True)
class PlayerWithdrew:
    TYPE: ClassVar[str] = "player_withdrew"
    player_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class RoundPaired:
    """A round's tables: each `{table, game_id, seats[4], house[seats], shuffle_game_id}`."""

    TYPE: ClassVar[str] = "round_paired"
    round: int
    tables: tuple[dict[str, Any], ...]
    byes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ManualPairing:
    """The organiser's pairing of the next round: each table `{table, seats[4], house[seats]}`."""

    TYPE: ClassVar[str] = "manual_pairing"
    round: int
    tables: tuple[dict[str, Any], ...]
    byes: tuple[str, ...]
    by: str


@dataclass(frozen=True, slots=True)
class GameRecorded:
    """A finished game's result as the standings see it (fractions as `p/q` text)."""

    TYPE: ClassVar[str] = "game_recorded"
    round: int
    game_id: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    points: tuple[tuple[str, str], ...]
    forfeited: tuple[str, ...]
    house: tuple[int, ...]
    king: int | None


@dataclass(frozen=True, slots=True)
class RoundClosed:
    TYPE: ClassVar[str] = "round_closed"
    round: int


@dataclass(frozen=True, slots=True)
class TournamentFinished:
    TYPE: ClassVar[str] = "tournament_finished"
    winners: tuple[str, ...]


TournamentEvent = (
    TournamentCreated
    | PlayerRegistered
    | PlayerWithdrew
    | ManualPairing
    | RoundPaired
    | GameRecorded
    | RoundClosed
    | TournamentFinished
)
EVENT_TYPES: dict[str, type[Any]] = {
    cls.TYPE: cls
    for cls in (
        TournamentCreated,
        PlayerRegistered,
        PlayerWithdrew,
        ManualPairing,
        RoundPaired,
        GameRecorded,
        RoundClosed,
        TournamentFinished,
    )
}

_TUPLE_FIELDS: dict[str, Callable[[Any], Any]] = {
    "tables": lambda v: tuple(dict(t) for t in v),
    "byes": tuple,
    "seats": tuple,
    "totals": tuple,
    "winners": tuple,
    "points": lambda v: tuple((str(a), str(b)) for a, b in v),
    "forfeited": tuple,
    "house": tuple,
}


def to_payload(event: TournamentEvent) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(event):
        value = getattr(event, f.name)
        if isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[f.name] = value
    return out


def from_payload(type_: str, payload: object) -> TournamentEvent:
    cls = EVENT_TYPES.get(type_)
    if cls is None:
        raise MalformedTournamentEvent(f"unknown tournament event {type_!r}")
    if not isinstance(payload, dict):
        raise MalformedTournamentEvent(f"{type_} payload must be an object")
    try:
        values = {
            f.name: _TUPLE_FIELDS.get(f.name, lambda v: v)(payload[f.name]) for f in fields(cls)
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedTournamentEvent(f"{type_}: {exc}") from None
    event: TournamentEvent = cls(**values)
    return event


# --- state ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Registration:
    player_id: PlayerId
    name: str
    kind: str
    spec: str


@dataclass(frozen=True, slots=True)
class TournamentState:
    """Everything known about a tournament after some events."""

    created: TournamentCreated | None = None
    players: tuple[Registration, ...] = ()
    withdrawn: frozenset[PlayerId] = frozenset()
    rounds: tuple[Round, ...] = ()
    round_games: tuple[tuple[dict[str, Any], ...], ...] = ()
    results: tuple[GameResult, ...] = ()
    closed: int = 0
    finished: TournamentFinished | None = None
    # When the active field last changed (or a round was paired by hand): a round-robin is
    # re-planned from there.
    field_changed_after: int = 0
    # The organiser's pairing of the next round, until that round is paired.
    manual: Round | None = None
    # The rounds paired by hand (no pairing system reproduces them).
    manual_rounds: frozenset[int] = frozenset()
    version: int = 0

    @property
    def settings(self) -> TournamentSettings:
        c = self.created
        assert c is not None
        return TournamentSettings(
            format="swiss" if c.format == "swiss" else "round_robin",
            rounds=c.rounds,
            fill="house_bot" if c.fill == "house_bot" else "bye",
            bye_points=parse_bye_points(c.bye_points),
            duplicate=c.duplicate,
            seed=c.seed,
        )

    @property
    def active(self) -> tuple[PlayerId, ...]:
        return tuple(p.player_id for p in self.players if p.player_id not in self.withdrawn)

    @property
    def current_round(self) -> int:
        """The round in play (paired, not closed), or 0."""
        return len(self.rounds) if len(self.rounds) > self.closed else 0

    def registration(self, player_id: PlayerId) -> Registration:
        for p in self.players:
            if p.player_id == player_id:
                return p
        raise KeyError(player_id)

    def recorded(self, game_id: str) -> bool:
        return any(r.game_id == game_id for r in self.results)


def parse_bye_points(text: str) -> ByeScore:
    return "mean" if text == "mean" else Fraction(text)


def _round_of(event: RoundPaired | ManualPairing) -> Round:
    tables = []
    for t in event.tables:
        seats = tuple(t["seats"])
        if len(seats) != 4:
            raise TournamentInconsistency("a table has four seats")
        tables.append(
            Table(
                int(t["table"]), (seats[0], seats[1], seats[2], seats[3]), tuple(t.get("house", ()))
            )
        )
    return Round(event.round, tuple(tables), tuple(event.byes))


def apply(state: TournamentState, event: TournamentEvent) -> TournamentState:
    """The state after one event (TournamentInconsistency if it cannot follow)."""
    v = state.version + 1
    if isinstance(event, TournamentCreated):
        if state.created is not None:
            raise TournamentInconsistency("tournament_created twice")
        return replace(state, created=event, version=v)
    if state.created is None:
        raise TournamentInconsistency(f"{event.TYPE} before tournament_created")
    if isinstance(event, PlayerRegistered):
        if any(p.player_id == event.player_id for p in state.players):
            raise TournamentInconsistency(f"{event.player_id} is registered already")
        reg = Registration(event.player_id, event.name, event.kind, event.spec)
        return replace(
            state,
            players=(*state.players, reg),
            field_changed_after=len(state.rounds),
            manual=None,
            version=v,
        )
    if isinstance(event, PlayerWithdrew):
        return replace(
            state,
            withdrawn=state.withdrawn | {event.player_id},
            field_changed_after=len(state.rounds),
            manual=None,
            version=v,
        )
    if isinstance(event, ManualPairing):
        if event.round != len(state.rounds) + 1 or state.finished is not None:
            raise TournamentInconsistency(f"round {event.round} paired by hand out of turn")
        return replace(state, manual=_round_of(event), version=v)
    if isinstance(event, RoundPaired):
        if event.round != len(state.rounds) + 1 or state.current_round:
            raise TournamentInconsistency(f"round {event.round} paired out of turn")
        rnd = _round_of(event)
        by_hand = state.manual is not None and state.manual == rnd
        return replace(
            state,
            rounds=(*state.rounds, rnd),
            round_games=(*state.round_games, event.tables),
            manual=None,
            manual_rounds=state.manual_rounds | {rnd.number} if by_hand else state.manual_rounds,
            # a round-robin plans the rounds after a hand-paired one again, with it as history
            field_changed_after=rnd.number if by_hand else state.field_changed_after,
            version=v,
        )
    if isinstance(event, GameRecorded):
        result = GameResult(
            game_id=event.game_id,
            round=event.round,
            seats=(event.seats[0], event.seats[1], event.seats[2], event.seats[3]),
            totals=(event.totals[0], event.totals[1], event.totals[2], event.totals[3]),
            winners=event.winners,
            points=tuple((p, Fraction(x)) for p, x in event.points),
            forfeited=event.forfeited,
            house=event.house,
            king=event.king,
        )
        return replace(state, results=(*state.results, result), version=v)
    if isinstance(event, RoundClosed):
        if event.round != state.closed + 1:
            raise TournamentInconsistency(f"round {event.round} closed out of turn")
        return replace(state, closed=event.round, version=v)
    return replace(state, finished=event, version=v)


def replay(events: Iterable[TournamentEvent]) -> TournamentState:
    state = TournamentState()
    for e in events:
        state = apply(state, e)
    return state


__all__ = [
    "GameRecorded",
    "ManualPairing",
    "PlayerRegistered",
    "PlayerWithdrew",
    "Registration",
    "RoundClosed",
    "RoundPaired",
    "TournamentCreated",
    "TournamentEvent",
    "TournamentFinished",
    "TournamentState",
    "apply",
    "from_payload",
    "replay",
    "to_payload",
]
