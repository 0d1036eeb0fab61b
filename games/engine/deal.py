"""Seed → commitment → deck, and the first dealer, exactly as HAND_RECORD.md says."""

from __future__ import annotations

import hashlib
import secrets

from .cards import FULL_DECK, MISSING

_TWO64 = 2**64


def new_seed() -> str:
    """32 bytes from the operating system's secure random source, as 64 lowercase hex digits."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed)).hexdigest()


def canonical_deck(game: str) -> list[str]:
    if game == "comet":
        return [c for c in FULL_DECK if c != MISSING]
    if game == "commere":
        return list(FULL_DECK)
    raise ValueError(f"unknown game {game!r}")


class RandomStream:
    """The bytes sha256(seed || i) for i = 0, 1, …, read as 8-byte big-endian integers."""

    def __init__(self, seed: str) -> None:
        self._seed = bytes.fromhex(seed)
        self._block = 0
        self._buffer = b""
        self._pos = 0

    def next_u64(self) -> int:
        if self._pos + 8 > len(self._buffer):
            # Blocks are 32 bytes, so 8-byte words never straddle two blocks.
            self._buffer = hashlib.sha256(self._seed + self._block.to_bytes(8, "big")).digest()
            self._block += 1
            self._pos = 0
        u = int.from_bytes(self._buffer[self._pos : self._pos + 8], "big")
        self._pos += 8
        return u

    def uniform(self, m: int) -> int:
        """Uniform integer in [0, m) by rejection, so that no value is favoured."""
        limit = _TWO64 - (_TWO64 % m)
        u = self.next_u64()
        while u >= limit:
            u = self.next_u64()
        return u % m


def shuffled(game: str, stream: RandomStream) -> list[str]:
    deck = canonical_deck(game)
    for i in range(len(deck) - 1, 0, -1):
        j = stream.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal_from_seed(game: str, seed: str, n_seats: int) -> tuple[list[str], int]:
    """The deck (``deck[0]`` on top) and the seat drawn to deal the partie's first hand.

    The dealer draw follows the shuffle in the same stream; only a partie's first hand uses it.
    """
    stream = RandomStream(seed)
    deck = shuffled(game, stream)
    return deck, stream.uniform(n_seats)
