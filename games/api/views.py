"""The hand API: thin views that validate, call one service or selector, and answer."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.renderers import JSONRenderer
from games import live, selectors, services
from games.api import serializers as s
from games.engine.base import Move
from games.models import Hand, Partie


def _hand(hand_id: str) -> Hand:
    # The seats come in one query, used by both the seat lookup and the deck (seat count).
    # These views read the events, not the snapshot.
    hands = (Hand.objects.select_related("partie", "secret").prefetch_related("partie__seats")
             .defer("snapshot"))
    return get_object_or_404(hands, pk=hand_id)


class PartieListView(APIView):
    @extend_schema(responses=s.PartieSerializer(many=True))
    def get(self, request: Request) -> Response:
        parties = selectors.partie_list()[:100]
        return Response(s.PartieSerializer(parties, many=True).data)

    @extend_schema(request=s.PartieCreateSerializer, responses={201: s.PartieSerializer})
    def post(self, request: Request) -> Response:
        data = s.PartieCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        partie = services.partie_start(
            game=v["game"], players=v["players"], bots=v["bots"], options=v["options"],
            buy_in=v["buy_in"], table_label=v["table_label"],
            move_timeout=timedelta(seconds=v["move_timeout"]),
            forced_move_delay=timedelta(seconds=v["forced_move_delay"]),
            comet_window=timedelta(seconds=v["comet_window"]),
            pause_between_hands=timedelta(seconds=v["pause_between_hands"]),
            created_by=request.user, at=timezone.now(),
        )
        partie = selectors.partie_list().get(pk=partie.pk)
        return Response(s.PartieSerializer(partie).data, status=status.HTTP_201_CREATED)


class PartieDetailView(APIView):
    @extend_schema(responses=s.PartieSerializer)
    def get(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(selectors.partie_list(), pk=partie_id)
        return Response(s.PartieSerializer(partie).data)


class EventStreamRenderer(BaseRenderer):
    """``text/event-stream``, for the live stream's clients. A refused request (401, 403, 404)
    is answered with one ``error`` event whose data is the API's usual JSON answer."""

    media_type = "text/event-stream"
    format = "event-stream"
    charset = None

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"


def _current(partie_id: Any) -> dict[str, Any]:
    """The partie and its latest hand as an announcement: a stream's first message."""
    partie = Partie.objects.only("id", "status").get(pk=partie_id)
    hand = (Hand.objects.filter(partie_id=partie_id).only("id", "number", "last_seq", "status")
            .order_by("-number").first())
    return live.announcement(partie=partie, hand=hand)


class PartieLiveView(APIView):
    """Server-sent events: the partie's announcements (games/live.py)."""

    renderer_classes = [EventStreamRenderer, JSONRenderer]

    @extend_schema(
        responses={(200, "text/event-stream"): OpenApiTypes.STR},
        description=(
            "Live updates of a partie, as server-sent events. The first event is the partie's "
            "latest hand; then one event each time a command leaves a hand of the partie "
            "somewhere new (a move, a forced move, a time-out, a deal), and one when the "
            "partie closes. Each event's data is JSON: `partie`, `partie_status`, `hand`, "
            "`number`, `seq`, `status` (the hand fields are null for the partie alone). "
            "Nothing hidden is ever sent: read the hand again for your view of it. The "
            "stream ends after a while (ACADEMIE_LIVE_SECONDS) and the browser reconnects."),
    )
    def get(self, request: Request, partie_id: str) -> StreamingHttpResponse:
        if not Partie.objects.filter(pk=partie_id).exists():
            raise NotFound("no such partie")
        current = functools.partial(_current, partie_id)
        keepalive = settings.ACADEMIE_LIVE_KEEPALIVE_SECONDS
        seconds = settings.ACADEMIE_LIVE_SECONDS
        events: Any
        if isinstance(request._request, ASGIRequest):
            events = live.astream(live.hub(), partie_id, current, seconds=seconds,
                                  keepalive=keepalive)
        else:
            # A WSGI server whose worker serves one request at a time (gunicorn's sync
            # workers) must not be held by a stream: it answers the first event and ends, and
            # the browser reconnects after the retry. The live server is ASGI (README).
            if not request.META.get("wsgi.multithread", False):
                seconds = 0
            events = live.stream(live.hub(), partie_id, current, seconds=seconds,
                                 keepalive=keepalive)
        response = StreamingHttpResponse(events, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        origin = request.headers.get("Origin")
        if origin and origin in settings.ACADEMIE_LIVE_ORIGINS:  # pages served elsewhere
            response["Access-Control-Allow-Origin"] = origin
            response["Access-Control-Allow-Credentials"] = "true"
            response["Vary"] = "Origin"
        return response


class HandDetailView(APIView):
    @extend_schema(responses=dict)
    def get(self, request: Request, hand_id: str) -> Response:
        try:
            return Response(selectors.hand_view_by_id(hand_id=hand_id, user=request.user))
        except Hand.DoesNotExist:
            raise Http404("no such hand") from None


class HandMovesView(APIView):
    @extend_schema(request=s.MoveRequestSerializer, responses=dict)
    def post(self, request: Request, hand_id: str) -> Response:
        v = s.MoveRequestSerializer.well_formed(request.data)
        if v is None:  # anything unusual: the serializer's checks and messages
            data = s.MoveRequestSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            v = data.validated_data
        m = v["move"]
        try:
            played = services.move_play(
                hand_id=hand_id, user=request.user,
                move=Move(type=m["type"], card=m.get("card"), suit=m.get("suit")),
                seq=v["seq"], command_id=v["command_id"], at=timezone.now(),
            )
        except Hand.DoesNotExist:
            raise Http404("no such hand") from None
        # The hand as the command left it, not read again. ``command`` is the stored first
        # answer: a retry gets it again even if the hand has moved on since; the view around
        # it is then the hand as it is now, whose next hand is looked up (the stored answer's
        # may be older, or absent when the retried move did not end the hand).
        following = (selectors.next_hand_of(played.hand) if played.retried
                     else played.response.get("next_hand"))
        view = selectors.view_of(hand=played.hand, loaded=played.loaded, seat=played.seat,
                                 next_hand=following)
        return Response({**view, "command": played.response}, status=status.HTTP_201_CREATED)


class HandEventsView(APIView):
    @extend_schema(responses=dict)
    def get(self, request: Request, hand_id: str) -> Response:
        hand = _hand(hand_id)
        return Response({"hand": str(hand.id), "over": hand.status == Hand.Status.OVER,
                         "events": selectors.hand_events(hand=hand, user=request.user)})


class HandRecordView(APIView):
    @extend_schema(responses=dict)
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_record(hand=_hand(hand_id)))


class HandVerifyView(APIView):
    @extend_schema(responses=dict)
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_verification(hand=_hand(hand_id)))
