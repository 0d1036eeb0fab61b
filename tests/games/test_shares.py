"""Version-2 hands at the service: the people's shares of the deal's randomness
(HAND_RECORD.md, "Version 2: players' seed shares").

A hand starts with ``hand_started`` and its commitment, waits for the seated people's shares
(``POST /api/hands/{id}/share``) at most ``share_window``, and is dealt by the share that
completes them or by the timer. Tables of bots are dealt at once.
"""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connections
from django.utils import timezone

from games import services
from games.engine.base import Move
from games.engine.bots import TimeoutBot
from games.engine.cards import is_card
from games.engine.deal import commitment, deal_from_seed
from games.engine.play import play_hand
from games.engine.registry import get_game
from games.engine.shares import deck_v3
from games.engine.verify import verify_record
from games.errors import (
    AlreadyDealt,
    GameError,
    IllegalMoveError,
    ShareAlreadySent,
    ShareRefused,
    StaleSequence,
)
from games.live import hand_frames
from games.models import Hand, HandSeed, Partie
from games.selectors import hand_record, hand_verification, hand_view
from games.services import store

pytestmark = pytest.mark.django_db

WINDOW = timedelta(seconds=3)
SHARES = ["a" * 64, "0123456789abcdef" * 4, "f" * 64]


def _table(people: Sequence[Any], *, bots: Sequence[str] = ("heuristic",),
           window: timedelta = WINDOW, game: str = "comet") -> tuple[Partie, Hand]:
    partie = services.partie_start(
        game=game, players=list(people), bots=list(bots), buy_in=50, at=timezone.now(),
        move_timeout=timedelta(hours=1), forced_move_delay=timedelta(0),
        comet_window=timedelta(0), share_window=window)
    return partie, partie.hands.get()


def _types(hand: Hand) -> list[str]:
    return list(hand.events.order_by("seq").values_list("type", flat=True))


def _share(client: Any, hand: Hand, share: Any) -> Any:
    return client.post(f"/api/hands/{hand.pk}/share", {"share": share}, format="json")


def _play_out(hand: Hand) -> Hand:
    """Every decision by its timer, each when it is due."""
    for _ in range(500):
        hand.refresh_from_db()
        if hand.status == Hand.Status.OVER:
            return hand
        assert hand.deadline is not None
        assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    raise AssertionError("the hand did not end")


def _cards_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*map(_cards_in, value.values()))
    if isinstance(value, list):
        return set().union(*map(_cards_in, value))
    return {value} if isinstance(value, str) and is_card(value) else set()


# -- the deal comes with the shares, or at the window --------------------------------------------


