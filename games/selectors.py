"""Reads of parties and hands, and what a requester may see of them."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _

from games import signing
from games.engine.base import Event
from games.engine.visibility import redact_events
from games.errors import HandNotOver
from games.models import Hand, HandEvent, Invitation, Partie, Seat
from games.services import chips, store, verdicts


def partie_list() -> QuerySet[Partie]:
    """Parties newest first, with their seats and players, invitations and hands (a query
    each)."""
    seats = Prefetch("seats", queryset=Seat.objects.select_related("player"))
    invitations = Prefetch("invitations", queryset=Invitation.objects.select_related("player"))
    hands = Prefetch("hands", queryset=Hand.objects.order_by("number"))
    return (Partie.objects.select_related("created_by")
            .prefetch_related(seats, invitations, hands).order_by("-created_at"))


def invitations_pending(*, user: Any) -> QuerySet[Partie]:
    """The casual tables waiting for ``user``'s answer, newest first."""
    return partie_list().filter(status=Partie.Status.INVITING, invitations__player_id=user.pk,
                                invitations__answer=Invitation.Answer.PENDING)


def seat_of(hand: Hand, user: AbstractBaseUser | AnonymousUser,
            seats: Iterable[Seat] | None = None) -> int | None:
    if not user.is_authenticated:
        return None
    for seat in hand.partie.seats.all() if seats is None else seats:
        if seat.player_id == user.pk:
            return int(seat.number)
    return None


def hand_view(*, hand: Hand, user: AbstractBaseUser | AnonymousUser) -> dict[str, Any]:
    """The requester's view of a hand: his seat's (or a spectator's), his legal moves, whose turn
    it is and until when. Nothing of another seat's cards, the talon or the seed until the end."""
    return view_of(hand=hand, loaded=store.load(hand), seat=seat_of(hand, user),
                   next_hand=next_hand_of(hand))


def hand_view_by_id(*, hand_id: Any, user: AbstractBaseUser | AnonymousUser) -> dict[str, Any]:
    """``hand_view`` of the hand ``hand_id`` (Hand.DoesNotExist if there is none)."""
    hand = Hand.objects.select_related("partie", "secret").get(pk=hand_id)
    return hand_view(hand=hand, user=user)


def next_hand_of(hand: Hand) -> dict[str, Any] | None:
    """The partie's hand after ``hand`` (``{"id", "number"}``) once ``hand`` is over and the
    next one is dealt; else ``None``."""
    if hand.status != Hand.Status.OVER:
        return None
    found = (Hand.objects.filter(partie_id=hand.partie_id, number=hand.number + 1)
             .values("id", "number").first())
    return None if found is None else store.hand_ref(found["id"], found["number"])


def head_of(hand: Hand, *, next_hand: dict[str, Any] | None = None,
            last_hash: str | None = None) -> dict[str, Any]:
    """What a view shows of the hand row itself: its id, number, status and deadline, its
    commitment, and once it is over its seed, its digest and the partie's next hand."""
    over = hand.status == Hand.Status.OVER
    return {
        "format": hand.record_format,
        "hand": str(hand.id),
        "partie": str(hand.partie_id),
        "game": hand.partie.game,
        "number": hand.number,
        "status": hand.status,
        "seq": hand.last_seq,
        "deadline": hand.deadline,
        "deadline_kind": hand.deadline_kind or None,
        "commitment": hand.commitment,
        "digest": (last_hash or hand.last_hash) if over else None,
        "seed": hand.secret.seed if over else None,
        "next_hand": next_hand if over else None,
    }


def view_from(*, head: dict[str, Any], game: Any, state: Any, seat: int | None,
              receipt: dict[str, Any] | None) -> dict[str, Any]:
    """A viewer's view of a hand from its head (``head_of``) and its state: what the API
    answers and a live frame holds. Reads nothing: a live process builds each viewer's frame
    with it from the events a command sent."""
    over = head["status"] == Hand.Status.OVER
    view = game.view(state, seat)
    legal = game.legal_moves(state).get(seat, []) if seat is not None and not over else []
    return {
        "format": head["format"],
        "receipt": receipt,
        "digest": head["digest"],
        "hand": head["hand"],
        "partie": head["partie"],
        "game": head["game"],
        "number": head["number"],
        "status": head["status"],
        "seq": head["seq"],
        "your_seat": seat,
        "to_act": view.get("to_act", []),
        "legal_moves": [m.to_dict() for m in legal],
        "deadline": head["deadline"],
        "deadline_kind": head["deadline_kind"],
        "commitment": head["commitment"],
        "seed": head["seed"],
        "next_hand": head["next_hand"],
        "view": view,
    }


def view_of(*, hand: Hand, loaded: store.Loaded, seat: int | None,
            next_hand: dict[str, Any] | None = None,
            receipt: dict[str, Any] | None = None) -> dict[str, Any]:
    """``hand_view`` from a state already at hand (a move's answer: the command's own).
    ``next_hand``: the partie's next hand once this one is over and it is dealt; ``receipt``:
    the receipt of ``hand.last_seq`` when the caller signed it already."""
    return view_from(head=head_of(hand, next_hand=next_hand, last_hash=loaded.last_hash),
                     game=loaded.game, state=loaded.state, seat=seat,
                     receipt=receipt or receipt_of(hand, hand.last_seq, loaded.last_hash))


