"""Receipts: the service's signature on what it showed of a hand (HAND_RECORD.md, version 3).

For each version-3 hand and each ``seq`` it shows anyone, the service signs the checkpoint
``canonical(["academie.checkpoint/1", hand, seq, hash])`` with its Ed25519 key. Ed25519 is
deterministic, so a receipt is signed again when needed instead of being stored: the same
checkpoint always gets the same receipt.

The key comes from ``ACADEMIE_SIGNING_KEY`` (production requires it), or, in development and
tests, from the file ``ACADEMIE_SIGNING_KEY_FILE``, made on first use. Its public half is
published with every key used before it (``SigningKey``): a new key, seen the first time the
keys are published or after ``migrate``, retires the others, which stay listed.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from games.engine.record import iso_z
from games.engine.seals import checkpoint_message, key_id
from games.models import Hand, SigningKey

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _read_or_make(path: Path) -> str:
    """The key kept in ``path``; made there (readable by its owner only) if there is none. Two
    processes starting together keep the one that was written first."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32) + "\n")
    return path.read_text().strip()


@functools.cache
def _private_key() -> Ed25519PrivateKey:
    # The key is configuration, read once per process like the other settings.
    text = settings.ACADEMIE_SIGNING_KEY
    if not text:
        if not settings.ACADEMIE_SIGNING_KEY_FILE:
            raise ImproperlyConfigured("ACADEMIE_SIGNING_KEY is not set")
        text = _read_or_make(Path(settings.ACADEMIE_SIGNING_KEY_FILE))
    if not _HEX64.fullmatch(text):
        raise ImproperlyConfigured("the signing key must be 32 bytes as 64 lowercase hex digits")
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(text))


def public_key() -> bytes:
    return _private_key().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def current_key_id() -> str:
    return key_id(public_key())


def receipt(hand_id: Any, seq: int, event_hash: str) -> dict[str, Any]:
    """The signed checkpoint of ``hand_id`` at ``seq``, whose event has ``event_hash``."""
    hand = str(hand_id)
    signature = _private_key().sign(checkpoint_message(hand, seq, event_hash))
    return {"hand": hand, "seq": seq, "hash": event_hash, "key": current_key_id(),
            "sig": signature.hex()}


def hand_receipt(hand: Hand, seq: int, event_hash: str) -> dict[str, Any] | None:
    """The receipt of what the service shows of ``hand`` at ``seq``: for a version-3 hand
    only, whose hashes tell nothing of hidden values (an older hand's would)."""
    if hand.record_format != 3 or seq < 1:
        return None
    return receipt(hand.pk, seq, event_hash)


def publish_current_key() -> SigningKey:
    """Record the current key as published, retiring every other key still current."""
    public = public_key().hex()
    now = timezone.now()
    with transaction.atomic():
        key, created = SigningKey.objects.get_or_create(
            id=key_id(bytes.fromhex(public)), defaults={"public": public, "since": now})
        if key.until is not None:  # a retired key given again becomes current again
            key.until = None
            key.save(update_fields=["until"])
            created = True
        if created:
            SigningKey.objects.filter(until__isnull=True).exclude(pk=key.pk).update(until=now)
    return key


def published_keys() -> dict[str, Any]:
    """``{"keys": [...]}`` as HAND_RECORD.md writes them: every key, current and retired."""
    publish_current_key()
    return {"keys": [{"id": k.id, "public": k.public, "since": iso_z(k.since),
                      "until": iso_z(k.until) if k.until else None}
                     for k in SigningKey.objects.order_by("since")]}
