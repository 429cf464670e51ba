"""king-shuffle/1: the provably fair deal (docs/SHUFFLE.md).

The seed is an input: this module draws no randomness of its own. The service makes the seed
with the operating system's CSPRNG and keeps it secret until the game is over.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable, Sequence
from typing import Final

from domain.cards import cards_of

ALGORITHM = "king-shuffle/1"
_TWO_64 = 1 << 64
_FOUR_DRAWS: Final = struct.Struct(">4Q")  # a 32-byte block as four big-endian 64-bit draws
_FIRST_BLOCKS: Final = 13  # 52 draws: a deal takes 51 unless one is rejected


def commitment(server_seed: bytes) -> str:
    """SHA-256 of the seed, lower-case hex: published before the first deal."""
    return hashlib.sha256(server_seed).hexdigest()


# Rejection sampling's bound for each deck size: the largest multiple of n below 2^64.
_LIMITS: Final = tuple(_TWO_64 - _TWO_64 % n if n else 0 for n in range(53))


def _block(keyed: hmac.HMAC, prefix: bytes, n: int) -> tuple[int, ...]:
    """Block `n` of the stream: HMAC-SHA256 of the prefix and the counter, as four 64-bit draws."""
    block = keyed.copy()
    block.update(prefix + str(n).encode())
    return _FOUR_DRAWS.unpack(block.digest())


# The last seed keyed, and its keyed HMAC: a game's deals all draw from one seed, and keying
# (hashing the key's pads) is work each of its 20 deals did again. A one-entry memo, copied
# before each use and never updated itself, so it never changes a result. It keeps the last
# seed in this process's memory until another seed replaces it; nothing reads it but `_keyed`.
_last_keyed: tuple[bytes, hmac.HMAC] | None = None


def _keyed(server_seed: bytes) -> hmac.HMAC:
    """HMAC-SHA256 keyed with the seed (copy it to use it)."""
    global _last_keyed
    last = _last_keyed
    if last is not None and last[0] == server_seed:
        return last[1]
    keyed = hmac.new(server_seed, digestmod=hashlib.sha256)
    _last_keyed = (bytes(server_seed), keyed)
    return keyed


def shuffled_deck(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> list[int]:
    """The 52 cards in dealt order (Fisher–Yates over an HMAC-SHA256 stream, no modulo bias)."""
    keyed = _keyed(server_seed)  # the key's work done once
    prefix = f"king-shuffle/1|{game_id}|{deal}|{attempt}|{client_seed}|".encode()
    return deck_from_blocks(lambda n: _block(keyed, prefix, n))


def deck_from_blocks(block: Callable[[int], Sequence[int]]) -> list[int]:
    """Fisher–Yates from 51 down to 1 over the draws of blocks 0, 1, 2, ... in order, each draw
    at or above the largest multiple of the bound below 2^64 rejected (no modulo bias).

    The 51 draws a deal takes, and one more, are made in one go (a generator's step per draw
    cost a third of the shuffle); a rejected draw, about once in 2^53 deals, asks for more."""
    draws: list[int] = []
    for n in range(_FIRST_BLOCKS):
        draws.extend(block(n))
    at = 0
    deck = list(range(52))
    for i in range(51, 0, -1):
        bound = i + 1
        limit = _LIMITS[bound]
        while True:
            if at == len(draws):
                draws.extend(block(at // 4))
            x = draws[at]
            at += 1
            if x < limit:
                break
        j = x % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_hands(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> tuple[int, int, int, int]:
    """The four hands as masks: card k of the shuffled deck goes to seat k mod 4."""
    deck = shuffled_deck(server_seed, game_id, deal, attempt, client_seed)
    a = b = c = d = 0  # (four locals: the compiled build keeps them as machine ints)
    for k in range(0, 52, 4):
        a |= 1 << deck[k]
        b |= 1 << deck[k + 1]
        c |= 1 << deck[k + 2]
        d |= 1 << deck[k + 3]
    return a, b, c, d


def dealt_order(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> list[list[int]]:
    """The four hands as card lists in the order dealt (as the spec's test vectors show them)."""
    deck = shuffled_deck(server_seed, game_id, deal, attempt, client_seed)
    return [deck[seat::4] for seat in range(4)]


__all__ = [
    "ALGORITHM",
    "cards_of",
    "commitment",
    "deal_hands",
    "dealt_order",
    "deck_from_blocks",
    "shuffled_deck",
]
