"""`domain.fold.fold_stored` (the audit's fold of stored events, with its lane for a deal's play)
agrees with the plain fold, `from_payload` then `apply`, one event at a time: on random games
under random rule options, with strikes and substitutions in mid-deal, the same state after
every event and every cut of the stream; on damaged copies, the same first error; and the
audit built on it gives the report the plain fold's audit gives."""

from __future__ import annotations

import random
from functools import partial
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.audit import AuditFinding, AuditReport, audit_events
from domain.commands import Abandon, RecordStrike, RevealSeed, Substitute
from domain.events import (
    DealStarted,
    Event,
    MalformedEvent,
    SeedRevealed,
    from_payload,
    to_payload,
)
from domain.fold import StoredEventError, fold_stored
from domain.game import GameState, InconsistentEvent, Phase, apply, run
from domain.playout import advance, new_game
from domain.rules import Rules
from domain.shuffle import ALGORITHM, deal_hands
from domain.view import SeatView
from tests.random_rules import random_rules

PLAYERS = ("ada", "bora", "cem", "deniz")
Stored = tuple[int, str, Any]


def stored_game(rules: Rules, seed: bytes, rng: random.Random) -> list[Stored]:
    """A whole game of random legal play as the store gives it back: (version, type, JSON
    object), with now and then a strike or a substitution between two cards."""

    def policy(view: SeatView):  # type: ignore[no-untyped-def]
        return rng.choice(view.legal)

    state, events = new_game("fold", PLAYERS, seed, rules)
    while state.phase is not Phase.OVER:
        if state.phase is Phase.PLAYING and rng.random() < 0.02:
            seat = rng.randrange(4)
            commands: list[Any] = [RecordStrike(seat, "timeout")]
            if rng.random() < 0.3:  # the seat's player leaves and another takes the seat
                commands = [Abandon(seat, "left"), Substitute(seat, f"sub{state.version}")]
            for command in commands:
                state, out = run(state, command)
                assert isinstance(out, list)
                events += out
            continue
        state, out = advance(state, seed, [policy] * 4)
        events += out
    state, out = run(state, RevealSeed(seed.hex()))
    assert isinstance(out, list)
    events += out
    return [(v, e.TYPE, orjson.loads(orjson.dumps(to_payload(e)))) for v, e in enumerate(events, 1)]


def plain_fold(events: list[Stored], state: GameState | None = None) -> GameState:
    """The reference: every event decoded, then applied; the first error as fold_stored's."""
    s = state if state is not None else GameState()
    expected = s.version + 1
    for ordinal, (version, type_, payload) in enumerate(events, 1):
        if version != expected:
            raise StoredEventError(ordinal, version, type_, f"expected version {expected}")
        expected += 1
        try:
            s = apply(s, from_payload(type_, payload))
        except (MalformedEvent, InconsistentEvent) as exc:
            raise StoredEventError(ordinal, version, type_, str(exc)) from None
    return s


def outcome(fold: Any, events: list[Stored]) -> Any:
    try:
        return fold(events)
    except StoredEventError as exc:
        return ("error", exc.ordinal, exc.version, exc.type, exc.reason)


def plain_audit(game_id: str, events: list[Stored]) -> AuditReport:
    """The audit as it read before the fold had a lane: one event at a time."""
    state = GameState()
    dealt: list[tuple[int, DealStarted]] = []
    count, expected = 0, 1
    for version, type_, payload in events:
        count += 1
        if version != expected:
            finding = AuditFinding(version, type_, f"expected version {expected}")
            return AuditReport(game_id, count, False, False, 0, finding)
        expected += 1
        try:
            event: Event = from_payload(type_, payload)
            state = apply(state, event)
        except (MalformedEvent, InconsistentEvent) as exc:
            return AuditReport(
                game_id, count, False, False, 0, AuditFinding(version, type_, str(exc))
            )
        if isinstance(event, DealStarted):
            dealt.append((version, event))
        if isinstance(event, SeedRevealed) and state.shuffle == ALGORITHM:
            seed = bytes.fromhex(event.server_seed)
            for v, d in dealt:
                if deal_hands(seed, state.shuffle_id, d.deal, d.attempt, state.client_seed) != (
                    d.hands
                ):
                    reason = (
                        f"deal {d.deal} attempt {d.attempt}: the hands are not the ones "
                        "king-shuffle/1 gives for the revealed seed"
                    )
                    finding = AuditFinding(v, d.TYPE, reason)
                    return AuditReport(game_id, count, False, True, 0, finding)
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


GAMES = st.tuples(
    random_rules(king_tricks=[0, 11, 8]),
    st.binary(min_size=32, max_size=32),
    st.integers(0, 2**32 - 1),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=GAMES, cuts=st.lists(st.integers(0, 2000), max_size=12))
