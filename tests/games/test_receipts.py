"""Version 3 at the service (HAND_RECORD.md, "Version 3"): every new hand is version 3, a hand
in play finishes in its own version, no deck follows from what is public, every answer that
shows a hand carries a receipt that verifies under the published keys, a rotated key stays
published, and the share window a person needs is enforced at the API.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from games import services, signing
from games.engine.deal import RandomStream, shuffled
from games.engine.seals import shown_hash
from games.engine.shares import deck_v2, deck_v3
from games.engine.verify import check_receipts, read_keys, verify_record
from games.models import Hand, Partie, SigningKey
from games.selectors import hand_record
from games.services import parties, store

from ..receipts import receipt_verifies

pytestmark = pytest.mark.django_db


def _table(people: Sequence[Any], *, window: timedelta = timedelta(0),
           game: str = "comet") -> tuple[Partie, Hand]:
    partie = services.partie_start(
        game=game, players=list(people), bots=["heuristic"], buy_in=50, at=timezone.now(),
        # A person's only move waits for its timer too: the hand is never played out at once.
        move_timeout=timedelta(hours=1), forced_move_delay=timedelta(hours=1),
        comet_window=timedelta(0), share_window=window)
    return partie, partie.hands.get()


def _play_out(hand: Hand) -> Hand:
    for _ in range(500):
        hand.refresh_from_db()
        if hand.status == Hand.Status.OVER:
            return hand
        assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    raise AssertionError("the hand did not end")


@pytest.fixture
def fresh_key(tmp_path: Any) -> Iterator[None]:
    """This test's own signing key, as a new deployment's."""
    signing._private_key.cache_clear()
    with override_settings(ACADEMIE_SIGNING_KEY="", ACADEMIE_SIGNING_KEY_FILE=str(
            tmp_path / "key")):
        yield
    signing._private_key.cache_clear()


def test_no_deck_follows_from_what_a_spectator_sees_without_any_share(people: list[Any]) -> None:
    _, hand = _table(people[:2])  # the window is 0: nobody's share counts
    deal = hand.events.get(type="deal")
    assert deal.payload["contributors"] == [] and hand.record_format == 3
    dealt = store.hand_deck(hand)
    seed = hand.secret.seed
    assert dealt == deck_v3("comet", seed, {})
    # What a reader holds during play: the commitment. Neither the shuffle under it (version
    # 2's flaw) nor under any hash he is shown gives the deck.
    public = [hand.commitment, *hand.events.values_list("hash", flat=True)]
    for value in public:
        assert shuffled("comet", RandomStream(value)) != dealt
    assert deck_v2("comet", seed, {}) != dealt


def test_every_answer_that_shows_the_hand_carries_a_receipt_that_verifies(
        people: list[Any], api_as: Any) -> None:
    alice = people[0]
    partie, hand = _table([alice])
    client = api_as(alice)
    keys = client.get("/api/keys").json()
    assert keys["keys"][-1]["until"] is None
    view = client.get(f"/api/hands/{hand.pk}/").json()
    assert view["format"] == 3 and view["digest"] is None
    assert view["receipt"]["seq"] == view["seq"] and receipt_verifies(view["receipt"], keys)
    events = client.get(f"/api/hands/{hand.pk}/events").json()
    assert events["receipt"] == view["receipt"]
    assert events["events"][-1]["hash"] == view["receipt"]["hash"]
    moves = 0
    while view["status"] == "playing" and moves < 60:
        if view["legal_moves"]:
            answer = client.post(f"/api/hands/{hand.pk}/moves", {
                "command_id": str(uuid.uuid4()), "seq": view["seq"],
                "move": view["legal_moves"][0]}, format="json")
            assert answer.status_code in (201, 202), answer.content
            view = answer.json()
            moves += 1
            if answer.status_code == 202:  # chosen in a Comet chance: played at its end
                hand.refresh_from_db()
                assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq,
                                              at=hand.deadline)
                view = client.get(f"/api/hands/{hand.pk}/").json()
        else:
            hand.refresh_from_db()
            services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
            view = client.get(f"/api/hands/{hand.pk}/").json()
        assert receipt_verifies(view["receipt"], keys)
        assert view["receipt"]["seq"] == view["seq"]
    hand.refresh_from_db()
    _play_out(hand)
    record = hand_record(hand=hand)
    last = client.get(f"/api/hands/{hand.pk}/").json()
    assert last["digest"] == record["digest"] == last["receipt"]["hash"]
    assert check_receipts(record, [view["receipt"], last["receipt"]], read_keys(keys)) == 2


def test_after_a_rotation_old_receipts_still_verify(people: list[Any], fresh_key: None,
                                                    tmp_path: Any) -> None:
    partie, hand = _table(people[:1])
    hand = _play_out(hand)
    old = signing.receipt(hand.pk, hand.last_seq, hand.last_hash)
    before = signing.published_keys()
    assert [k["id"] for k in before["keys"] if k["until"] is None] == [old["key"]]

    signing._private_key.cache_clear()
    with override_settings(ACADEMIE_SIGNING_KEY="7b" * 32):
        new = signing.receipt(hand.pk, hand.last_seq, hand.last_hash)
        after = signing.published_keys()
    assert new["key"] != old["key"]
    listed = {k["id"]: k for k in after["keys"]}
    assert listed[old["key"]]["until"] is not None and listed[new["key"]]["until"] is None
    assert receipt_verifies(old, after) and receipt_verifies(new, after)
    assert check_receipts(hand_record(hand=hand), [old, new], read_keys(after)) == 2
    assert SigningKey.objects.count() >= 2


def test_a_hand_dealt_in_version_2_finishes_in_version_2(people: list[Any], api_as: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parties, "RECORD_FORMAT", 2)
    partie, old = _table(people[:1])
    assert old.record_format == 2
    monkeypatch.setattr(parties, "RECORD_FORMAT", 3)  # the service is upgraded mid-hand
    client = api_as(people[0])
    shown = client.get(f"/api/hands/{old.pk}/events").json()
    # An older hand's hashes cover its hidden cards: none is shown, nor any receipt.
    assert all("hash" not in e and "seals" not in e for e in shown["events"])
    assert shown["receipt"] is None and client.get(f"/api/hands/{old.pk}/").json()[
        "receipt"] is None
    old = _play_out(old)
    record = hand_record(hand=old)
    assert record["format"] == "academie.hand/2" and verify_record(record) == record["digest"]
    following = services.hand_deal(partie=partie, at=timezone.now() + timedelta(minutes=1))
    assert following is not None and following.record_format == 3
    record = hand_record(hand=_play_out(following))
    assert record["format"] == "academie.hand/3" and verify_record(record) == record["digest"]
    events = client.get(f"/api/hands/{following.pk}/events").json()["events"]
    assert all(shown_hash(e) == e["hash"] for e in events)


@pytest.mark.parametrize("language, words", [("en", "at least 1 second"),
                                             ("fr", "au moins 1 seconde")])
def test_a_share_window_under_a_second_at_a_table_with_a_person_is_refused(
        people: list[Any], api_as: Any, language: str, words: str) -> None:
    client = api_as(people[0])
    before = Partie.objects.count()
    answer = client.post("/api/parties/", {
        "game": "comet", "players": [people[0].username], "bots": ["heuristic"],
        "share_window": 0}, format="json", HTTP_ACCEPT_LANGUAGE=language)
    assert answer.status_code == 400, answer.content
    assert "share_window" in answer.json()["detail"] and words in answer.json()["detail"]
    assert Partie.objects.count() == before
    # A table of bots alone has nobody to wait for.
    bots_only = client.post("/api/parties/", {"game": "comet", "players": [],
                                              "bots": ["heuristic", "heuristic"],
                                              "share_window": 0}, format="json")
    assert bots_only.status_code == 201, bots_only.content


def test_club_staff_see_the_keys_in_the_admin_and_cannot_change_them(
        client: Any, django_user_model: Any) -> None:
    key = signing.publish_current_key()
    staff = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(staff)
    listing = client.get("/admin/games/signingkey/")
    assert listing.status_code == 200 and key.id in listing.content.decode()
    assert client.get("/admin/games/signingkey/add/").status_code == 403
    assert client.post(f"/admin/games/signingkey/{key.id}/delete/", {"post": "yes"}
                       ).status_code == 403
    assert SigningKey.objects.filter(pk=key.pk).exists()
