"""Live table updates on Django Channels' channel layer.

Each partie has a public group, which any signed-in person may join, and each seat a private
group, which only the person in that seat may join (games/consumers.py). Once a command commits,
every event it appended is sent to each group as a frame: the hand as that audience sees it
right after the event (the shape of ``GET /api/hands/{id}/``, from ``selectors.view_of``) plus
the event itself, redacted for that audience (``visibility.redact_events``). A spectator's
frames hold no hand's cards, a seat's frames only its own, and none holds the seed or the talon
before the hand is over.

Frames carry their hand's id and the event's ``seq``. A client that reconnects names the last
one it saw (``?hand=<id>&after=<seq>``) and gets what it missed, built again from the event
store by the same code (``catch_up``); a frame may then arrive twice, and the client skips a seq
it has seen. Without ``after`` the first frame is the partie's latest hand as it is now.

The layer is channels-redis with Redis (the web workers, the Celery worker and the ASGI server
are separate processes), and ``InProcessChannelLayer`` in the embedded default, where
``manage.py serve`` runs everything in one process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

from games import selectors
from games.engine.base import Event
from games.engine.visibility import redact_events
from games.models import Hand, Partie, Seat
from games.services import store

logger = logging.getLogger(__name__)

#: The consumers' handler of a group message (``live.frames`` → ``live_frames``).
MESSAGE_TYPE = "live.frames"


def public_group(partie_id: Any) -> str:
    return f"partie.{partie_id}"


def seat_group(partie_id: Any, seat: int) -> str:
    return f"partie.{partie_id}.seat.{seat}"


def group_of(partie_id: Any, seat: int | None) -> str:
    return public_group(partie_id) if seat is None else seat_group(partie_id, seat)


def partie_frame(partie: Partie) -> dict[str, Any]:
    """The frame that says the partie is over (or still playing): no hand, no seq."""
    return {"kind": "partie", "partie": str(partie.pk), "partie_status": str(partie.status)}


def hand_frames(hand: Hand, seats: Sequence[int], audiences: Iterable[int | None], *,
                after: int) -> dict[int | None, list[dict[str, Any]]]:
    """Each audience's frames (``None``: a spectator) of the events of ``hand`` after seq
    ``after``, one per event, in order: read from the event store and replayed, so that a live
    push and a reconnection's catch-up are the same frames."""
    audiences = list(audiences)
    stream = store.events(hand)
    if not stream or stream[-1]["seq"] <= after:
        return {a: [] for a in audiences}
    game, state = store.start(hand, len(seats))
    over = hand.status == Hand.Status.OVER
    # Events are redacted as seen during the hand; the last frame of a hand that is over shows
    # them as its record does. A hand's last event is its hand_over, so only that frame is over.
    sealed = store.with_seals(hand, stream)
    chain = hand.record_format == 3
    shown = {a: redact_events(sealed, viewer=a, n_seats=len(seats), over=False, chain=chain)
             for a in audiences}
    last_seq = stream[-1]["seq"]
    next_hand = selectors.next_hand_of(hand) if over else None
    frames: dict[int | None, list[dict[str, Any]]] = {a: [] for a in audiences}
    for i, event in enumerate(stream):
        state = game.apply(state, Event.from_dict(event))
        seq = event["seq"]
        if seq <= after:
            continue
        last = seq == last_seq
        # Between two events the hand was playing and waited on no recorded deadline: a
        # stand-in row at that seq, never saved, lets view_of build the view as the API does.
        at = hand if last else Hand(id=hand.pk, partie=hand.partie, number=hand.number,
                                    status=Hand.Status.PLAYING, last_seq=seq,
                                    commitment=hand.commitment,
                                    record_format=hand.record_format)
        loaded = store.Loaded(game=game, state=state, last_hash=event["hash"])
        receipt = selectors.receipt_of(hand, seq, event["hash"])
        for audience in audiences:
            view = selectors.view_of(hand=at, loaded=loaded, seat=audience,
                                     next_hand=next_hand if last else None, receipt=receipt)
            # Plain JSON types: frames cross the layer (msgpack with Redis) as they are.
            view["status"] = str(view["status"])
            view["deadline"] = view["deadline"].isoformat() if view["deadline"] else None
            frames[audience].append({
                "kind": "hand", **view,
                "event": sealed[i] if last and over else shown[audience][i],
            })
    return frames


