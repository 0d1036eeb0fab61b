"""Celery timers: one armed task per hand, not one per move (games/tasks.py).

A command whose new deadline comes at or after the hand's armed task (``Hand.timer_at``) queues
nothing; the armed task, when it runs, plays the decision if its deadline has passed and
otherwise arms itself again for the deadline the hand has then. The first tests publish to this
test's own Redis database and count what reaches the broker (no worker runs, so every message
stays queued); the last one lets a real worker, without beat (so without the sweeper), play a
time-out that only a re-armed task can have played.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.models import Hand, HandEvent, Partie
from games.services import move_play, partie_start, recent, store, timer_fire

from .conftest import timeline, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis,
              pytest.mark.django_db(transaction=True)]


def _people_partie(move_timeout: timedelta) -> Partie:
    people = [get_user_model().objects.create_user(f"joueur{i}-{uuid.uuid4().hex[:6]}")
              for i in range(4)]
    return partie_start(game="commere", players=people, options={"max_turns": 3},
                        buy_in=50, move_timeout=move_timeout, forced_move_delay=timedelta(0),
                        comet_window=timedelta(0), pause_between_hands=timedelta(hours=1),
                        at=timezone.now())


def _hand(partie: Partie) -> Hand:
    return Hand.objects.get(pk=partie.hands.order_by("-number").first().pk)


def _move(hand: Hand) -> Hand:
    """The awaited person's first legal move, played through the service."""
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    move = loaded.game.legal_moves(loaded.state)[seat][0]
    player = hand.partie.seats.get(number=seat).player
    move_play(hand_id=hand.pk, user=player, move=move, seq=hand.last_seq,
              command_id=uuid.uuid4(), at=timezone.now())
    return Hand.objects.get(pk=hand.pk)


def _waiting(hand: Hand) -> bool:
    return hand.status == Hand.Status.PLAYING and hand.deadline is not None


def _after_moves(move_timeout: timedelta, moves: int) -> tuple[Partie, Hand, Hand]:
    """A partie of people, its first hand as dealt, and that hand after ``moves`` moves, still
    waiting for a decision (the deal is random: a hand that ended sooner is left, and another
    partie started)."""
    for _ in range(20):
        partie = _people_partie(move_timeout)
        dealt = hand = _hand(partie)
        for _ in range(moves):
            if not _waiting(hand):
                break
            hand = _move(hand)
        if _waiting(hand):
            return partie, dealt, hand
    pytest.fail(f"no hand of 20 was still waiting after {moves} moves")


def _queued(rig: Any) -> list[dict[str, Any]]:
    """The deadline tasks waiting in the broker, newest first: (hand, armed) of each."""
    client = redis.Redis.from_url(rig.redis_url)
    out = []
    for raw in client.lrange("celery", 0, -1):
        message = json.loads(raw)
        if message["headers"]["task"] != "games.tasks.fire_deadline":
            continue
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        out.append({"hand": args[0], "armed": kwargs.get("armed")})
    return out


def test_a_hands_moves_queue_one_task_while_its_armed_task_is_to_come(celery_rig):
    _, dealt, hand = _after_moves(timedelta(minutes=10), moves=4)
    armed = dealt.timer_at
    assert armed is not None and armed == dealt.deadline  # the deal armed the first deadline
    assert hand.last_seq > dealt.last_seq and hand.deadline > armed  # the moves set later ones
    assert hand.timer_at == armed  # ... and left the armed task to find them
    assert [q for q in _queued(celery_rig) if q["hand"] == str(hand.pk)] == [
        {"hand": str(hand.pk), "armed": armed.isoformat()}]


def _set_timer(hand: Hand, at: Any) -> Hand:
    """The row's armed time moved behind this process's back: its kept copy of the hand is
    dropped, as a move by another process would make it stale."""
    Hand.objects.filter(pk=hand.pk).update(timer_at=at)
    recent.hands.clear()
    return Hand.objects.get(pk=hand.pk)


