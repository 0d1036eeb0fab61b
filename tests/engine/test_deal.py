"""The deal of HAND_RECORD.md: seed → commitment → deck, and the first dealer."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine.cards import FULL_DECK
from games.engine.deal import RandomStream, canonical_deck, commitment, deal_from_seed, new_seed

seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)


def reference_deal(game: str, seed: str, n: int) -> tuple[list[str], int]:
    """HAND_RECORD.md read literally, written independently of games.engine.deal."""
    seed_bytes = bytes.fromhex(seed)
    stream = b"".join(hashlib.sha256(seed_bytes + i.to_bytes(8, "big")).digest() for i in range(64))
    words = [int.from_bytes(stream[k : k + 8], "big") for k in range(0, len(stream), 8)]
    pos = 0

    def uniform(m: int) -> int:
        nonlocal pos
        limit = 2**64 - (2**64 % m)
        while True:
            u = words[pos]
            pos += 1
            if u < limit:
                return u % m

    suits, ranks = "CDHS", "A23456789TJQK"
    deck = [r + s for s in suits for r in ranks]
    if game == "comet":
        deck.remove("8D")
    for i in range(len(deck) - 1, 0, -1):
        j = uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck, uniform(n)


def test_canonical_deck_lists_clubs_diamonds_hearts_spades_ace_to_king() -> None:
    assert FULL_DECK[:3] == ("AC", "2C", "3C")
    assert FULL_DECK[12:15] == ("KC", "AD", "2D")
    assert FULL_DECK[-1] == "KS"
    assert len(FULL_DECK) == 52


def test_comet_removes_the_eight_of_diamonds_for_good() -> None:
    deck = canonical_deck("comet")
    assert len(deck) == 51 and "8D" not in deck and "9D" in deck


def test_commitment_is_sha256_of_the_seed_bytes() -> None:
    seed = "00" * 31 + "01"
    assert commitment(seed) == hashlib.sha256(bytes(31) + b"\x01").hexdigest()


def test_new_seed_is_64_lowercase_hex_digits_and_never_repeats() -> None:
    a, b = new_seed(), new_seed()
    assert len(a) == 64 and a == a.lower() and int(a, 16) >= 0
    assert a != b


def test_stream_reads_successive_big_endian_words_of_the_hash_blocks() -> None:
    seed = "ab" * 32
    stream = RandomStream(seed)
    block0 = hashlib.sha256(bytes.fromhex(seed) + (0).to_bytes(8, "big")).digest()
    block1 = hashlib.sha256(bytes.fromhex(seed) + (1).to_bytes(8, "big")).digest()
    expected = [int.from_bytes((block0 + block1)[k : k + 8], "big") for k in range(0, 64, 8)]
    assert [stream.next_u64() for _ in range(8)] == expected


def test_uniform_discards_words_at_or_above_the_limit() -> None:
    class Fixed(RandomStream):
        def __init__(self, words: list[int]) -> None:
            self.words = words

        def next_u64(self) -> int:
            return self.words.pop(0)

    m = 3
    limit = 2**64 - (2**64 % m)
    assert Fixed([limit, limit + 0, 7]).uniform(m) == 7 % m


@pytest.mark.parametrize(
    ("game", "n"), [("comet", 2), ("comet", 6), ("commere", 4), ("commere", 12)]
)
@given(seed=seeds)
def test_deck_and_first_dealer_follow_hand_record_to_the_letter(
    game: str, n: int, seed: str
) -> None:
    assert deal_from_seed(game, seed, n) == reference_deal(game, seed, n)


@given(seed=seeds)
def test_the_deck_is_a_permutation_of_the_canonical_deck(seed: str) -> None:
    deck, dealer = deal_from_seed("commere", seed, 7)
    assert sorted(deck) == sorted(FULL_DECK)
    assert 0 <= dealer < 7
