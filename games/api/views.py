"""The hand API: thin views that validate, call one service or selector, and answer."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Count, OuterRef, Prefetch, QuerySet, Subquery
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotAcceptable, NotFound, ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import live, selectors, services
from games.api import serializers as s
from games.engine.base import Move
from games.models import Hand, Partie, Seat


def _hand(hand_id: str) -> Hand:
    # The seats come in one query, used by both the seat lookup and the deck (seat count).
    hands = Hand.objects.select_related("partie", "secret").prefetch_related("partie__seats")
    return get_object_or_404(hands, pk=hand_id)


class PartieListView(ListAPIView[Any]):
    """Parties newest first, a page at a time (config.pagination), without their hands."""

    serializer_class = s.PartieListSerializer

    def get_queryset(self) -> QuerySet[Partie]:
        seats = Prefetch("seats", queryset=Seat.objects.select_related("player"))
        return (selectors.partie_list().prefetch_related(None).prefetch_related(seats)
                .annotate(hands_dealt=Count("hands", distinct=True))
                .order_by("-created_at", "-pk"))

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
    is answered with one ``error`` event whose data is the API's usual JSON answer, written by
    the API's renderer (compact: on one line, as an event's data must be). A client that asks
    for JSON gets its refusals as JSON, and a 406 for a stream it could have had."""

    media_type = "text/event-stream"
    format = "event-stream"
    charset = None

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        return b"event: error\ndata: " + JSONRenderer().render(data) + b"\n\n"


LIVE_MAX_PARTIES = 50


def _current(partie_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The parties and their latest hands as announcements, in the order asked: a stream's
    first messages."""
    latest = Hand.objects.filter(partie=OuterRef("pk")).order_by("-number").values("pk")[:1]
    parties = {str(p.pk): p for p in Partie.objects.filter(pk__in=partie_ids)
               .only("id", "status").annotate(latest=Subquery(latest))}
    hands = {h.pk: h for h in Hand.objects.filter(pk__in=[p.latest for p in parties.values()])
             .only("id", "number", "last_seq", "status")}
    return [live.announcement(partie=parties[i], hand=hands.get(parties[i].latest))
            for i in partie_ids]


def _live_response(request: Request, partie_ids: Sequence[str]) -> StreamingHttpResponse:
    """The live stream of ``partie_ids``, for this request's server. Their existence is checked
    here, to refuse the request; their current hands are read by the stream, once it has
    subscribed (live.stream), so that nothing committed in between is missed."""
    found = {str(pk) for pk in Partie.objects.filter(pk__in=partie_ids).values_list("pk",
                                                                                    flat=True)}
    missing = [i for i in partie_ids if i not in found]
    if missing:
        raise NotFound(f"no such partie: {missing[0]}")
    if not isinstance(request.accepted_renderer, EventStreamRenderer):
        # JSON is offered for the refusals only: a stream has no JSON form.
        raise NotAcceptable("the live stream is served only as text/event-stream: ask for it "
                            "with Accept: text/event-stream (or */*), without ?format=json")
    current = functools.partial(_current, partie_ids)
    keepalive = settings.ACADEMIE_LIVE_KEEPALIVE_SECONDS
    seconds = settings.ACADEMIE_LIVE_SECONDS
    events: Any
    if isinstance(request._request, ASGIRequest):
        events = live.astream(live.hub(), partie_ids, current, seconds=seconds,
                              keepalive=keepalive)
    else:
        # A WSGI server whose worker serves one request at a time (gunicorn's sync workers)
        # must not be held by a stream: it answers the first events and ends, and the browser
        # reconnects after the retry. The live server is ASGI (README).
        if not request.META.get("wsgi.multithread", False):
            seconds = 0
        events = live.stream(live.hub(), partie_ids, current, seconds=seconds,
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


_LIVE_EVENTS = (
    "Each event's data is JSON: `partie`, `partie_status`, `hand`, `number`, `seq`, `status` "
    "(the hand fields are null for a partie alone, and before its first deal). Nothing hidden "
    "is ever sent: read the hand again for your view of it. The stream ends after "
    "ACADEMIE_LIVE_SECONDS and the browser reconnects.")


class PartieLiveView(APIView):
    """Server-sent events: the partie's announcements (games/live.py)."""

    renderer_classes = [EventStreamRenderer, JSONRenderer]

    @extend_schema(
        responses={(200, "text/event-stream"): OpenApiTypes.STR},
        description=(
            "Live updates of a partie, as server-sent events. The first event is the partie's "
            "latest hand; then one event each time a command leaves a hand of the partie "
            "somewhere new (a move, a forced move, a time-out, a deal), and one when the "
            "partie closes. " + _LIVE_EVENTS),
    )
    def get(self, request: Request, partie_id: str) -> StreamingHttpResponse:
        return _live_response(request, [str(partie_id)])


class LiveView(APIView):
    """Server-sent events of several parties on one connection (a soirée's tables): a browser
    keeps few connections open per server."""

    renderer_classes = [EventStreamRenderer, JSONRenderer]

    @extend_schema(
        parameters=[OpenApiParameter("partie", OpenApiTypes.UUID, many=True, required=True,
                                     description=f"a partie to watch (1 to {LIVE_MAX_PARTIES})")],
        responses={(200, "text/event-stream"): OpenApiTypes.STR},
        description=(
            "Live updates of several parties, as `GET /api/parties/{id}/live` gives one's: "
            "first each partie's latest hand, in the order asked, then their announcements. "
            + _LIVE_EVENTS),
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        asked = request.query_params.getlist("partie")
        if not asked:
            raise ValidationError({"partie": ["name at least one partie to watch"]})
        if len(asked) > LIVE_MAX_PARTIES:
            raise ValidationError({"partie": [f"at most {LIVE_MAX_PARTIES} parties at once"]})
        partie_ids = []
        for value in asked:
            try:
                partie_ids.append(str(uuid.UUID(value)))
            except ValueError:
                raise ValidationError({"partie": [f"not a partie id: {value!r}"]}) from None
        return _live_response(request, list(dict.fromkeys(partie_ids)))


class HandDetailView(APIView):
    @extend_schema(responses=s.HandViewSerializer)
    def get(self, request: Request, hand_id: str) -> Response:
        try:
            return Response(selectors.hand_view_by_id(hand_id=hand_id, user=request.user))
        except Hand.DoesNotExist:
            raise Http404("no such hand") from None


class HandMovesView(APIView):
    @extend_schema(request=s.MoveRequestSerializer, responses={201: s.MoveAnswerSerializer})
    def post(self, request: Request, hand_id: str) -> Response:
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
    @extend_schema(responses=s.HandEventsSerializer)
    def get(self, request: Request, hand_id: str) -> Response:
        hand = _hand(hand_id)
        return Response({"hand": str(hand.id), "over": hand.status == Hand.Status.OVER,
                         "events": selectors.hand_events(hand=hand, user=request.user)})


_NOT_OVER = OpenApiResponse(description="The hand is not over yet: its record, seed included, "
                                       "is published when it ends.")


class HandRecordView(APIView):
    @extend_schema(responses={200: dict, 409: _NOT_OVER})
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_record(hand=_hand(hand_id)))


class HandVerifyView(APIView):
    @extend_schema(responses={200: s.HandVerificationSerializer, 409: _NOT_OVER})
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_verification(hand=_hand(hand_id)))
