"""Live table updates on Django Channels' channel layer.

Each partie has one group. Once a command commits, one message goes to it (``publish``): the
events the command appended, hand by hand, each hand with its head as the command left it
(``selectors.head_of``) and the receipt of each event's seq. The events travel whole, their
hidden values in clear: the layer is the service's own (Redis, or the process's memory), and no
client reads it. Each consumer (games/consumers.py) holds the hand it follows, as its viewer's
page does, and builds its own viewer's frames from the message (``Follower``): the event folded
into its state by the engine, the hand as that viewer sees it right after the event (the shape
of ``GET /api/hands/{id}/``, from ``selectors.view_from``) and the event redacted for that
viewer (``visibility.redact_events``). Nothing is replayed or read for a push: a message costs
each connection one ``apply`` and one ``view`` per event. A spectator's frames hold no hand's
cards, a seat's frames only its own, and none holds the seed or the talon before the hand is
over.

Frames carry their hand's id and the event's ``seq``. A consumer that meets a hand it does not
follow, or a gap in the seqs, catches up from the event store (``catch_up``), as does a client
that reconnects naming the last seq it saw (``?hand=<id>&after=<seq>``); the frames are the
same, built by the same ``Follower``. A frame may then arrive twice, and the client skips a seq
it has seen. Without ``after`` the first frame is the partie's latest hand as it is now.

The layer is channels-redis with Redis (the web workers, the Celery worker and the ASGI server
are separate processes), and ``InProcessChannelLayer`` in the embedded default, where
``manage.py serve`` runs everything in one process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

from games import selectors
from games.engine.base import Event
from games.engine.protocol import Game
from games.engine.visibility import redact_events
from games.models import Hand, Partie
from games.services import store

logger = logging.getLogger(__name__)

#: The consumers' handler of a group message (``live.commit`` → ``live_commit``).
MESSAGE_TYPE = "live.commit"
#: A partie frame's status while a person who left the table has it wait for him (the partie
#: is playing, paused); "playing" again once it resumes. Who paused it is public, and is read
#: with ``GET /api/parties/{id}/away``: the frame holds no name, and no card.
PAUSED = "paused"


def group_of(partie_id: Any) -> str:
    return f"partie.{partie_id}"


def partie_frame(partie_id: Any, status: str) -> dict[str, Any]:
    """The frame that says the partie is over, paused or playing again: no hand, no seq."""
    return {"kind": "partie", "partie": str(partie_id), "partie_status": str(status)}


class Gap(Exception):
    """The events do not follow the state a ``Follower`` holds: catch up from the store."""


@dataclass
class Follower:
    """A hand as one viewer follows it: its engine, and its state at ``seq``."""

    hand: str
    game: Game
    state: Any
    seq: int
    n_seats: int
    chain: bool

    @classmethod
    def from_store(cls, hand: Hand, n_seats: int, *, upto: int) -> tuple[Follower, list[Any]]:
        """The hand's follower at seq ``upto`` (its events replayed), and its later events."""
        game, state = store.start(hand, n_seats)
        stream = store.with_seals(hand, store.events(hand))
        seq = 0
        for event in stream:
            if event["seq"] > upto:
                break
            state = game.apply(state, Event.from_dict(_unsealed(event)))
            seq = event["seq"]
        follower = cls(hand=str(hand.pk), game=game, state=state, seq=seq, n_seats=n_seats,
                       chain=hand.record_format == 3)
        return follower, [e for e in stream if e["seq"] > seq]

    def frames(self, *, head: dict[str, Any], events: Sequence[dict[str, Any]],
               receipts: Sequence[dict[str, Any] | None], seat: int | None
               ) -> list[dict[str, Any]]:
        """``seat``'s frames (``None``: a spectator) of ``events``, which follow this
        follower's seq (a seq it has passed is skipped), each with the receipt of its seq;
        the last shows the hand as ``head``. Raises ``Gap`` if one is missing."""
        out = []
        last_seq = events[-1]["seq"] if events else self.seq
        over = head["status"] == Hand.Status.OVER
        for event, receipt in zip(events, receipts, strict=True):
            seq = event["seq"]
            if seq <= self.seq:
                continue
            if seq != self.seq + 1:
                raise Gap(f"hand {self.hand}: seq {seq} after {self.seq}")
            self.state = self.game.apply(self.state, Event.from_dict(_unsealed(event)))
            self.seq = seq
            last = seq == last_seq
            # Between two events of one command the hand was playing and waited on no
            # recorded deadline.
            at = head if last else {**head, "status": Hand.Status.PLAYING, "seq": seq,
                                    "deadline": None, "deadline_kind": None, "digest": None,
                                    "seed": None, "next_hand": None}
            view = selectors.view_from(head=at, game=self.game, state=self.state, seat=seat,
                                       receipt=receipt)
            view["status"] = str(view["status"])
            # A hand's last event is its hand_over: its frame shows it as the record does.
            shown = (dict(event) if last and over else
                     redact_events([event], viewer=seat, n_seats=self.n_seats, over=False,
                                   chain=self.chain)[0])
            out.append({"kind": "hand", **view, "event": shown})
        return out


