"""Running a tournament: pair a round, create its games, play them, record results, close it.

Every step is decided from the tournament's stream and appended at the version it was decided
on, so a step is taken exactly once: a second runner (a double fire, a restart, another
process) finds it taken — its append conflicts, it reloads and moves on. Games are created
idempotently under ids fixed by the pairing, and a game in progress resumes from its own stream.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from domain.commands import Abandon, Command, RecordStrike, Substitute
from domain.game import GameState, Phase
from domain.playout import Policy
from domain.rules import Rules
from domain.view import seat_view
from eventstore import NO_STREAM, EventStore, NewEvent, VersionConflict
from tournament.events import (
    GameRecorded,
    PlayerRegistered,
    PlayerWithdrew,
    Registration,
    RoundClosed,
    RoundPaired,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    apply,
    from_payload,
    to_payload,
)
from tournament.games import GameExists, GameRepository, LruStates
from tournament.model import HOUSE_BOT_PREFIX
from tournament.pairing.duplicate import deal_plans, derive_server_seed
from tournament.pairing.round_robin import default_rounds
from tournament.planning import current_standings, is_last_round, next_round
from tournament.strategies import make_strategy

STREAM_PREFIX = "tournament-"
SECRET_PREFIX = "tournament-secret:"
MAX_STRIKES = 3


class TournamentNotFound(LookupError):
    """No stream for this tournament id."""


class TournamentExists(ValueError):
    """A tournament with this id was created already."""


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A player to register: `kind` builtin (spec: a strategy such as `heuristic`), bot or human."""

    player_id: str
    kind: str = "builtin"
    spec: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """What one call to `step` did: paired, created, played, recorded, closed, finished, done."""

    kind: str
    round: int = 0
    game_id: str = ""
    detail: str = ""


# A policy factory gives the player in a seat of a game: the registration (None for a house
# bot), the game id, the seat, and the tournament's house strategy.
PolicyFactory = Callable[[Registration | None, str, int, str], Policy]


@dataclass(frozen=True, slots=True)
class GameSpec:
    """A game a round asks for: the pairing's seats (tournament player ids, house-bot seats
    listed in `house`), the rules, and the deal seed and shuffle id derived for it."""

    tournament_id: str
    round: int
    game_id: str
    seats: tuple[str, ...]
    house: tuple[int, ...]
    rules: Rules
    server_seed: bytes
    shuffle_id: str
    state: TournamentState


# A game factory creates the game of a table (raising GameExists if it exists already, which
# the runner takes as "created by someone else"). The default stores it with GameRepository;
# the HTTP service creates it through its GameService so its driver plays it.
GameFactory = Callable[[GameSpec], None]


def stream_id(tournament_id: str) -> str:
    return STREAM_PREFIX + tournament_id


