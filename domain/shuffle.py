"""king-shuffle/1: the provably fair deal (docs/SHUFFLE.md).

The seed is an input: this module draws no randomness of its own. The service makes the seed
with the operating system's CSPRNG and keeps it secret until the game is over.
"""

from __future__ import annotations

import hashlib
import hmac

from domain.cards import cards_of

ALGORITHM = "king-shuffle/1"
_TWO_64 = 1 << 64


def commitment(server_seed: bytes) -> str:
    """SHA-256 of the seed, lower-case hex: published before the first deal."""
    return hashlib.sha256(server_seed).hexdigest()


def _draws(server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str):  # type: ignore[no-untyped-def]
    prefix = f"king-shuffle/1|{game_id}|{deal}|{attempt}|{client_seed}|"
    n = 0
    while True:
        block = hmac.new(server_seed, (prefix + str(n)).encode("utf-8"), hashlib.sha256).digest()
        for i in range(0, 32, 8):
            yield int.from_bytes(block[i : i + 8], "big")
        n += 1


def shuffled_deck(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> list[int]:
    """The 52 cards in dealt order (Fisher–Yates over an HMAC-SHA256 stream, no modulo bias)."""
    deck = list(range(52))
    draws = _draws(server_seed, game_id, deal, attempt, client_seed)
    for i in range(51, 0, -1):
        bound = i + 1
        limit = _TWO_64 - (_TWO_64 % bound)
        x = next(draws)
        while x >= limit:
            x = next(draws)
        j = x % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_hands(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> tuple[int, int, int, int]:
    """The four hands as masks: card k of the shuffled deck goes to seat k mod 4."""
    hands = [0, 0, 0, 0]
    for k, c in enumerate(shuffled_deck(server_seed, game_id, deal, attempt, client_seed)):
        hands[k % 4] |= 1 << c
    return hands[0], hands[1], hands[2], hands[3]


def dealt_order(
    server_seed: bytes, game_id: str, deal: int, attempt: int, client_seed: str = ""
) -> list[list[int]]:
    """The four hands as card lists in the order dealt (as the spec's test vectors show them)."""
    deck = shuffled_deck(server_seed, game_id, deal, attempt, client_seed)
    return [deck[seat::4] for seat in range(4)]


__all__ = ["ALGORITHM", "cards_of", "commitment", "deal_hands", "dealt_order", "shuffled_deck"]
