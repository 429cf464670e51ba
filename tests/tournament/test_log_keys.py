"""The transparency log's leaf keys for game streams: derived from each game's sealed seed,
read once per process (the log integrates a live game's events every second), and asked
again for a game whose seed is not sealed yet."""

from __future__ import annotations

from pathlib import Path

from eventstore import EventStore
from tournament.games import SEED_PREFIX, GameRepository, stream_id
from tournament.log_keys import game_leaf_keys, leaf_key


class CountingStore:
    """The store's `unseal`, counted (the only thing the leaf keys ask of the store)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.asked: list[str] = []

    def unseal(self, key: str) -> str | None:
        self.asked.append(key)
        return self.store.unseal(key)


def test_a_games_seed_is_read_once_and_a_missing_one_is_asked_again(tmp_path: Path) -> None:
    store = EventStore.open(f"sqlite:///{tmp_path / 'k.db'}")
    GameRepository(store).create("g1", ["a", "b", "c", "d"], server_seed=bytes(32))
    counting = CountingStore(store)
    keys = game_leaf_keys(counting)  # type: ignore[arg-type]
    expected = leaf_key(stream_id("g1"), bytes(32).hex())
    assert expected and keys(stream_id("g1")) == expected
    assert keys(stream_id("g1")) == expected
    assert counting.asked == [SEED_PREFIX + "g1"], "a sealed seed is read once"
    assert keys("tournament-t1") == b"" and len(counting.asked) == 1, "no seed to read"
    assert keys(stream_id("g2")) == b""  # not sealed (yet): nothing kept
    store.seal(SEED_PREFIX + "g2", bytes(range(32)).hex())
    assert keys(stream_id("g2")) == leaf_key(stream_id("g2"), bytes(range(32)).hex())
    assert counting.asked.count(SEED_PREFIX + "g2") == 2
    store.close()
