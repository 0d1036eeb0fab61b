"""Cards, ranks and suits in the notation of RULES.md: rank + suit, e.g. ``TD``, ``9D``."""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_ORDER = {s: i for i, s in enumerate(SUITS)}

#: The canonical deck of HAND_RECORD.md: suits C, D, H, S; in each suit A 2 … K.
FULL_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

#: Position of a card in the canonical deck, used to sort cards "in canonical deck order".
CANONICAL_INDEX = {card: i for i, card in enumerate(FULL_DECK)}

COMET = "9D"
MISSING = "8D"


def rank(card: str) -> str:
    return card[0]


def suit(card: str) -> str:
    return card[1]


def is_card(value: object) -> bool:
    return isinstance(value, str) and value in CANONICAL_INDEX
