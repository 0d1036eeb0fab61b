"""Mistakes undone at the door, and the evenings that must not start: one soirée at a time per
player, a soirée with nobody checked in waits, a check-in undone, a name taken off, a soirée
cancelled. Each refusal is clear, in French too, and changes nothing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from ledger.models import Account, JournalEntry
from tournaments import services
from tournaments.errors import NobodyHere, SoireeState
from tournaments.models import Registration, Soiree, SoireeTable
from tournaments.tasks import soiree_clock

from .conftest import START

pytestmark = pytest.mark.django_db

OPENS = START + timedelta(minutes=10)


def _soiree(club: Any, name: str, *, starts: Any = OPENS, hours: float = 3,
            **kwargs: Any) -> Soiree:
    kwargs.setdefault("bot_kind", "timeout")
    return services.soiree_create(club=club, name=name, starts_at=starts,
                                  ends_at=starts + timedelta(hours=hours), game="comet",
                                  buy_in=50, **kwargs)


def _api(user: Any, language: str = "en") -> APIClient:
    client = APIClient(HTTP_ACCEPT_LANGUAGE=language)
    client.force_authenticate(user)
    return client


def _chips(user: Any) -> int:
    # His stack at the test's soirée (the only one): its chips are that soirée's alone.
    return Account.objects.get(club_key="cercle", kind="wallet", owner=user,
                               ref__startswith="soiree:").balance


def _books() -> tuple[int, list[Any]]:
    """What the ledger holds: its entries, and every account's balance."""
    return (JournalEntry.objects.count(),
            sorted(Account.objects.values_list("pk", "balance")))


def _checked_in(soiree: Soiree) -> list[str]:
    return sorted(Registration.objects.filter(soiree=soiree, checked_in_at__isnull=False)
                  .values_list("user__username", flat=True))


# -- one soirée at a time ----------------------------------------------------------------------


def test_a_player_checked_in_at_one_soiree_is_refused_at_an_overlapping_one(clock, club,
                                                                             members):
    ma_commere = _soiree(club, "Ma commère du vendredi")
    comet = _soiree(club, "Comète du vendredi", starts=OPENS + timedelta(hours=1))
    (bernard,) = members(1, "bernard")
    services.checkin(soiree=ma_commere, user=bernard, at=timezone.now())
    before = _books()

    with pytest.raises(SoireeState) as refused:
        services.checkin(soiree=comet, user=bernard, at=timezone.now())

    assert "Ma commère du vendredi (Le Cercle)" in str(refused.value)
    assert _books() == before
    assert not Registration.objects.filter(soiree=comet).exists()