def _seat_numbers(partie: Partie) -> list[int]:
    return sorted(int(n) for n in Seat.objects.filter(partie=partie)
                  .values_list("number", flat=True))


def catch_up(*, partie_id: Any, seat: int | None, hand_id: Any = None,
             after: int | None = None) -> list[dict[str, Any]]:
    """What a client of ``seat`` (``None``: a spectator) is sent when it joins: the frames of
    ``hand_id`` after ``after`` if it names one of the partie's hands, then the partie's latest
    hand as it is now if that is another hand (or the client named none), then the partie's
    end if it is over."""
    partie = Partie.objects.get(pk=partie_id)
    seats = _seat_numbers(partie)
    hands = Hand.objects.select_related("partie", "secret").filter(partie=partie)
    latest = hands.order_by("-number").first()
    out: list[dict[str, Any]] = []
    if hand_id is not None and after is not None:
        known = hands.filter(pk=hand_id).first()
        if known is not None:
            out += hand_frames(known, seats, [seat], after=after)[seat]
            if latest is not None and latest.pk == known.pk:
                latest = None
    if latest is not None:
        out += hand_frames(latest, seats, [seat], after=latest.last_seq - 1)[seat]
    if partie.status == Partie.Status.OVER:
        out.append(partie_frame(partie))
    return out


def _send(groups: dict[str, list[dict[str, Any]]]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return

    async def send_all() -> None:
        await asyncio.gather(*(layer.group_send(g, {"type": MESSAGE_TYPE, "frames": f})
                               for g, f in groups.items() if f))

    try:
        async_to_sync(send_all)()
    except Exception:  # the command has committed: a lost push is caught up on reconnection
        logger.warning("live: frames for %s not sent", ", ".join(groups), exc_info=True)


def publish_hand(*, partie: Any, hand: Any, events: Sequence[Any]) -> None:
    """After a command commits: send the events it appended to ``hand`` to the partie's public
    group and to each seat's group, each audience its own frames."""
    if not events:
        return
    seats = _seat_numbers(partie)
    audiences: list[int | None] = [None, *seats]
    frames = hand_frames(hand, seats, audiences, after=int(events[0]["seq"]) - 1)
    _send({group_of(partie.pk, a): frames[a] for a in audiences})


def on_hand_changed(*, partie: Any, hand: Any, events: Sequence[Any], **_: Any) -> None:
    publish_hand(partie=partie, hand=hand, events=events)


def on_partie_closed(*, partie: Any, **_: Any) -> None:
    publish_partie(partie=partie)


def publish_partie(*, partie: Any) -> None:
    """After a partie closes: tell the public group and every seat."""
    frame = partie_frame(partie)
    _send({group_of(partie.pk, a): [frame] for a in [None, *_seat_numbers(partie)]})


class InProcessChannelLayer(InMemoryChannelLayer):
    """Channels' in-memory layer for a process whose commands also run outside the server's
    event loop (the embedded default's timer and clock threads, each ``async_to_sync`` call
    there on a loop of its own). The in-memory layer's queues belong to the loop that waits on
    them, and are not safe to fill from another thread: a send from another loop is handed to
    the loop that receives."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._receiving: asyncio.AbstractEventLoop | None = None

    async def receive(self, channel: str) -> Any:
        self._receiving = asyncio.get_running_loop()
        return await super().receive(channel)

    def _elsewhere(self) -> asyncio.AbstractEventLoop | None:
        loop = self._receiving
        if loop is None or loop.is_closed() or not loop.is_running():
            return None
        return None if loop is asyncio.get_running_loop() else loop

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        loop = self._elsewhere()
        if loop is None:
            return await super().send(channel, message)
        parent = super()
        await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(parent.send(channel, message), loop))

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        loop = self._elsewhere()
        if loop is None:
            return await super().group_send(group, message)
        parent = super()
        await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(parent.group_send(group, message), loop))
