"""Sealed values: a secret kept outside the log, never replaced once sealed."""

from __future__ import annotations

import pytest

from eventstore import EventStore, InvalidNameError, SealedValueConflict


def test_a_sealed_value_reads_back_and_stays_out_of_the_feed(store: EventStore) -> None:
    store.seal("game-seed:g1", "00ff")
    assert store.unseal("game-seed:g1") == "00ff"
    assert store.unseal("game-seed:unknown") is None
    assert store.read_all() == []


def test_sealing_the_same_value_again_is_harmless(store: EventStore) -> None:
    store.seal("k", "v")
    store.seal("k", "v")
    assert store.unseal("k") == "v"


def test_a_sealed_value_is_never_replaced(store: EventStore) -> None:
    store.seal("k", "v")
    with pytest.raises(SealedValueConflict):
        store.seal("k", "other")
    assert store.unseal("k") == "v"


def test_bad_keys_are_refused(store: EventStore) -> None:
    with pytest.raises(InvalidNameError):
        store.seal("", "v")
    with pytest.raises(InvalidNameError):
        store.unseal("x" * 301)


def test_stream_ids_lists_streams_by_type(store: EventStore) -> None:
    from eventstore import NO_STREAM, NewEvent

    store.append("game-1", [NewEvent("x", {})], NO_STREAM, stream_type="game")
    store.append("tournament-1", [NewEvent("x", {})], NO_STREAM, stream_type="tournament")
    store.append("game-2", [NewEvent("x", {})], NO_STREAM, stream_type="game")
    assert store.stream_ids("game") == ["game-1", "game-2"]
    assert sorted(store.stream_ids()) == ["game-1", "game-2", "tournament-1"]