def test_the_bug_of_the_two_soirees_cannot_happen_again(clock, club, members, organiser):
    """Bernard, seated at A, typed at B's door: refused; B's cash-out then takes nothing."""
    a = _soiree(club, "A")
    b = _soiree(club, "B", starts=OPENS + timedelta(minutes=30))
    bernard, marie = members(2)
    for user in (bernard, marie):
        services.checkin(soiree=a, user=user, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    a.refresh_from_db()
    assert a.status == Soiree.Status.OPEN
    api = _api(organiser)
    before = _books()

    late = api.post(f"/api/soirees/{b.pk}/checkin", {"player": bernard.username},
                    format="json")
    cash_out = api.post(f"/api/soirees/{b.pk}/cashout",
                        {"player": bernard.username, "request_id": str(uuid.uuid4())},
                        format="json")

    assert late.status_code == 409
    assert late.json()["error"] == "soiree_state"
    assert "another soirée, A (Le Cercle)" in late.json()["detail"]
    assert cash_out.status_code == 400  # not checked in at B
    assert _books() == before
    clock.move_to(b.starts_at)
    soiree_clock()
    b.refresh_from_db()
    assert b.status == Soiree.Status.SCHEDULED  # nobody there: it waits, no bots-only tables
    assert not SoireeTable.objects.filter(soiree=b).exists()


def test_an_open_soiree_at_another_time_holds_its_player_too(clock, club, members):
    tonight = _soiree(club, "Ce soir")
    next_week = _soiree(club, "La semaine prochaine", starts=OPENS + timedelta(days=7))
    alice, bruno = members(2)
    services.checkin(soiree=tonight, user=alice, at=timezone.now())
    services.checkin(soiree=tonight, user=bruno, at=timezone.now())
    # Not open and not overlapping: one may be checked in for next week meanwhile.
    services.checkin(soiree=next_week, user=bruno, at=timezone.now())
    services.checkin_undo(soiree=next_week, user=bruno, request_id=uuid.uuid4())
    clock.move_to(OPENS)
    soiree_clock()

    with pytest.raises(SoireeState, match="Ce soir"):
        services.checkin(soiree=next_week, user=alice, at=timezone.now())


def test_a_soiree_that_is_over_or_cancelled_or_left_holds_nobody(clock, club, members):
    first = _soiree(club, "Première")
    second = _soiree(club, "Seconde")
    third = _soiree(club, "Troisième")
    alice, bruno = members(2)
    services.checkin(soiree=first, user=alice, at=timezone.now())
    services.soiree_cancel(soiree=first, at=timezone.now())
    services.checkin(soiree=second, user=alice, at=timezone.now())  # the cancelled one: free
    services.checkin(soiree=second, user=bruno, at=timezone.now())
    Registration.objects.filter(soiree=second, user=bruno).update(left_at=timezone.now())

    services.checkin(soiree=third, user=bruno, at=timezone.now())  # removed from second: free

    assert _checked_in(third) == ["member2"]


# -- a soirée with nobody checked in waits -----------------------------------------------------


def test_a_soiree_nobody_has_arrived_at_waits_on_the_clock_and_opens_after_the_first(
        clock, club, members):
    soiree = _soiree(club, "Vide")
    clock.move_to(OPENS + timedelta(minutes=5))
    for _ in range(3):
        soiree_clock()
        clock.shift(1)
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.SCHEDULED
    assert not SoireeTable.objects.filter(soiree=soiree).exists()

    (alice,) = members(1)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    soiree_clock()

    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.OPEN


def test_open_now_is_refused_while_nobody_is_checked_in(clock, club, organiser):
    soiree = _soiree(club, "Vide")

    with pytest.raises(NobodyHere):
        services.soiree_open(soiree=soiree, at=timezone.now())
    answer = _api(organiser, "fr").post(f"/api/soirees/{soiree.pk}/open")

    assert answer.status_code == 409
    assert answer.json() == {
        "error": "nobody_checked_in",
        "detail": "Personne n’est encore arrivé : pointez les joueurs à l’entrée, puis la "
                  "soirée s’ouvre."}
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.SCHEDULED and not soiree.seating_seed


# -- a check-in undone -------------------------------------------------------------------------


def test_a_check_in_undone_gives_the_buy_in_back_by_a_reversing_entry(clock, club, members,
                                                                      organiser):
    soiree = _soiree(club, "Jeudi")
    alice, bruno = members(2)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    services.checkin(soiree=soiree, user=bruno, at=timezone.now())
    request_id = str(uuid.uuid4())
    body = {"player": alice.username, "request_id": request_id}

    first = _api(organiser).post(f"/api/soirees/{soiree.pk}/checkin/undo", body, format="json")
    again = _api(organiser).post(f"/api/soirees/{soiree.pk}/checkin/undo", body, format="json")

    assert first.status_code == again.status_code == 200
    assert first.json() == {"soiree": soiree.pk, "player": "member1", "checked_in": False}
    assert _chips(alice) == 0 and _chips(bruno) == 50
    buy_in = JournalEntry.objects.get(idempotency_key=f"soiree:{soiree.pk}:buy-in:{alice.pk}")
    assert buy_in.reversed_by.source == f"soiree:{soiree.pk}/buy-in"  # once, double click
    assert _checked_in(soiree) == ["member2"]
    assert Registration.objects.filter(soiree=soiree, user=alice).exists()  # still registered
    call_command("check_books")

    services.checkin(soiree=soiree, user=alice, at=timezone.now())  # she came after all
    assert _chips(alice) == 50
    call_command("check_books")


def test_a_check_in_is_not_undone_after_the_seating(clock, club, members, organiser):
    soiree = _soiree(club, "Jeudi")
    (alice,) = members(1)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    before = _books()

    answer = _api(organiser, "fr").post(
        f"/api/soirees/{soiree.pk}/checkin/undo",
        {"player": alice.username, "request_id": str(uuid.uuid4())}, format="json")

    assert answer.status_code == 409
    assert answer.json()["detail"].startswith("Cette soirée est ouverte")
    assert _books() == before and _checked_in(soiree) == ["member1"]


def test_undoing_a_check_in_nobody_made_is_refused(clock, club, members, organiser):
    soiree = _soiree(club, "Jeudi")
    (alice,) = members(1)
    services.registration_add(soiree=soiree, user=alice)

    answer = _api(organiser).post(
        f"/api/soirees/{soiree.pk}/checkin/undo",
        {"player": alice.username, "request_id": str(uuid.uuid4())}, format="json")

    assert answer.status_code == 409
    assert answer.json()["detail"] == "member1 is not checked in at this soirée."


# -- a name taken off --------------------------------------------------------------------------


def test_a_member_unregisters_before_the_opening(clock, club, members):
    soiree = _soiree(club, "Jeudi")
    (alice,) = members(1)
    api = _api(alice)
    assert api.post(f"/api/soirees/{soiree.pk}/register").status_code == 201

    answer = api.post(f"/api/soirees/{soiree.pk}/unregister")
    twice = _api(alice, "fr").post(f"/api/soirees/{soiree.pk}/unregister")

    assert answer.status_code == 200 and answer.json()["registered"] is False
    assert not Registration.objects.filter(soiree=soiree).exists()
    assert twice.status_code == 409
    assert twice.json()["detail"] == "member1 n’est pas inscrit à cette soirée."


def test_one_checked_in_or_a_soiree_open_keeps_the_name(clock, club, members):
    soiree = _soiree(club, "Jeudi")
    alice, bruno = members(2)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    services.registration_add(soiree=soiree, user=bruno)

    checked_in = _api(alice).post(f"/api/soirees/{soiree.pk}/unregister")
    clock.move_to(OPENS)
    soiree_clock()
    opened = _api(bruno).post(f"/api/soirees/{soiree.pk}/unregister")

    assert checked_in.status_code == opened.status_code == 409
    assert "undoes the check-in first" in checked_in.json()["detail"]
    assert "too late to unregister" in opened.json()["detail"]
    assert Registration.objects.filter(soiree=soiree).count() == 2


# -- a soirée cancelled ------------------------------------------------------------------------


def test_a_cancelled_soiree_gives_back_every_buy_in_and_never_opens(clock, club, members,
                                                                    organiser):
    soiree = _soiree(club, "Par erreur")
    alice, bruno = members(2)
    for user in (alice, bruno):
        services.checkin(soiree=soiree, user=user, at=timezone.now())

    answer = _api(organiser).post(f"/api/soirees/{soiree.pk}/cancel")
    again = _api(organiser).post(f"/api/soirees/{soiree.pk}/cancel")

    assert answer.status_code == again.status_code == 200
    assert answer.json() == {"soiree": soiree.pk, "status": "cancelled"}
    assert _chips(alice) == _chips(bruno) == 0
    assert JournalEntry.objects.filter(reverses__isnull=False).count() == 2
    call_command("check_books")
    clock.move_to(OPENS)
    soiree_clock()
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.CANCELLED and soiree.cancelled_at == START
    assert not SoireeTable.objects.filter(soiree=soiree).exists()
    (carla,) = members(1, "carla")
    late = _api(organiser, "fr").post(f"/api/soirees/{soiree.pk}/checkin",
                                      {"player": carla.username}, format="json")
    assert late.status_code == 409 and late.json()["detail"] == "Cette soirée a été annulée."


def test_an_open_soiree_is_not_cancelled_but_closed(clock, club, members, organiser):
    soiree = _soiree(club, "Jeudi")
    (alice,) = members(1)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    before = _books()

    answer = _api(organiser, "fr").post(f"/api/soirees/{soiree.pk}/cancel")

    assert answer.status_code == 409
    assert "Fermez-la maintenant" in answer.json()["detail"]
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.OPEN and _books() == before