def is_secret(text: str) -> bool:
    """64 lower-case hexadecimal digits: the form of a tournament's deal secret."""
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def seed_for(*parts: object) -> int:
    """A strategy's seed from the tournament, game and seat: reproducible, distinct per seat."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def builtin_policies(reg: Registration | None, game_id: str, seat: int, house: str) -> Policy:
    """Built-in strategies for registered builtin players and for house bots."""
    spec = house if reg is None else reg.spec
    if reg is not None and reg.kind != "builtin":
        raise ValueError(f"player {reg.player_id} ({reg.kind}) needs a transport to play")
    return make_strategy(spec, seed_for(game_id, seat, spec))


def parse_players(text: str) -> list[PlayerSpec]:
    """`random*4,heuristic*4` or `alice=heuristic,bob=http://…` → player specs.

    `NAME*N` registers N builtin players NAME-1..NAME-N; `ID=SPEC` one player, a bot if SPEC is
    an http(s) URL, else a builtin strategy.
    """
    out: list[PlayerSpec] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" in part:
            pid, _, spec = part.partition("=")
            kind = "bot" if spec.startswith(("http://", "https://")) else "builtin"
            out.append(PlayerSpec(pid.strip(), kind, spec.strip(), pid.strip()))
            continue
        name, star, count = part.partition("*")
        n = int(count) if star else 1
        if n < 1:
            raise ValueError(f"{part!r}: the count must be at least 1")
        for i in range(1, n + 1):
            out.append(PlayerSpec(f"{name}-{i}", "builtin", name, f"{name}-{i}"))
    ids = [p.player_id for p in out]
    if len(set(ids)) != len(ids):
        raise ValueError("a player id is given twice")
    return out


class TournamentRunner:
    """Runs tournaments stored in `store`; games go through a GameRepository on the same store."""

    def __init__(
        self,
        store: EventStore,
        games: GameRepository | None = None,
        policies: PolicyFactory = builtin_policies,
        drive_games: bool = True,
        game_factory: GameFactory | None = None,
    ) -> None:
        """drive_games=False leaves playing to someone else (the service's game driver, which
        handles bots over HTTP and humans): a step then only waits for the game to end.
        game_factory: how a table's game is created (default: `GameRepository.create`)."""
        self.store = store
        self.games = games or GameRepository(store)
        self.states = LruStates[TournamentState](64)  # (see `load`)
        self.policies = policies
        self.drive_games = drive_games
        self.game_factory = game_factory or self._store_game

    def _store_game(self, spec: GameSpec) -> None:
        self.games.create(
            spec.game_id,
            spec.seats,
            spec.rules,
            server_seed=spec.server_seed,
            shuffle_id=spec.shuffle_id,
        )

    # --- the stream --------------------------------------------------------------------------

    def load(self, tournament_id: str) -> TournamentState:
        """The tournament's current state: the state kept from the last load, brought up to
        date with the events appended since (a scheduler loads each tournament at every tick,
        and a stream only grows, so only its new events are read and folded)."""
        kept = self.states.get(tournament_id)
        state = kept if kept is not None else TournamentState()
        recorded = self.store.read_stream(stream_id(tournament_id), from_version=state.version + 1)
        if not recorded and state.version == 0:
            raise TournamentNotFound(f"no tournament {tournament_id!r}")
        for r in recorded:
            state = apply(state, from_payload(r.type, r.payload))
        if recorded:
            self.states.put(tournament_id, state)
        return state

    def tournament_ids(self) -> list[str]:
        return [s[len(STREAM_PREFIX) :] for s in self.store.stream_ids("tournament")]

    def _append(
        self, tournament_id: str, state: TournamentState, events: Sequence[TournamentEvent]
    ) -> bool:
        """Append at the state's version; False when someone else appended first."""
        try:
            self.store.append(
                stream_id(tournament_id),
                [NewEvent(e.TYPE, to_payload(e)) for e in events],
                state.version if state.version else NO_STREAM,
                stream_type="tournament",
            )
        except VersionConflict:
            return False
        return True

    # --- commands ----------------------------------------------------------------------------

    def create(
        self,
        tournament_id: str,
        players: Sequence[PlayerSpec],
        *,
        name: str = "",
        format: str = "swiss",
        rounds: int | None = None,
        rules: Rules | None = None,
        fill: str = "bye",
        bye_points: str = "0",
        duplicate: bool = False,
        seed: str = "",
        house_strategy: str = "heuristic",
        secret: str = "",
    ) -> TournamentState:
        """Create a tournament with its players; its secret (for deal seeds) is sealed apart.

        `secret` (64 hex digits) replaces the random one, to play a tournament again with the
        same deals; whoever knows it knows every deal before it is played.
        """
        if format not in ("swiss", "round_robin"):
            raise ValueError("format is swiss or round_robin")
        if fill not in ("bye", "house_bot"):
            raise ValueError("fill is bye or house_bot")
        if bye_points != "mean":
            try:  # refuse a bye score that is not a number now
                Fraction(bye_points)
            except (ValueError, ZeroDivisionError):
                raise ValueError(
                    f"bye_points {bye_points!r} is not a number (e.g. 1, 1/2)"
                ) from None
        make_strategy(house_strategy, 0)  # refuse an unknown house strategy now
        for p in players:
            if p.kind == "builtin":
                make_strategy(p.spec, 0)
        if secret and not is_secret(secret):
            raise ValueError("secret is 64 hexadecimal digits")
        if len(players) < 2 and rounds is None:
            raise ValueError(
                "a tournament needs at least two players (or a number of rounds, to open it "
                "for registration)"
            )
        if rounds is None:
            rounds = default_rounds(len(players), "bye" if fill == "bye" else "house_bot")
            rounds = rounds if format == "round_robin" else max(1, min(rounds, 5))
        if self.store.stream_info(stream_id(tournament_id)) is not None:
            raise TournamentExists(f"tournament {tournament_id!r} exists already")
        # A create that crashed after sealing left its secret: keep it (a sealed value is
        # never replaced), unless the caller asked for another one.
        kept = self.store.unseal(SECRET_PREFIX + tournament_id)
        if kept is None:
            self.store.seal(SECRET_PREFIX + tournament_id, secret or secrets.token_bytes(32).hex())
        elif secret and secret != kept:
            raise TournamentExists(
                f"tournament id {tournament_id!r} was sealed with another secret"
            )
        created = TournamentCreated(
            tournament_id=tournament_id,
            name=name or tournament_id,
            format=format,
            rounds=rounds,
            fill=fill,
            bye_points=bye_points,
            duplicate=duplicate,
            seed=seed or secrets.token_hex(8),
            rules=(rules or Rules()).changes(),
            house_strategy=house_strategy,
        )
        events: list[TournamentEvent] = [created]
        events += [
            PlayerRegistered(p.player_id, p.name or p.player_id, p.kind, p.spec) for p in players
        ]
        if not self._append(tournament_id, TournamentState(), events):
            raise TournamentExists(f"tournament {tournament_id!r} exists already")
        return self.load(tournament_id)

    def register(self, tournament_id: str, player: PlayerSpec) -> TournamentState:
        """A late join: the player is paired from the next round on."""
        while True:
            state = self.load(tournament_id)
            event = PlayerRegistered(
                player.player_id, player.name or player.player_id, player.kind, player.spec
            )
            apply(state, event)  # refuses a second registration
            if self._append(tournament_id, state, [event]):
                return self.load(tournament_id)

    def withdraw(self, tournament_id: str, player_id: str, reason: str = "") -> TournamentState:
        """The player is not paired from the next round on (a game in play is finished)."""
        while True:
            state = self.load(tournament_id)
            state.registration(player_id)
            if player_id in state.withdrawn:
                return state
            if self._append(tournament_id, state, [PlayerWithdrew(player_id, reason)]):
                return self.load(tournament_id)

    # --- running -----------------------------------------------------------------------------

    def run(
        self, tournament_id: str, on_step: Callable[[Step], None] | None = None
    ) -> TournamentState:
        """Take steps until the tournament is finished (or, when others drive the games,
        until it waits for one); returns its state."""
        while True:
            step = self.step(tournament_id)
            if on_step is not None:
                on_step(step)
            if step.kind in ("done", "waiting"):
                return self.load(tournament_id)

    def step(self, tournament_id: str) -> Step:
        """Do the next piece of work (idempotent: safe to call from several runners)."""
        state = self.load(tournament_id)
        if state.finished is not None:
            return Step("done")
        number = state.current_round
        if not number:
            if is_last_round(state):
                top = current_standings(state).rows
                best = tuple(r.player for r in top if r.rank == 1)
                self._append(tournament_id, state, [TournamentFinished(best)])
                return Step("finished", len(state.rounds))
            return self._pair(tournament_id, state)
        tables = state.round_games[number - 1]
        for table in tables:
            game_id = table["game_id"]
            if not self.games.exists(game_id):
                self._create_game(tournament_id, state, table)
                return Step("created", number, game_id)
            game = self.games.load(game_id)
            if game.phase is not Phase.OVER:
                if not self.drive_games:
                    return Step("waiting", number, game_id)
                self.play_game(state, table)
                return Step("played", number, game_id)
            if not state.recorded(game_id):
                self._append(tournament_id, state, [_recorded(number, table, game)])
                return Step("recorded", number, game_id)
        # Every game of the round is over: now their seeds may be public (duplicate tables
        # share one, held back until the last table ended).
        for table in tables:
            if self.games.load(table["game_id"]).seed is None:
                self.games.reveal_seed(table["game_id"])
                return Step("revealed", number, table["game_id"])
        self._append(tournament_id, state, [RoundClosed(number)])
        return Step("closed", number)

    def _pair(self, tournament_id: str, state: TournamentState) -> Step:
        rnd = next_round(state)
        plans = {
            p.table: p
            for p in deal_plans(rnd, tournament_id, state.settings.seed, state.settings.duplicate)
        }
        tables = tuple(
            {
                "table": t.number,
                "game_id": plans[t.number].game_id,
                "shuffle_id": plans[t.number].shuffle_game_id,
                "seats": list(t.seats),
                "house": list(t.house),
            }
            for t in rnd.tables
        )
        self._append(tournament_id, state, [RoundPaired(rnd.number, tables, rnd.byes)])
        return Step("paired", rnd.number, detail=f"{len(tables)} tables, {len(rnd.byes)} byes")

    def _create_game(
        self, tournament_id: str, state: TournamentState, table: dict[str, Any]
    ) -> None:
        secret = self.store.unseal(SECRET_PREFIX + tournament_id)
        assert secret is not None, "a tournament's secret is sealed when it is created"
        rnd = len(state.rounds)
        plan = next(
            p
            for p in deal_plans(
                state.rounds[rnd - 1], tournament_id, state.settings.seed, state.settings.duplicate
            )
            if p.game_id == table["game_id"]
        )
        created = state.created
        assert created is not None
        # Another runner may have created it first: the same game, the same seed.
        spec = GameSpec(
            tournament_id=tournament_id,
            round=rnd,
            game_id=table["game_id"],
            seats=tuple(table["seats"]),
            house=tuple(table.get("house", ())),
            rules=Rules.from_dict(created.rules),
            server_seed=derive_server_seed(bytes.fromhex(secret), plan),
            shuffle_id=plan.shuffle_game_id,
            state=state,
        )
        with contextlib.suppress(GameExists):
            self.game_factory(spec)

    def play_game(self, state: TournamentState, table: dict[str, Any]) -> GameState:
        """Play a game of the round to its end with each seat's policy.

        A policy that fails or answers illegally gets a strike and the first legal action is
        played for it; the third strike forfeits the seat (R-ABANDON) and the house strategy
        finishes the game in it (R-SUBSTITUTE).
        """
        created = state.created
        assert created is not None
        game_id = table["game_id"]
        house_seats = set(table.get("house", ()))
        policies: dict[int, Policy] = {}

        def policy_of(seat: int, game: GameState) -> Policy:
            if seat not in policies:
                substituted = len(game.occupants[seat]) > 1
                reg = (
                    None
                    if seat in house_seats or substituted
                    else state.registration(table["seats"][seat])
                )
                policies[seat] = self.policies(reg, game_id, seat, created.house_strategy)
            return policies[seat]

        game = self.games.load(game_id)
        while game.phase is not Phase.OVER:
            seat = game.to_move
            assert seat is not None
            try:
                action = policy_of(seat, game)(seat_view(game, seat))
                outcome = self.games.execute(game_id, action.command(seat))
            except Exception as exc:  # a failing bot must not stop the tournament
                reason = f"{type(exc).__name__}: {exc}"
            else:
                if outcome.violation is None or outcome.state.version != game.version:
                    # Played, or another runner moved first (the refusal is about a stale
                    # state, not the bot): carry on from the latest state.
                    game = outcome.state
                    continue
                reason = outcome.violation.code
            game = self._strike(game_id, seat, created.house_strategy, reason, policies)
        return game

    def _strike(
        self, game_id: str, seat: int, house: str, reason: str, policies: dict[int, Policy]
    ) -> GameState:
        """The strike, the forfeit at the limit, and the first legal move for the seat: one
        append, so the stream never holds a strike without what follows it."""
        game = self.games.load(game_id)
        if game.to_move != seat:  # another runner moved meanwhile
            return game
        commands: list[Command] = [RecordStrike(seat, reason[:200])]
        if game.strikes[seat] + 1 >= MAX_STRIKES:
            commands += [Abandon(seat, "too many strikes"), Substitute(seat, f"house:{house}")]
            policies.pop(seat, None)
        commands.append(seat_view(game, seat).legal[0].command(seat))
        outcome = self.games.execute(game_id, commands, at_version=game.version)
        return self.games.load(game_id) if outcome.stale else outcome.state


def _recorded(round_no: int, table: dict[str, Any], game: GameState) -> GameRecorded:
    result = game.result
    assert result is not None
    seats = tuple(table["seats"])

    def who(person: str, seat: int) -> str:
        # A seat's first occupant is the paired player, whatever the game calls it (the
        # service seats `house:<strategy>` for a builtin player); substitutes keep their name.
        return seats[seat] if game.occupants[seat][0] == person else person

    return GameRecorded(
        round=round_no,
        game_id=table["game_id"],
        seats=seats,
        totals=result.totals,
        winners=result.winners,
        points=tuple((who(r.player, r.seat), str(r.points)) for r in result.results),
        forfeited=tuple(who(p, s) for p, s in game.abandoned),
        house=tuple(table.get("house", ())),
        king=result.king,
    )


__all__ = [
    "HOUSE_BOT_PREFIX",
    "GameFactory",
    "GameSpec",
    "PlayerSpec",
    "Step",
    "TournamentExists",
    "TournamentNotFound",
    "TournamentRunner",
    "parse_players",
]