def test_two_people_and_a_bot_both_shares_arrive_and_the_deal_comes_before_the_window(
        people: list[Any], api_as: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    started = hand.started_at
    assert _types(hand) == ["hand_started"]
    assert (hand.record_format, hand.deadline_kind) == (3, "deal")
    assert hand.deadline == started + WINDOW  # the most the wait may add

    first = _share(api_as(alice), hand, SHARES[0])
    assert first.status_code == 201, first.content
    answer = first.json()
    receipt = answer.pop("receipt")
    assert answer == {"hand": str(hand.pk), "seat": 0, "seq": 2, "dealt": False}
    # The share's answer carries the receipt of the seq it shows (HAND_RECORD.md, version 3).
    hand.refresh_from_db()
    assert (receipt["seq"], receipt["hash"]) == (2, hand.last_hash)
    second = _share(api_as(bruno), hand, SHARES[1])
    assert second.status_code == 201 and second.json()["dealt"] is True

    hand.refresh_from_db()
    assert _types(hand)[:4] == ["hand_started", "share", "share", "deal"]
    deal = hand.events.get(type="deal")
    assert deal.payload == {"contributors": [0, 1]}
    dealt_at = datetime.fromisoformat(deal.at.replace("Z", "+00:00"))
    assert dealt_at - started < WINDOW  # dealt by the last share, not by the timer
    assert hand.deadline_kind != "deal"

    hand = _play_out(hand)
    record = hand_record(hand=hand)
    assert record["format"] == "academie.hand/3"
    assert record["shares"] == [{"seat": 0, "share": SHARES[0]},
                                {"seat": 1, "share": SHARES[1]}]
    assert record["deck"] == deck_v3("comet", record["seed"], {0: SHARES[0], 1: SHARES[1]})
    assert verify_record(record) == record["digest"]
    assert hand_verification(hand=hand)["ok"] is True


def test_a_person_who_never_sends_a_share_is_dealt_without_it_at_the_window(
        people: list[Any], api_as: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    assert _share(api_as(bruno), hand, SHARES[2]).json()["dealt"] is False
    hand.refresh_from_db()
    # The timer before the window has passed does nothing.
    early = hand.deadline - timedelta(milliseconds=1)
    assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=early) is False
    assert _types(hand) == ["hand_started", "share"]

    assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    deal = hand.events.get(type="deal")
    assert deal.payload == {"contributors": [1]}
    assert deal.by == "service"

    hand = _play_out(hand)
    record = hand_record(hand=hand)
    assert record["shares"] == [{"seat": 1, "share": SHARES[2]}]
    assert verify_record(record) == record["digest"]


def test_a_share_sent_as_the_timer_deals_is_kept_or_refused_never_lost(
        people: list[Any], api_as: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    late = _share(api_as(alice), hand, SHARES[0])
    assert late.status_code == 409 and late.json()["error"] == "already_dealt"
    assert hand.events.get(type="deal").payload == {"contributors": []}
    assert not hand.events.filter(type="share").exists()


def test_a_table_of_bots_and_a_zero_window_are_dealt_at_once(people: list[Any]) -> None:
    _, bots_only = _table([], bots=["heuristic"] * 3)
    assert _types(bots_only)[:2] == ["hand_started", "deal"]
    _, no_wait = _table(people[:2], window=timedelta(0))
    assert _types(no_wait)[:2] == ["hand_started", "deal"]
    assert no_wait.events.get(type="deal").payload == {"contributors": []}


def test_the_next_hand_waits_for_the_shares_too(people: list[Any], api_as: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    for user, share in ((alice, SHARES[0]), (bruno, SHARES[1])):
        _share(api_as(user), hand, share)
    hand = _play_out(hand)
    partie.refresh_from_db()
    second = services.partie_tick(partie_id=partie.pk, at=partie.next_hand_at)
    assert second is not None and second.number == 2
    assert _types(second) == ["hand_started"] and second.deadline_kind == "deal"
    answer = _share(api_as(bruno), second, SHARES[2]).json()
    assert answer.pop("receipt")["seq"] == 2
    assert answer == {"hand": str(second.pk), "seat": 1, "seq": 2, "dealt": False}


# -- bad input changes nothing ------------------------------------------------------------------


@pytest.mark.parametrize(("share", "why"), [
    ("A" * 64, "lowercase"), ("a" * 63, "too short"), ("g" * 64, "not hex"),
    ("a" * 65, "too long"), (" " + "a" * 63, "a space"), (12, "a number"), (None, "null"),
])
def test_a_share_that_is_not_64_lowercase_hex_digits_is_refused(
        people: list[Any], api_as: Any, share: Any, why: str) -> None:
    partie, hand = _table(people[:2])
    answer = _share(api_as(people[0]), hand, share)
    assert answer.status_code == 400, why
    body = answer.json()
    assert body["error"] in ("share_refused", "invalid"), body
    assert "share" in json.dumps(body)
    hand.refresh_from_db()
    assert _types(hand) == ["hand_started"] and hand.last_seq == 1


def test_a_second_share_a_stranger_a_bot_seat_and_a_late_share_are_refused(
        people: list[Any], api_as: Any, django_user_model: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    assert _share(api_as(alice), hand, SHARES[0]).status_code == 201
    again = _share(api_as(alice), hand, SHARES[1])
    assert again.status_code == 409 and again.json()["error"] == "share_already_sent"

    staff = django_user_model.objects.create_user("sam", is_staff=True)  # may watch, not sit
    stranger = _share(api_as(staff), hand, SHARES[1])
    assert stranger.status_code == 403 and stranger.json()["error"] == "not_seated"
    outsider = _share(api_as(people[3]), hand, SHARES[1])  # may not even see a casual table
    assert outsider.status_code == 403
    anonymous = _share(api_as(None), hand, SHARES[1])
    assert anonymous.status_code in (401, 403)
    bot = partie.seats.get(number=2).player
    with pytest.raises(ShareRefused, match="bot"):
        services.share_send(hand_id=hand.pk, user=bot, share=SHARES[1], at=timezone.now())
    missing = api_as(alice).post("/api/hands/00000000-0000-0000-0000-000000000000/share",
                                 {"share": SHARES[1]}, format="json")
    assert missing.status_code == 404
    hand.refresh_from_db()
    assert _types(hand) == ["hand_started", "share"] and hand.last_seq == 2

    _share(api_as(bruno), hand, SHARES[1])  # the deal
    hand.refresh_from_db()
    seq = hand.last_seq
    with pytest.raises(ShareAlreadySent):
        services.share_send(hand_id=hand.pk, user=alice, share=SHARES[2], at=timezone.now())
    with pytest.raises(ShareAlreadySent):
        services.share_send(hand_id=hand.pk, user=bruno, share=SHARES[2], at=timezone.now())
    hand.refresh_from_db()
    assert hand.last_seq == seq


def test_a_share_after_a_deal_without_it_is_refused(people: list[Any], api_as: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    hand.refresh_from_db()
    seq = hand.last_seq
    with pytest.raises(AlreadyDealt):
        services.share_send(hand_id=hand.pk, user=alice, share=SHARES[0], at=timezone.now())
    hand.refresh_from_db()
    assert hand.last_seq == seq


def test_a_move_before_the_deal_is_refused_and_changes_nothing(
        people: list[Any], api_as: Any) -> None:
    partie, hand = _table(people[:2])
    answer = api_as(people[0]).post(
        f"/api/hands/{hand.pk}/moves",
        {"command_id": "11111111-1111-1111-1111-111111111111", "seq": 1,
         "move": {"type": "play", "card": "7H"}}, format="json")
    assert answer.status_code in (400, 409), answer.content
    assert "deal" in answer.json()["detail"]
    hand.refresh_from_db()
    assert _types(hand) == ["hand_started"]


# -- no card before the deal -------------------------------------------------------------------


def test_no_card_nor_seed_in_any_answer_or_live_frame_before_the_deal(
        people: list[Any], api_as: Any, django_user_model: Any) -> None:
    alice, bruno = people[:2]
    partie, hand = _table([alice, bruno])
    staff = django_user_model.objects.create_user("sam", is_staff=True)
    seed = hand.secret.seed
    answers = [
        api_as(alice).get(f"/api/hands/{hand.pk}/").json(),
        api_as(staff).get(f"/api/hands/{hand.pk}/").json(),
        api_as(alice).get(f"/api/hands/{hand.pk}/events").json(),
        _share(api_as(alice), hand, SHARES[0]).json(),
        api_as(bruno).get(f"/api/hands/{hand.pk}/").json(),
        api_as(bruno).get(f"/api/hands/{hand.pk}/record").json(),
        api_as(staff).get(f"/api/hands/{hand.pk}/events").json(),
    ]
    hand.refresh_from_db()
    frames = {a: hand_frames(hand, 3, a, after=0)[0] for a in [None, 0, 1, 2]}
    for shown in [*answers, *frames.values()]:
        text = json.dumps(shown)
        assert _cards_in(shown) == set(), shown
        assert seed not in text
    view = hand_view(hand=hand, user=alice)
    assert view["view"]["phase"] == "shuffling"
    assert view["view"]["shares"] == [0]  # who has sent one: public, the share itself is not
    assert SHARES[0] not in json.dumps(answers[4])  # bruno does not see alice's share


# -- version 1 still verifies -------------------------------------------------------------------


def test_a_version_1_hand_stored_before_the_shares_still_verifies(people: list[Any]) -> None:
    partie, _ = _table(people[:3], bots=(), window=timedelta(0))
    seed = "5eed" * 16
    game = get_game("comet")
    deck, dealer = deal_from_seed("comet", seed, 3)
    _, events = play_hand(
        game, deck=deck, dealer=dealer, seats=[{"seat": s, "player": f"p{s}"} for s in range(3)],
        options=game.normalise_options({}), chips_before={"0": 50, "1": 50, "2": 50},
        pot_before=0, commitment=commitment(seed),
        bots=[TimeoutBot(random.Random(0)) for _ in range(3)])
    old = Hand.objects.create(partie=partie, number=99, dealer=dealer,
                              commitment=commitment(seed), last_hash=commitment(seed),
                              started_at=timezone.now(), record_format=1)
    HandSeed.objects.create(hand=old, seed=seed)
    store.append(old, events, prev_hash=old.commitment, at=timezone.now())
    old.status = Hand.Status.OVER
    old.save()

    record = hand_record(hand=old)
    assert record["format"] == "academie.hand/1" and "shares" not in record
    assert record["deck"] == deck
    assert hand_verification(hand=old) == {"ok": True, "digest": record["digest"],
                                           "discrepancy": None}


# -- concurrent shares and moves ----------------------------------------------------------------


def _all_at_once(calls: Sequence[Callable[[], Any]]) -> list[tuple[str, Any]]:
    barrier = threading.Barrier(len(calls))
    out: list[tuple[str, Any]] = [("error", None)] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            out[i] = ("ok", call())
        except GameError as exc:
            out[i] = ("error", exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _race(players: Sequence[Any], *, timer: bool, twice_and_a_move: bool) -> None:
    partie, hand = _table(players, bots=(), game="comet")
    calls: list[Callable[[], Any]] = [
        lambda u=u, s=s: services.share_send(hand_id=hand.pk, user=u, share=s, at=timezone.now())
        for u, s in zip(players, SHARES, strict=True)]
    if timer:  # the window passing at the same time
        calls.append(lambda: services.deadline_fire(hand_id=hand.pk, seq=1, at=hand.deadline))
    if twice_and_a_move:  # a share sent twice at once, and a move before the deal
        calls.append(lambda: services.share_send(hand_id=hand.pk, user=players[0],
                                                 share=SHARES[2], at=timezone.now()))
        calls.append(lambda: services.move_play(
            hand_id=hand.pk, user=players[1], move=Move(type="play", card="7H"), seq=1,
            command_id=uuid.uuid4(), at=timezone.now()))
    results = _all_at_once(calls)
    hand.refresh_from_db()
    events = list(hand.events.order_by("seq"))
    assert [e.seq for e in events] == list(range(1, hand.last_seq + 1))
    (deal,) = [e for e in events if e.type == "deal"]
    shares = {e.payload["seat"]: e.payload["share"] for e in events if e.type == "share"}
    assert all(e.seq < deal.seq for e in events if e.type == "share")
    assert deal.payload["contributors"] == sorted(shares)
    # Each person's share is in, or was refused because the deal came first.
    # (Seat 0's two shares race each other: one is in, the other refused.)
    for seat, (kind, value) in enumerate(results[:len(players)]):
        if kind == "ok":
            assert shares[seat] == SHARES[seat]
        elif isinstance(value, ShareAlreadySent):
            assert seat == 0 and twice_and_a_move and shares[0] == SHARES[2]
        else:
            assert isinstance(value, AlreadyDealt) and seat not in shares
    for kind, value in results[len(players):]:
        assert kind == "ok" or isinstance(value, (AlreadyDealt, ShareAlreadySent,
                                                  StaleSequence, IllegalMoveError)), value
    assert not any(e.type == "play" and e.seq < deal.seq for e in events)
    Partie.objects.filter(pk=partie.pk).update(status=Partie.Status.OVER)  # seat them again


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_shares_the_timer_and_moves_deal_once_and_lose_nothing(
        django_user_model: Any) -> None:
    players = [django_user_model.objects.create_user(f"racer{i}") for i in range(3)]
    _race(players, timer=False, twice_and_a_move=False)
    _race(players, timer=True, twice_and_a_move=False)
    _race(players, timer=True, twice_and_a_move=True)