def _unsealed(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != "seals"}


def _head(hand: Hand, next_hand: dict[str, Any] | None) -> dict[str, Any]:
    """``selectors.head_of`` in plain JSON types: a message crosses the layer (msgpack with
    Redis) as it is."""
    head = selectors.head_of(hand, next_hand=next_hand)
    head["status"] = str(head["status"])
    head["deadline"] = head["deadline"].isoformat() if head["deadline"] else None
    return head


def hand_frames(hand: Hand, n_seats: int, seat: int | None, *,
                after: int) -> tuple[list[dict[str, Any]], Follower]:
    """``seat``'s frames of the events of ``hand`` after seq ``after``, read from the event
    store (a catch-up), and the follower at the hand's last seq."""
    follower, later = Follower.from_store(hand, n_seats, upto=after)
    if not later:
        return [], follower
    head = _head(hand, selectors.next_hand_of(hand))
    receipts = [selectors.receipt_of(hand, e["seq"], e["hash"]) for e in later]
    return follower.frames(head=head, events=later, receipts=receipts, seat=seat), follower


def catch_up(*, partie_id: Any, seat: int | None, hand_id: Any = None,
             after: int | None = None) -> tuple[list[dict[str, Any]], Follower | None]:
    """What a client of ``seat`` (``None``: a spectator) is sent when it joins or has missed
    a seq: the frames of ``hand_id`` after ``after`` if it names one of the partie's hands,
    then the partie's latest hand as it is now if that is another hand (or the client named
    none), then the partie's end if it is over, or its pause; and the follower of the latest
    hand."""
    partie = Partie.objects.get(pk=partie_id)
    n_seats = partie.seats.count()
    hands = Hand.objects.select_related("partie", "secret").filter(partie=partie)
    latest = hands.order_by("-number").first()
    out: list[dict[str, Any]] = []
    follower = None
    if hand_id is not None and after is not None:
        known = hands.filter(pk=hand_id).first()
        if known is not None:
            frames, follower = hand_frames(known, n_seats, seat, after=after)
            out += frames
            if latest is not None and latest.pk == known.pk:
                latest = None
    if latest is not None:
        frames, follower = hand_frames(latest, n_seats, seat, after=latest.last_seq - 1)
        out += frames
    if partie.status == Partie.Status.OVER:
        out.append(partie_frame(partie.pk, partie.status))
    elif partie.paused_at is not None:
        out.append(partie_frame(partie.pk, PAUSED))
    return out, follower


def message_of(*, partie: Partie, changed: Sequence[tuple[Hand, list[Any]]],
               closed: bool, paused: bool | None = None) -> dict[str, Any]:
    """The one message of a commit: each hand it changed with its head and the events it
    appended (with their seals), and whether it closed the partie, paused it or resumed it."""
    numbers = {hand.number: hand for hand, _events in changed}
    hands = []
    for hand, events in changed:
        following = numbers.get(hand.number + 1)
        head = _head(hand, None if following is None
                     else store.hand_ref(following.pk, following.number))
        sealed = store.with_seals(hand, events)
        hands.append({"head": head, "events": sealed,
                      "receipts": [selectors.receipt_of(hand, e["seq"], e["hash"])
                                   for e in sealed]})
    status = (str(Partie.Status.OVER) if closed else None if paused is None
              else PAUSED if paused else str(Partie.Status.PLAYING))
    return {"type": MESSAGE_TYPE, "partie": str(partie.pk), "hands": hands,
            "partie_status": status}


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # the command has committed: a lost push is caught up on reconnection
        logger.warning("live: message for %s not sent", group, exc_info=True)


def publish(*, partie: Partie, changed: Sequence[tuple[Hand, list[Any]]],
            closed: bool = False, paused: bool | None = None) -> None:
    """After a command commits: its one message to the partie's group."""
    if not changed and not closed and paused is None:
        return
    _send(group_of(partie.pk), message_of(partie=partie, changed=changed, closed=closed,
                                          paused=paused))


def on_committed(*, partie: Any, changed: Any, closed: bool = False, paused: bool | None = None,
                 **_: Any) -> None:
    publish(partie=partie, changed=changed, closed=closed, paused=paused)


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
