"""A receipt checked as a player's tool would: against the published keys, with the
``cryptography`` package (HAND_RECORD.md, version 3)."""

from __future__ import annotations

import copy
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from games.engine.seals import checkpoint_message, hash_v3, seals_of
from games.engine.verify import Discrepancy, read_keys, verify_record


def receipt_verifies(receipt: dict[str, Any], published: dict[str, Any]) -> bool:
    """Whether ``receipt`` is signed by one of the ``published`` keys (``{"keys": [...]}``)."""
    public = read_keys(published).get(receipt["key"])
    if public is None:
        return False
    message = checkpoint_message(receipt["hand"], receipt["seq"], receipt["hash"])
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(receipt["sig"]), message)
    except InvalidSignature:
        return False
    return True


def rechain(record: dict[str, Any]) -> dict[str, Any]:
    """A version-3 record chained again from its commitment, as an operator who knows the seed
    could after changing it."""
    prev = record["commitment"]
    for i, event in enumerate(record["events"], start=1):
        event["seq"], event["prev"] = i, prev
        event["hash"] = prev = hash_v3(event, seals_of(event, record["seed"]))
    record["digest"] = prev
    return record


def forged_timeout(record: dict[str, Any]) -> tuple[dict[str, Any], int] | None:
    """The record with a ``player`` move that was the default move turned into a ``timeout``
    and chained again, which verifies on its own, and that move's seq; ``None`` if no player
    move of the hand was its default move."""
    for event in record["events"]:
        if event["by"] != "player":
            continue
        forged = copy.deepcopy(record)
        forged["events"][event["seq"] - 1]["by"] = "timeout"
        try:
            verify_record(rechain(forged))
        except Discrepancy:
            continue
        return forged, event["seq"]
    return None
