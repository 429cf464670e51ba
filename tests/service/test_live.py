"""The live cache (play.live) and the clock (play.clock) on their own, with real games on a
SQLite store and a fake clock reader: the tail, its gaps, the feed's events, wake-ups, each
event encoded once, and deadlines taken from the events' recorded times."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from domain.game import GameState, Phase, apply
from domain.view import seat_view
from eventstore import EventStore, RecordedEvent
from services.play.clock import GameClock
from services.play.live import TAIL, LiveGames, messages
from tournament.games import GameRepository, stream_id, to_domain_event


def _played(tmp_path: Path, moves: int) -> tuple[EventStore, list[RecordedEvent]]:
    """A game with `moves` random legal actions, written without any live cache."""
    store = EventStore.open(f"sqlite:///{tmp_path / 'live.db'}")
    repo = GameRepository(store)
    state = repo.create("g1", ["a", "b", "c", "d"])
    rng = random.Random(7)
    for _ in range(moves):
        seat = state.to_move
        assert seat is not None and state.phase is not Phase.OVER
        state = repo.execute("g1", rng.choice(seat_view(state, seat).legal).command(seat)).state
    return store, store.read_stream(stream_id("g1"))


def test_the_tail_serves_what_it_holds_and_nothing_it_does_not(tmp_path: Path) -> None:
    store, records = _played(tmp_path, 40)
    final = GameRepository(store).load("g1")
    live = LiveGames()
    cut = len(records) - 30
    live.record("g1", records[cut:], final)  # the last 30 events, appended here
    assert live.state("g1") == final and live.version("g1") == final.version
    held = live.since("g1", cut + 5)
    assert held is not None
    sent, at = held
    assert [m.version for m in sent] == [r.version for r in records[cut + 5 :]]
    assert at == final
    assert live.since("g1", final.version) == ([], final)
    assert live.since("g1", cut - 3) is None, "the tail does not reach back that far"
    # Someone else wrote further: the cache is behind, and says so instead of serving.
    live.told("g1", final.version + 2)
    assert live.state("g1") is None and live.since("g1", cut + 5) is None
    store.close()


def test_a_gap_starts_the_tail_afresh_and_the_tail_is_bounded(tmp_path: Path) -> None:
    store, records = _played(tmp_path, 260)
    assert len(records) > TAIL
    final = GameRepository(store).load("g1")
    live = LiveGames()
    live.record("g1", records[:10], final)  # a state ahead of its messages: not served
    assert live.since("g1", 0) is None
    live.record("g1", records[-5:], final)  # does not follow on: the tail starts again
    held = live.since("g1", records[-6].version)
    assert held is not None and [m.version for m in held[0]] == [r.version for r in records[-5:]]
    live.forget("g1")
    live.record("g1", records, final)
    held = live.since("g1", records[-TAIL].version - 1)
    assert held is not None and len(held[0]) == TAIL
    assert live.since("g1", records[-TAIL].version - 2) is None
    store.close()


def test_each_event_is_encoded_once_per_audience_and_format(tmp_path: Path) -> None:
    store, records = _played(tmp_path, 3)
    final = GameRepository(store).load("g1")
    shown = messages("g1", records, final)
    dealt = next(m for m in shown if m.type == "deal_started")
    public = dealt.encoded(None, "ndjson")
    assert dealt.encoded(None, "ndjson") is public
    hands = {dealt.encoded(s, "ndjson") for s in range(4)}
    assert len(hands) == 4 and public not in hands
    for s in range(4):
        assert records[1].payload["hands"][s][0].encode() in dealt.encoded(s, "ndjson")
    played = next(m for m in shown if m.type == "card_played")
    assert played.encoded(0, "sse") is played.encoded(3, "sse") is played.encoded(None, "sse")
    assert played.encoded(0, "sse").startswith(f"id: {played.version}\n".encode())
    store.close()


def test_the_feed_carries_the_state_forward_only_when_its_events_follow_on(
    tmp_path: Path,
) -> None:
    store, records = _played(tmp_path, 20)
    repo_live = LiveGames()
    repo = GameRepository(store, repo_live)
    cut = len(records) - 6
    at_cut = GameRepository(store).load("g1")  # final; the cache starts at `cut` below

    state = GameState()
    for r in records[:cut]:
        state = apply(state, to_domain_event(r))
    repo_live.record("g1", records[:cut], state)
    repo_live.absorb("g1", records[cut + 2 :])  # a gap: only the version is noted
    assert repo_live.version("g1") == records[-1].version
    assert repo_live.state("g1") is None
    repo_live.absorb("g1", records[cut:])  # follows on: applied, and served
    assert repo_live.state("g1") == at_cut
    assert repo.load("g1") == at_cut
    held = repo_live.since("g1", cut)
    assert held is not None and [m.version for m in held[0]] == [r.version for r in records[cut:]]
    store.close()


def test_waiters_wake_when_the_game_moves_and_time_out_when_it_does_not() -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        live = LiveGames()
        quiet = await live.wait("g", 0, 0.01)
        waiting = asyncio.ensure_future(live.wait("g", 0, 5))
        await asyncio.sleep(0)
        live.told("g", 3)
        woke = await asyncio.wait_for(waiting, 1)
        already = await live.wait("g", 2, 5)  # known past 2: no wait at all
        return quiet, woke, already

    assert asyncio.run(scenario()) == (False, True, True)


def test_the_clock_runs_from_the_turns_recorded_time(tmp_path: Path) -> None:
    store, records = _played(tmp_path, 5)
    final = GameRepository(store).load("g1")
    live = LiveGames()
    reads: list[tuple[str, int]] = []

    def read_time(game_id: str, version: int) -> float | None:
        reads.append((game_id, version))
        return 1000.0

    clock = GameClock(live, lambda _: 30.0, read_time)
    # Taken over: nothing in the tail, so the event's time is read once, then kept.
    turn = asyncio.run(clock.turn_for("g1", final))
    assert turn is not None and turn.deadline == 1030.0 and turn.seat == final.to_move
    assert asyncio.run(clock.turn_for("g1", final)) == turn and len(reads) == 1
    # Written here: the tail has the time, nothing is read.
    clock.forget("g1")
    live.record("g1", records, final)
    turn = asyncio.run(clock.turn_for("g1", final))
    assert turn is not None
    assert turn.deadline == pytest.approx(records[-1].recorded_at.timestamp() + 30.0)
    assert len(reads) == 1
    store.close()


def test_events_overlapping_the_tail_extend_it_without_losing_what_it_held(
    tmp_path: Path,
) -> None:
    """A load read in a worker thread may bring events the feed has brought meanwhile: the
    overlap is skipped, not taken for a gap."""
    store, records = _played(tmp_path, 30)
    final = GameRepository(store).load("g1")
    live = LiveGames()
    live.record("g1", records, final)
    live.record("g1", records[-8:], final)  # the same events again
    held = live.since("g1", records[5].version)
    assert held is not None
    assert [m.version for m in held[0]] == [r.version for r in records[6:]]
    store.close()


def test_news_of_a_version_already_known_wakes_nobody() -> None:
    """The feed brings back this process's own appends: that echo must not wake the game's
    streams and driver (each would look again for nothing)."""

    async def scenario() -> tuple[bool, bool]:
        live = LiveGames()
        live.told("g", 0)
        await live.wait("g", 0, 0.001)  # the game is held from now on
        live.told("g", 5)
        waiting = asyncio.ensure_future(live.wait("g", 5, 0.2))
        await asyncio.sleep(0)
        live.told("g", 5)  # the echo
        live.told("g", 3)  # older news still
        await asyncio.sleep(0.05)
        echo_woke = waiting.done()
        live.told("g", 6)
        woke = await asyncio.wait_for(waiting, 1)
        return echo_woke, woke

    assert asyncio.run(scenario()) == (False, True)


def test_the_echo_of_an_append_whose_state_is_kept_already_fills_the_tail(
    tmp_path: Path,
) -> None:
    """The repository keeps an append's state from its worker thread before the loop records
    the append; the feed's echo may come in between. It fills the tail then, so the streams it
    wakes resume from the tail instead of reading the store (that read was two statements per
    action), and the loop's own record afterwards adds nothing twice."""
    store, records = _played(tmp_path, 20)

    cut = len(records) - 4
    state = GameState()
    for r in records[:cut]:
        state = apply(state, to_domain_event(r))
    final = GameRepository(store).load("g1")
    live = LiveGames()
    live.record("g1", records[:cut], state)
    live.put("g1", final)  # the worker thread's state, ahead of the tail
    assert live.since("g1", cut) is None, "a state ahead of its tail is not served"
    live.absorb("g1", records[cut:])  # the echo of that append
    held = live.since("g1", cut)
    assert held is not None and held[1] == final
    assert [m.version for m in held[0]] == [r.version for r in records[cut:]]
    live.record("g1", records[cut:], final)  # the loop records its append: nothing doubles
    again = live.since("g1", 0)
    assert again is not None
    assert [m.version for m in again[0]] == [r.version for r in records]
    assert live.recorded_at("g1", final.version) == records[-1].recorded_at.timestamp()
    store.close()


