"""The demo soirée (``manage.py demo_soiree``): a person seated with bots has a person's time
for each decision, while the tables of bots play on at once."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.models import Hand, Partie
from games.services import deadline_fire, partie_tick
from tournaments.models import Soiree
from tournaments.services import soiree_close_now, soiree_open

pytestmark = pytest.mark.django_db


def test_the_human_seat_of_the_demo_has_thirty_seconds_and_the_bots_play_at_once() -> None:
    call_command("demo_soiree", "--human", "alice", "--game", "commere", "--tables", "2",
                 stdout=io.StringIO())
    soiree = Soiree.objects.get()
    opened = timezone.now()

    soiree_open(soiree=soiree, at=opened)

    alice_s = Partie.objects.get(seats__player__username="alice")
    assert soiree.move_timeout == alice_s.move_timeout == timedelta(seconds=30)
    # The evening goes on as the timers and the clock play it (her forced cards, the next
    # deals) until a hand waits for a decision of hers: she then has 30 s from the last move.
    at = opened
    for _ in range(100):
        hand = alice_s.hands.order_by("-number").first()
        if hand.status == Hand.Status.PLAYING and hand.deadline_kind == "timeout":
            break
        if hand.status == Hand.Status.PLAYING:
            at = hand.deadline
            assert deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=at)
        else:
            alice_s.refresh_from_db()
            at = max(at, alice_s.next_hand_at)
            assert partie_tick(partie_id=alice_s.pk, at=at) is not None
    assert hand.deadline_kind == "timeout" and hand.deadline - at == timedelta(seconds=30)
    assert alice_s.seats.filter(bot="").count() == 1  # she is the table's only person
    bots_only = Partie.objects.exclude(pk=alice_s.pk).get()
    assert bots_only.hands.get().status == Hand.Status.OVER  # no person: played at its deal


def test_the_demo_s_time_out_can_still_be_chosen() -> None:
    call_command("demo_soiree", "--human", "alice", "--move-timeout", "12",
                 stdout=io.StringIO())

    assert Soiree.objects.get().move_timeout == timedelta(seconds=12)


def test_the_demo_outlasts_a_newcomer_and_a_closed_one_is_followed_by_a_new_one() -> None:
    said = io.StringIO()
    call_command("demo_soiree", "--if-empty", "--human", "alice", "--addr", "0.0.0.0:8765",
                 stdout=said)
    first = Soiree.objects.get()
    assert first.ends_at - first.starts_at == timedelta(hours=2)
    assert "http://0.0.0.0:8765/" in said.getvalue()
    again = io.StringIO()
    call_command("demo_soiree", "--if-empty", "--human", "alice", stdout=again)
    assert Soiree.objects.count() == 1 and "under way" in again.getvalue()
    # Once it has closed, `make run` starts a new evening rather than show a closed one.
    soiree_open(soiree=first, at=first.starts_at)
    soiree_close_now(soiree=first, at=timezone.now())
    Soiree.objects.filter(pk=first.pk).update(status=Soiree.Status.CLOSED)
    call_command("demo_soiree", "--if-empty", "--human", "alice", stdout=io.StringIO())
    newest = Soiree.objects.exclude(pk=first.pk).get()
    assert newest.status == Soiree.Status.SCHEDULED
    assert newest.registrations.filter(user__username="alice",
                                       checked_in_at__isnull=False).exists()