def test_the_same_state_after_every_event_and_every_cut(
    game: tuple[Rules, bytes, int], cuts: list[int]
) -> None:
    rules, seed, rng = game
    events = stored_game(rules, seed, random.Random(rng))
    # Event by event: each fold of one event from the state before it.
    fast, plain = GameState(), GameState()
    for event in events:
        fast, plain = fold_stored([event], fast), plain_fold([event], plain)
        assert fast == plain
    # Whole, and in runs that end anywhere (mid-trick, mid-deal): the lane's state at its end.
    assert fold_stored(events) == plain
    state, at = GameState(), 0
    for cut in [*sorted(c % (len(events) + 1) for c in cuts), len(events)]:
        state = fold_stored(events[at:cut], state)
        assert state == plain_fold(events[:cut])
        at = cut


# What a damaged stored payload may hold instead of a field's value.
ODD_VALUES = st.one_of(
    st.booleans(),
    st.integers(-2, 60),
    st.sampled_from(["2C", "AS", "KH", "QS", "7S", "as", "10S", ""]),
    st.none(),
    st.lists(st.sampled_from(["2C", "AS", "KH", "QS"]), max_size=5),
    st.dictionaries(st.just("x"), st.integers(0, 3), max_size=1),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=GAMES,
    where=st.floats(0, 1, exclude_max=True),
    how=st.sampled_from(["set", "drop_key", "extra_key", "not_object", "type", "version"]),
    value=ODD_VALUES,
    pick=st.integers(0, 2**16),
)
def test_a_damaged_stream_gets_the_same_first_error_and_audit(
    game: tuple[Rules, bytes, int], where: float, how: str, value: Any, pick: int
) -> None:
    rules, seed, rng = game
    events = stored_game(rules, seed, random.Random(rng))
    # Most damage is aimed at the play of a deal, the lane's part.
    lane = [i for i, e in enumerate(events) if e[1] in ("card_played", "trick_taken")]
    i = lane[int(where * len(lane))] if pick % 4 else int(where * len(events))
    version, type_, payload = events[i]
    keys = sorted(payload) if isinstance(payload, dict) else []
    key = keys[pick % len(keys)] if keys else "deal"
    damaged: Any = dict(payload)
    if how == "set":
        damaged[key] = value
    elif how == "drop_key":
        damaged.pop(key, None)
    elif how == "extra_key":
        damaged["extra"] = value
    elif how == "not_object":
        damaged = value
    elif how == "type":
        type_ = "trick_taken" if type_ == "card_played" else "card_played"
    else:
        version += 1 + pick % 3
    events[i] = (version, type_, damaged)
    assert outcome(fold_stored, events) == outcome(plain_fold, events)
    assert audit_events("fold", events) == plain_audit("fold", events)


def damages(payload: Any) -> list[Any]:
    """Near misses of a stored payload: each field off by one, of the wrong type, missing, or
    another card; an extra field; not an object at all."""
    if not isinstance(payload, dict):
        return [None]
    out: list[Any] = [None, [payload], {**payload, "extra": 1}]
    for key, value in payload.items():
        out.append({k: v for k, v in payload.items() if k != key})
        if type(value) is int:
            odd: list[Any] = [value + 1, value - 1, (value + 1) % 4, (value + 3) % 4]
            odd += [value == 1, float(value), str(value), None]
        elif type(value) is str:
            odd = ["2C", "AS", "QH", "KH", value.lower(), f" {value}", 7]
        elif type(value) is list:
            odd = [
                value[::-1],
                value[:-1],
                [*value, value[0]] if value else [1],
                "".join(map(str, value)),
            ]
        else:
            odd = [None]
        out += [{**payload, key: v} for v in odd if v != value or type(v) is not type(value)]
    return out


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=GAMES)
def test_every_near_miss_of_every_card_and_trick_is_judged_alike(
    game: tuple[Rules, bytes, int],
) -> None:
    rules, seed, rng = game
    events = stored_game(rules, seed, random.Random(rng))
    before = GameState()
    for version, type_, payload in events:
        if type_ in ("card_played", "trick_taken"):
            for odd in damages(payload):
                damaged = [(version, type_, odd)]
                assert outcome(partial(fold_stored, state=before), damaged) == outcome(
                    partial(plain_fold, state=before), damaged
                ), (type_, payload, odd)
        before = plain_fold([(version, type_, payload)], before)


@pytest.mark.parametrize("seat", [0, 3])
def test_a_dealt_hand_not_the_seeds_is_named_as_before(seat: int) -> None:
    events = stored_game(Rules(mode="short12"), bytes(range(32)), random.Random(seat))
    first = next(i for i, e in enumerate(events) if e[1] == "deal_started")
    version, type_, payload = events[first]
    hands = [list(h) for h in payload["hands"]]
    hands[seat][0], hands[(seat + 1) % 4][0] = hands[(seat + 1) % 4][0], hands[seat][0]
    events[first] = (version, type_, {**payload, "hands": hands})
    report = audit_events("fold", events)
    assert report == plain_audit("fold", events)
    # (the swapped cards may make a later card illegal: then that is the first finding)
    assert report.finding is not None