def test_a_turn_waiter_wakes_for_its_seats_turn_the_end_or_news_it_cannot_judge(
    tmp_path: Path,
) -> None:
    """A turns-only stream waits for its seat: another seat's move does not wake it, its own
    turn does, and so does a version this process holds no state for (it cannot tell whose
    turn that is) or the game being dropped from the cache."""
    store, records = _played(tmp_path, 12)
    store.close()
    states, state = [], GameState()
    for r in records:
        state = apply(state, to_domain_event(r))
        states.append(state)
    # the positions where the game waits for one seat, and one where it waits for another
    at = next(i for i, s in enumerate(states) if s.to_move is not None and i > 2)
    seat = states[at].to_move
    other = next(i for i, s in enumerate(states) if i > at and s.to_move not in (None, seat))
    assert seat is not None

    async def scenario() -> list[bool]:
        live = LiveGames()
        live.record("g1", records[: other + 1], states[other])  # waits for another seat
        mine = asyncio.ensure_future(live.wait("g1", states[other].version, 5, turn_of=seat))
        anyone = asyncio.ensure_future(live.wait("g1", states[other].version, 5))
        await asyncio.sleep(0)
        following = other + 1
        while states[following].to_move == seat:
            following += 1  # a later position that still waits for someone else
        while states[following].to_move in (None, seat):
            following += 1
        live.record("g1", records[other + 1 : following + 1], states[following])
        await asyncio.sleep(0.02)
        woken = [anyone.done(), mine.done()]
        turn = next(i for i in range(following + 1, len(states)) if states[i].to_move == seat)
        live.record("g1", records[following + 1 : turn + 1], states[turn])
        woken.append(await asyncio.wait_for(mine, 1))
        # news of a version with no state held here: whose turn it is cannot be told
        blind = asyncio.ensure_future(live.wait("g1", states[turn].version, 5, turn_of=seat))
        await asyncio.sleep(0)
        live.told("g1", states[turn].version + 1)
        woken.append(await asyncio.wait_for(blind, 1))
        dropped = asyncio.ensure_future(live.wait("g1", 10**6, 5, turn_of=seat))
        await asyncio.sleep(0)
        live.forget("g1")
        await asyncio.wait_for(dropped, 1)
        woken.append(dropped.done())
        return woken

    assert asyncio.run(scenario()) == [True, False, True, True, True]