#: The receipt of what the service shows of a hand at a seq (version 3; else ``None``).
receipt_of = signing.hand_receipt


def hand_results(*, parties: Iterable[Any]) -> list[dict[str, Any]]:
    """The results of the parties' finished hands, in the order they ended: each hand's
    partie, number, end and ``hand_over`` result (net per seat)."""
    rows = (HandEvent.objects.filter(hand__partie__in=list(parties), type="hand_over")
            .order_by("hand__ended_at", "hand__number")
            .values_list("hand__partie_id", "hand__number", "hand__ended_at", "payload"))
    return [{"partie": partie, "number": number, "ended_at": ended, "result": payload["result"]}
            for partie, number, ended, payload in rows]


def partie_results(*, partie: Partie,
                   without: Collection[Any] = ()) -> list[tuple[str, dict[str, Any]]]:
    """The partie's ``hand_over`` and ``comet`` events, as (type, payload), hand by hand: what
    a soirée's standings count; ``without``: the ids of hands not to count (hands voided by
    a ruling)."""
    return list(HandEvent.objects.filter(hand__partie=partie, type__in=["hand_over", "comet"])
                .exclude(hand_id__in=list(without))
                .order_by("hand__number", "seq").values_list("type", "payload"))


def hand_outcome(*, hand_id: Any) -> tuple[dict[str, Any], list[int]]:
    """A finished hand's result (its ``hand_over`` event's) and the seats that played a
    Comet in it, read from its own events."""
    result: dict[str, Any] = {"net": {}}
    comets: list[int] = []
    for kind, payload in (HandEvent.objects.filter(hand_id=hand_id, type__in=["hand_over", "comet"])
                          .order_by("seq").values_list("type", "payload")):
        if kind == "hand_over":
            result = payload["result"]
        else:
            comets.append(int(payload["seat"]))
    return result, comets


def hand_events(*, hand: Hand, user: AbstractBaseUser | AnonymousUser) -> list[dict[str, Any]]:
    """The hand's events as the requester may see them; a version-3 hand's with their chain
    and seals, so that he can check every hash."""
    return redact_events(store.with_seals(hand, store.events(hand)), viewer=seat_of(hand, user),
                         n_seats=hand.partie.seats.count(), over=hand.status == Hand.Status.OVER,
                         chain=hand.record_format == 3)


def hand_record(*, hand: Hand) -> dict[str, Any]:
    """The HAND_RECORD.md document of a finished hand."""
    return verdicts.record_of(hand)


def hand_verification(*, hand: Hand) -> dict[str, Any]:
    """The finished hand's record verified now: ok, its digest, the discrepancy found."""
    return verdicts.verification_of(hand)


def hand_verdict(*, hand: Hand) -> dict[str, Any]:
    """The verdict on a finished hand's record, as the clock kept it (or made now if it has
    none yet, or the hand's chain head changed since): ok, digest, discrepancy, head, at."""
    return verdicts.hand_verdict(hand)


def verdict_of(*, hand_id: Any, verdict: dict[str, Any] | None, last_hash: str) -> dict[str, Any]:
    """``hand_verdict`` for a sheet that read the hand's ``verdict`` and ``last_hash`` columns
    among many rows: the hand itself is read only when the kept verdict will not do."""
    if verdict is not None and verdicts.still_holds(verdict, last_hash):
        return verdict
    return verdicts.hand_verdict(Hand.objects.select_related("partie", "secret").get(pk=hand_id))


def hand_replay(*, hand: Hand) -> list[dict[str, Any]]:
    """A finished hand, step by step: after each event, the table as everyone may now see it
    (every seat's cards, the offer's card), with the event as the record has it."""
    if hand.status != Hand.Status.OVER:
        raise HandNotOver(_("the replay is published once the hand is over"))
    n = hand.partie.seats.count()
    engine, state = store.start(hand, n)
    steps = []
    for raw in store.events(hand):
        event = Event.from_dict(raw)
        state = engine.apply(state, event)
        view = engine.view(state, None)
        hands = {}
        for seat in range(n):
            mine = engine.view(state, seat)
            hands[str(seat)] = mine.get("hand") or []
            if view.get("offer") and mine.get("offer", {}).get("card"):
                view["offer"] = mine["offer"]
        view["all_hands"] = hands
        moved = engine.move_of(event)
        steps.append({"event": raw, "move": moved is not None,
                      "seat": moved[0] if moved else None, "view": view,
                      "to_act": view.get("to_act", [])})
    return steps


def seats_chips(*, seats: Iterable[Seat]) -> dict[int, int]:
    """Each seat's chips now (by the seat's pk), as the ledger holds them: a person's club
    wallet, a bot's wallet of its table (public at the table: every seat's chips are shown).
    One query, however many parties the seats are at."""
    return chips.seats_balances(seats=list(seats))
