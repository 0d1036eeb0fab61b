"""Version 3 of the hand record (HAND_RECORD.md, "Version 3"): a keyed deck, sealed fields and
signed checkpoints.

- The deck key is an HMAC under the seed, so that no deck follows from the public commitment,
  with or without the players' shares.
- The values RULES.md hides during play (a passed card, who kept the Comet, how a move was
  made) enter the hash chain as *seals*, HMACs keyed by the seed: every event's hash can then
  be shown to everyone while the hand is played, and tells nothing of the hidden values.
- The service signs checkpoints of (hand, seq, hash) with its Ed25519 key (receipts). Signing
  is the service's; this module only builds the signed message, so that the engine stays
  standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from .base import MOVE_BYS, canonical_json

FORMAT_V3 = "academie.hand/3"
DECK_LABEL = b"academie.hand/3 deck"
SEAL_LABEL = "academie.hand/3 seal"
CHECKPOINT_LABEL = "academie.checkpoint/1"
SEAL_PREFIX = "sealed:"

#: Event types whose ``card`` is sealed (Ma commère's passes and draws), and whose ``seat``.
CARD_SEALED_TYPES = frozenset({"offer", "give_back", "return", "draw"})
SEAT_SEALED_TYPES = frozenset({"keep_comet"})
#: The key a shown event carries its seals under; it is not part of the event.
SEALS = "seals"


def deck_key_v3(seed: str, shares: Mapping[int, str]) -> bytes:
    """K = HMAC(seed, "academie.hand/3 deck" || c_1 || c_2 || …), each c the contributor's
    seat as one byte then its 32 share bytes, in ascending seat order."""
    message = DECK_LABEL
    for seat in sorted(shares):
        message += seat.to_bytes(1, "big") + bytes.fromhex(shares[seat])
    return hmac.new(bytes.fromhex(seed), message, hashlib.sha256).digest()


def sealed_fields(event: Mapping[str, Any]) -> list[str]:
    """The names of the fields of ``event`` (record form) that version 3 seals."""
    fields = []
    kind = event.get("type")
    if kind in CARD_SEALED_TYPES and "card" in event:
        fields.append("card")
    if kind in SEAT_SEALED_TYPES and "seat" in event:
        fields.append("seat")
    if event.get("by") in MOVE_BYS:
        fields.append("by")
    return fields


def seal_of(seed: str, seq: int, field: str, value: Any) -> str:
    """``"sealed:"`` and HMAC(seed, canonical(["academie.hand/3 seal", seq, field, value]))."""
    message = canonical_json([SEAL_LABEL, seq, field, value])
    return SEAL_PREFIX + hmac.new(bytes.fromhex(seed), message, hashlib.sha256).hexdigest()


def seals_of(event: Mapping[str, Any], seed: str) -> dict[str, str]:
    """The seal of each sealed field of ``event`` (record form, with its ``seq``)."""
    seq = event["seq"]
    return {f: seal_of(seed, seq, f, event[f]) for f in sealed_fields(event)}


def is_seal(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(SEAL_PREFIX)


def sealed_form(event: Mapping[str, Any], seals: Mapping[str, str]) -> dict[str, Any]:
    """The event with each sealed field's value replaced by its seal, without ``hash`` (and
    without the ``seals`` a shown event carries): what its hash is taken over."""
    body = {k: v for k, v in event.items() if k not in ("hash", SEALS)}
    for field, value in seals.items():
        if field in body:
            body[field] = value
    return body


def hash_v3(event: Mapping[str, Any], seals: Mapping[str, str]) -> str:
    """A version-3 event's hash: sha256 over the canonical JSON of its sealed form."""
    return hashlib.sha256(canonical_json(sealed_form(event, seals))).hexdigest()


def shown_hash(event: Mapping[str, Any]) -> str:
    """The hash of an event as the service shows it during play: its clear fields and its
    ``seals`` (a hidden value is ``null``; its seal stands for it)."""
    return hash_v3(event, event.get(SEALS) or {})


def checkpoint_message(hand: str, seq: int, event_hash: str) -> bytes:
    """What a receipt's Ed25519 signature is over: canonical(["academie.checkpoint/1", hand,
    seq, hash])."""
    return canonical_json([CHECKPOINT_LABEL, hand, seq, event_hash])


def key_id(public_key: bytes) -> str:
    """A signing key's id: the first 16 hex digits of sha256 of its raw 32 bytes."""
    return hashlib.sha256(public_key).hexdigest()[:16]
