"""Reads of parties and hands, and what a requester may see of them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, QuerySet

from games.engine.base import Event
from games.engine.record import build_record
from games.engine.verify import Discrepancy, verify_record
from games.errors import HandNotOver
from games.models import Hand, Partie, Seat
from games.services import recent, store
from games.services.moves import one_statement_possible
from games.visibility import redact_events


def partie_list() -> QuerySet[Partie]:
    """Parties newest first, with their seats and players (one query) and hands (one query,
    without their snapshots: a few kilobytes each that a listing never shows)."""
    seats = Prefetch("seats", queryset=Seat.objects.select_related("player"))
    hands = Prefetch("hands", queryset=Hand.objects.defer("snapshot").order_by("number"))
    return Partie.objects.prefetch_related(seats, hands).order_by("-created_at")


def hand_list(*, partie: Partie) -> QuerySet[Hand]:
    return partie.hands.defer("snapshot").order_by("number")


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
    """``hand_view`` in one statement: the hand, its partie, seed and seats read together
    (store.read_hand), its state from its snapshot. Hand.DoesNotExist if there is none.

    A hand in play read by one of its players, with its state from the snapshot, is offered to
    this process's kept hands (recent.py): a player reads the hand before he moves, and his
    move, if this process serves it, need not read it again. Only a committed read is offered
    (outside a transaction), and never a replay: without the hand's lock, the events replayed
    may have moved on past the row read."""
    hand, seats, following = store.read_hand_and_next(hand_id)
    seat = seat_of(hand, user, seats)
    snapshot = store.from_snapshot(hand)
    if snapshot is not None and seat is not None and one_statement_possible():
        recent.hands.offer(hand, seats, snapshot)
    return view_of(hand=hand, loaded=snapshot or store.replay(hand), seat=seat,
                   next_hand=following)


def next_hand_of(hand: Hand) -> dict[str, Any] | None:
    """The partie's hand after ``hand`` (``{"id", "number"}``) once ``hand`` is over and the
    next one is dealt; else ``None``."""
    if hand.status != Hand.Status.OVER:
        return None
    found = (Hand.objects.filter(partie_id=hand.partie_id, number=hand.number + 1)
             .values("id", "number").first())
    return None if found is None else store.hand_ref(found["id"], found["number"])


def view_of(*, hand: Hand, loaded: store.Loaded, seat: int | None,
            next_hand: dict[str, Any] | None = None) -> dict[str, Any]:
    """``hand_view`` from a state already at hand (a move's answer: the command's own).
    ``next_hand``: the partie's next hand once this one is over and it is dealt."""
    over = hand.status == Hand.Status.OVER
    view = loaded.game.view(loaded.state, seat)
    legal = loaded.game.legal_moves(loaded.state).get(seat, []) if seat is not None else []
    return {
        "hand": str(hand.id),
        "partie": str(hand.partie_id),
        "game": hand.partie.game,
        "number": hand.number,
        "status": hand.status,
        "seq": hand.last_seq,
        "your_seat": seat,
        "to_act": view.get("to_act", []),
        "legal_moves": [m.to_dict() for m in legal] if not over else [],
        "deadline": hand.deadline,
        "deadline_kind": hand.deadline_kind or None,
        "commitment": hand.commitment,
        "seed": hand.secret.seed if over else None,
        "next_hand": next_hand if over else None,
        "view": view,
    }


def hand_events(*, hand: Hand, user: AbstractBaseUser | AnonymousUser) -> list[dict[str, Any]]:
    return redact_events(store.events(hand), viewer=seat_of(hand, user),
                         n_seats=hand.partie.seats.count(), over=hand.status == Hand.Status.OVER)


def hand_record(*, hand: Hand) -> dict[str, Any]:
    """The HAND_RECORD.md document of a finished hand."""
    if hand.status != Hand.Status.OVER:
        raise HandNotOver("the record is published once the hand is over")
    return build_record(
        game=hand.partie.game, hand=str(hand.id), table=hand.partie.table_label,
        partie=str(hand.partie_id), number=hand.number, seed=hand.secret.seed,
        deck=store.hand_deck(hand), events=store.events(hand),
    )


def hand_verification(*, hand: Hand) -> dict[str, Any]:
    record = hand_record(hand=hand)
    try:
        return {"ok": True, "digest": verify_record(record), "discrepancy": None}
    except Discrepancy as exc:
        return {"ok": False, "digest": record.get("digest"), "discrepancy": str(exc)}


def replayed_events(hand: Hand) -> list[Event]:
    return [Event.from_dict(e) for e in store.events(hand)]
