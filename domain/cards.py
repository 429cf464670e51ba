"""Cards, suits and hands.

A card is an int 0..51 in the canonical deck order of king-shuffle/1: suit-major in the order
S H D C, rank-minor from 2 to A, so ``2S`` is 0 and ``AC`` is 51. A hand or any set of cards is a
52-bit mask (bit ``c`` set when card ``c`` is in it): the play loop works on these masks only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

SUITS = "SHDC"
RANKS = "23456789TJQKA"
SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
SUIT_NAMES_SINGULAR = ("spade", "heart", "diamond", "club")
SUIT_SYMBOLS = ("♠", "♥", "♦", "♣")

RANK_TEN, RANK_JACK, RANK_QUEEN, RANK_KING, RANK_ACE = 8, 9, 10, 11, 12

FULL_SUIT = (1 << 13) - 1
SUIT_MASKS: tuple[int, int, int, int] = (
    FULL_SUIT,
    FULL_SUIT << 13,
    FULL_SUIT << 26,
    FULL_SUIT << 39,
)
FULL_DECK = (1 << 52) - 1


class UnknownCard(ValueError):
    """A card name that is not rank 2-9/T/J/Q/K/A followed by suit S/H/D/C."""


def card(rank: int, suit: int) -> int:
    """The card of a rank index (0 = two .. 12 = ace) and a suit index."""
    return suit * 13 + rank


def suit_of(c: int) -> int:
    return c // 13


def rank_of(c: int) -> int:
    return c % 13


def bit(c: int) -> int:
    return 1 << c


CARD_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_CARD_BY_NAME: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}


def parse_card(name: object) -> int:
    """The card named exactly like ``QS`` (KING_RULES §1). Raises UnknownCard.

    Nothing else is a card: not ``qs``, ``10S`` or `` QS ``. Every card name the project reads
    comes from a program (records, events, the API, bots), and the rule book fixes the names
    "in every format"; a lenient reading would let two spellings of one record both pass.
    """
    if not isinstance(name, str):
        raise UnknownCard(f"a card must be a string like 'QS', not {type(name).__name__}")
    try:
        return _CARD_BY_NAME[name]
    except KeyError:
        raise UnknownCard(
            f"unknown card {name!r} (rank 2-9/T/J/Q/K/A, then suit S/H/D/C, upper case)"
        ) from None


def card_name(c: int) -> str:
    return CARD_NAMES[c]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# The cards of every 13-bit suit pattern, low to high: turns a mask into cards without a loop
# over 52 bits (the hot path of legal-move listing).
def _pattern_table(suit: int) -> tuple[tuple[int, ...], ...]:
    """Entry p: the cards of `suit` whose ranks are the bits of p, built by doubling (the
    patterns with rank r are those without it, plus r)."""
    table: list[tuple[int, ...]] = [()]
    for rank in range(13):
        card = (suit * 13 + rank,)
        table += [cards + card for cards in table]
    return tuple(table)


# The four suits' tables, made at the first `cards_of`: their 32,768 tuples took about 10 ms of
# every `king` command's start, most of which never list a hand.
_PATTERNS: list[tuple[tuple[int, ...], ...]] = []


def _patterns() -> list[tuple[tuple[int, ...], ...]]:
    made = [_pattern_table(s) for s in range(4)]
    if not _PATTERNS:
        _PATTERNS[:] = made  # (one assignment: a racing thread sees all four or none)
    return _PATTERNS


def cards_of(mask: int) -> tuple[int, ...]:
    """The cards of a mask in canonical order (by suit S H D C, then rank low to high)."""
    spades, hearts, diamonds, clubs = _PATTERNS or _patterns()
    return (
        spades[mask & FULL_SUIT]
        + hearts[mask >> 13 & FULL_SUIT]
        + diamonds[mask >> 26 & FULL_SUIT]
        + clubs[mask >> 39 & FULL_SUIT]
    )


def names_of(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


# Masks of the 52 bits' pairs, nibbles and bytes, for `count`.
_PAIRS: Final = 0x5555555555555
_NIBBLES: Final = 0x3333333333333
_BYTES: Final = 0x0F0F0F0F0F0F0F


def count(mask: int) -> int:
    """How many cards a mask of the 52 holds: `mask.bit_count()`, worked out by adding bits in
    pairs, then nibbles, then bytes. The compiled build has no operation of its own for
    bit_count and calls it as a method, which cost five times as much on the views' path."""
    x = mask - (mask >> 1 & _PAIRS)
    x = (x & _NIBBLES) + (x >> 2 & _NIBBLES)
    x = (x + (x >> 4)) & _BYTES
    x += x >> 8
    x += x >> 16
    x += x >> 32
    return x & 0x7F


def highest_in(mask: int) -> int:
    """The highest card of a mask that holds cards of one suit (by rank); -1 when empty."""
    return mask.bit_length() - 1


def above(c: int) -> int:
    """The mask of the cards of c's suit that rank above c."""
    s = c // 13
    return SUIT_MASKS[s] & ~((1 << (c + 1)) - 1)


def below(c: int) -> int:
    """The mask of the cards of c's suit that rank below c."""
    s = c // 13
    return SUIT_MASKS[s] & ((1 << c) - 1)


QUEENS = mask_of(card(RANK_QUEEN, s) for s in range(4))
BOYS = mask_of(card(r, s) for s in range(4) for r in (RANK_JACK, RANK_KING))
KING_OF_HEARTS = bit(card(RANK_KING, HEARTS))
TWO_OF_DIAMONDS = card(0, DIAMONDS)
ABOVE_TEN = mask_of(card(r, s) for s in range(4) for r in range(RANK_JACK, RANK_ACE + 1))
