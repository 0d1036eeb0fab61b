"""The live table's WebSocket endpoints (games/live.py).

``ws/parties/<id>/``: the partie's public frames, for who may see the partie (its club's members,
or a casual table's players, and staff: games/permissions.py). ``ws/parties/<id>/seats/<n>/``:
seat n's frames, holding its cards, for the person in that seat only. Both join the partie's one
group; each connection builds its own viewer's frames from a commit's message (``live.Follower``),
so who may see what is decided here, at the handshake, and in the redaction. A refusal is sent
after the handshake, as a close code a page can read (the 4000s mirror the HTTP status): 4400 a
malformed ``hand`` or ``after``, 4401 not signed in, 4403 not this seat's player or not one who
may see the partie, 4404 no such partie or seat.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from games import live, permissions
from games.models import Partie, Seat

BAD_REQUEST, NOT_SIGNED_IN, FORBIDDEN, NOT_FOUND = 4400, 4401, 4403, 4404


def _refusal(user: Any, partie_id: Any, seat: int | None) -> int | None:
    if not user.is_authenticated:
        return NOT_SIGNED_IN
    if not Partie.objects.filter(pk=partie_id).exists():
        return NOT_FOUND
    if seat is None:
        # The public frames, for who may see the partie (games/permissions.py).
        return None if permissions.may_view(user, Partie.objects.get(pk=partie_id)) else FORBIDDEN
    found = Seat.objects.filter(partie_id=partie_id, number=seat).values("player_id").first()
    if found is None:
        return NOT_FOUND
    return None if found["player_id"] == user.pk else FORBIDDEN


def _since(values: dict[str, Any]) -> tuple[uuid.UUID | None, int | None] | None:
    """``hand`` and ``after`` as given (both or neither), or ``None`` if malformed."""
    hand, after = values.get("hand"), values.get("after")
    if hand is None and after is None:
        return None, None
    try:
        hand_id, seq = uuid.UUID(str(hand)), int(str(after))
    except ValueError:
        return None
    return (hand_id, seq) if seq >= 0 else None


class PartieConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.partie_id, self.seat = kwargs["partie_id"], kwargs.get("seat")
        self.group = None
        self.follower: live.Follower | None = None
        query = {k: v[-1] for k, v in parse_qs(self.scope["query_string"].decode()).items()}
        since = _since(query)
        refusal = (BAD_REQUEST if since is None else
                   await database_sync_to_async(_refusal)(self.scope["user"], self.partie_id,
                                                          self.seat))
        await self.accept()
        if refusal is not None:
            await self.close(code=refusal)
            return
        assert since is not None
        # Joined before the catch-up is read, so that nothing committed in between is missed.
        self.group = live.group_of(self.partie_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self._catch_up(*since)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """``{"hand": id, "after": seq}``: send again what followed that seq."""
        since = _since(content) if isinstance(content, dict) else None
        if since is None or since[0] is None:
            await self.send_json({"kind": "error", "detail":
                                  "send {\"hand\": <hand id>, \"after\": <seq>}"})
            return
        await self._catch_up(*since)

    async def _catch_up(self, hand_id: uuid.UUID | None, after: int | None) -> None:
        frames, self.follower = await database_sync_to_async(live.catch_up)(
            partie_id=self.partie_id, seat=self.seat, hand_id=hand_id, after=after)
        for frame in frames:
            await self.send_json(frame)

    async def live_commit(self, message: dict[str, Any]) -> None:
        """A commit's message: this viewer's frames of each hand it changed, built from the
        hand this connection follows. A hand the commit began is read from the store from its
        start, and a missed seq from where this connection stopped, with the rest of the
        message (the store holds it: the message is sent once the commit is done)."""
        frames: list[dict[str, Any]] = []
        since: tuple[uuid.UUID | None, int | None] | None = None
        for changed in message["hands"]:
            head, events, follower = changed["head"], changed["events"], self.follower
            if follower is not None and follower.hand == head["hand"]:
                try:
                    frames += follower.frames(head=head, events=events,
                                              receipts=changed["receipts"], seat=self.seat)
                    continue
                except live.Gap:
                    since = (uuid.UUID(follower.hand), follower.seq)
            elif events and events[0]["seq"] == 1:
                since = (uuid.UUID(head["hand"]), 0)
            else:
                since = ((uuid.UUID(follower.hand), follower.seq) if follower is not None
                         else (None, None))
            break
        for frame in frames:
            await self.send_json(frame)
        if since is not None:
            await self._catch_up(*since)
        # The partie's news follows its hands' frames, caught up or not.
        if message["partie_status"] is not None:
            await self.send_json(live.partie_frame(message["partie"], message["partie_status"]))