def test_a_deadline_before_the_armed_task_or_after_it_has_passed_arms_a_new_one(celery_rig):
    for _ in range(20):
        _, _, hand = _after_moves(timedelta(minutes=10), moves=0)
        # The armed task comes after the next deadline: the move queues its own, due sooner.
        hand = _move(_set_timer(hand, hand.deadline + timedelta(hours=5)))
        if not _waiting(hand):
            continue  # the hand ended at that move: another
        assert hand.timer_at == hand.deadline
        # The armed task's time has passed (it ran, or is late): the next move arms again.
        hand = _move(_set_timer(hand, timezone.now() - timedelta(seconds=1)))
        if not _waiting(hand):
            continue
        assert hand.timer_at == hand.deadline
        queued = [q["armed"] for q in _queued(celery_rig) if q["hand"] == str(hand.pk)]
        assert len(queued) == 3 and queued[0] == hand.deadline.isoformat()  # newest first
        return
    pytest.fail("no hand of 20 was still waiting after two moves")


def test_the_armed_task_arms_again_before_the_deadline_plays_it_after(celery_rig):
    _, _, hand = _after_moves(timedelta(minutes=10), moves=1)
    armed, deadline, seq = hand.timer_at, hand.deadline, hand.last_seq
    assert deadline > armed
    # Superseded: another task's time is in the row. Nothing happens.
    assert timer_fire(hand_id=hand.pk, armed=armed - timedelta(seconds=1), at=armed) == (
        False, None)
    # Due, but the hand's deadline is later: armed again for it, nothing played.
    assert timer_fire(hand_id=hand.pk, armed=armed, at=armed) == (False, deadline)
    hand = Hand.objects.get(pk=hand.pk)
    assert (hand.timer_at, hand.last_seq) == (deadline, seq)
    # The same task again (a duplicate): the row names the new time now, so it does nothing.
    assert timer_fire(hand_id=hand.pk, armed=armed, at=armed) == (False, None)
    # The re-armed task after the deadline: the time-out is played, and its command arms the
    # timer of the decision that follows.
    events = HandEvent.objects.filter(hand=hand).count()
    played, again = timer_fire(hand_id=hand.pk, armed=deadline,
                               at=deadline + timedelta(milliseconds=1))
    hand = Hand.objects.get(pk=hand.pk)
    assert (played, again) == (True, None)
    assert HandEvent.objects.filter(hand=hand).count() > events
    assert HandEvent.objects.get(hand=hand, seq=seq + 1).by == "timeout"
    if hand.status == Hand.Status.PLAYING:
        assert hand.timer_at == hand.deadline and hand.timer_at > deadline


def test_a_time_out_after_a_move_is_played_by_the_re_armed_task_on_a_real_worker(celery_rig):
    timeout = timedelta(seconds=2)
    partie, dealt, hand = _after_moves(timeout, moves=1)
    # The move, within the first deadline, set a later one and queued nothing.
    armed = dealt.timer_at
    assert hand.timer_at == armed and hand.deadline > armed
    assert [q["armed"] for q in _queued(celery_rig) if q["hand"] == str(hand.pk)] == [
        armed.isoformat()]
    seq, deadline = hand.last_seq, hand.deadline
    # A worker but no beat: no sweeper. Only the armed task, armed again at its time for this
    # deadline, can play the time-out.
    celery_rig.start_worker()
    wait_for(lambda: HandEvent.objects.filter(hand=hand, seq=seq + 1).exists(), timeout=20,
             what="the time-out after the move", explain=celery_rig.tails)
    event = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert event.by == "timeout"
    late = [a.lag for a in timeline([partie.pk]).answers if a.seq == seq + 1]
    assert late and 0 <= late[0] <= 1.0, (late, deadline)
    assert "Traceback" not in celery_rig.logs(), celery_rig.tails()
