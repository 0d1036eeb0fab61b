"""The hand API: thin views that validate, call one service or selector, and answer."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Prefetch, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import permissions, selectors, services, signing
from games.api import serializers as s
from games.engine.base import Move
from games.errors import NotViewer
from games.models import Hand, Partie, Seat


def _viewable(request: Request, partie: Partie) -> None:
    if not permissions.may_view(request.user, partie):
        raise NotViewer(_("this partie is seen only by its club's members or, at a casual "
                          "table, by its players"))


def _hand(request: Request, hand_id: str) -> Hand:
    # The seats come in one query, used by both the seat lookup and the deck (seat count).
    hands = Hand.objects.select_related("partie", "secret").prefetch_related("partie__seats")
    hand = get_object_or_404(hands, pk=hand_id)
    _viewable(request, hand.partie)
    return hand


class PartieListView(ListAPIView[Any]):
    """Parties newest first, a page at a time (config.pagination), without their hands: those
    the requester may see (games.permissions)."""

    serializer_class = s.PartieListSerializer

    def get_queryset(self) -> QuerySet[Partie]:
        seats = Prefetch("seats", queryset=Seat.objects.select_related("player"))
        parties = permissions.visible_parties(self.request.user, selectors.partie_list())
        return (parties.prefetch_related(None).prefetch_related(seats)
                .annotate(hands_dealt=Count("hands", distinct=True))
                .order_by("-created_at", "-pk"))

    @extend_schema(request=s.PartieCreateSerializer, responses={201: s.PartieSerializer})
    def post(self, request: Request) -> Response:
        data = s.PartieCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        partie = services.casual_table_create(
            creator=request.user, game=v["game"], players=v["players"], bots=v["bots"],
            options=v["options"], buy_in=v["buy_in"], table_label=v["table_label"],
            move_timeout=timedelta(seconds=v["move_timeout"]),
            forced_move_delay=timedelta(seconds=v["forced_move_delay"]),
            comet_window=timedelta(seconds=v["comet_window"]),
            pause_between_hands=timedelta(seconds=v["pause_between_hands"]),
            share_window=(None if v["share_window"] is None
                          else timedelta(seconds=v["share_window"])),
            at=timezone.now(),
        )
        partie = selectors.partie_list().get(pk=partie.pk)
        return Response(s.PartieSerializer(partie).data, status=status.HTTP_201_CREATED)


class PartieDetailView(APIView):
    @extend_schema(responses=s.PartieSerializer)
    def get(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(selectors.partie_list(), pk=partie_id)
        _viewable(request, partie)
        return Response(s.PartieSerializer(partie).data)


def _partie_answer(request: Request, partie_id: str) -> Response:
    partie = get_object_or_404(selectors.partie_list(), pk=partie_id)
    return Response(s.PartieSerializer(partie).data)


class PartieAnswerView(APIView):
    """The invited player takes his seat at a casual table, or declines it."""

    @extend_schema(request=s.InvitationAnswerSerializer, responses=s.PartieSerializer)
    def post(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        data = s.InvitationAnswerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.invitation_answer(partie_id=partie.pk, user=request.user,
                                   accept=data.validated_data["accept"], at=timezone.now())
        return _partie_answer(request, partie_id)


class PartieCloseView(APIView):
    """The creator closes his casual table: cancelled while inviting, no further hand once
    playing (the hand in play finishes)."""

    @extend_schema(request=None, responses=s.PartieSerializer)
    def post(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        services.casual_table_close(partie_id=partie.pk, user=request.user, at=timezone.now())
        return _partie_answer(request, partie_id)


class PartieAwayView(APIView):
    """Leaving the table (RULES.md §3): the seated player leaves, pausing the table until he is
    back (a casual table only) or letting the time-out rule play for him, or comes back. GET:
    his absence, and who the table waits for, for anyone who may see the partie."""

    def _answer(self, request: Request, partie_id: Any) -> Response:
        partie = (Partie.objects.prefetch_related(Prefetch(
            "seats", queryset=Seat.objects.select_related("player"))).get(pk=partie_id))
        return Response(s.AbsenceSerializer(partie, context={"user": request.user}).data)

    @extend_schema(responses=s.AbsenceSerializer)
    def get(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        return self._answer(request, partie.pk)

    @extend_schema(request=s.AwaySerializer, responses=s.AbsenceSerializer)
    def post(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        data = s.AwaySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.seat_away(partie_id=partie.pk, user=request.user,
                           away=data.validated_data["away"], how=data.validated_data["how"],
                           at=timezone.now())
        return self._answer(request, partie.pk)


class PartieCometOrderView(APIView):
    """The Comet holder's standing order (RULES.md §2): set at any time by the seated player,
    read by him alone (it says nothing of who holds the Comet, but it is his own)."""

    @extend_schema(responses=s.CometOrderSerializer)
    def get(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        order = services.seat_comet_order(partie_id=partie.pk, user=request.user)
        return Response({"partie": str(partie.pk), "order": order,
                         "window": partie.comet_window.total_seconds()})

    @extend_schema(request=s.CometOrderSerializer, responses=s.CometOrderSerializer)
    def post(self, request: Request, partie_id: str) -> Response:
        partie = get_object_or_404(Partie, pk=partie_id)
        _viewable(request, partie)
        data = s.CometOrderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        order = services.seat_comet_order(partie_id=partie.pk, user=request.user,
                                          order=data.validated_data["order"])
        return Response({"partie": str(partie.pk), "order": order,
                         "window": partie.comet_window.total_seconds()})


class InvitationListView(ListAPIView[Any]):
    """The casual tables waiting for the requester's answer, newest first."""

    serializer_class = s.PartieListSerializer

    def get_queryset(self) -> QuerySet[Partie]:
        return (selectors.invitations_pending(user=self.request.user)
                .annotate(hands_dealt=Count("hands", distinct=True)).order_by("-created_at",
                                                                               "-pk"))


class HandDetailView(APIView):
    @extend_schema(responses=s.HandViewSerializer)
    def get(self, request: Request, hand_id: str) -> Response:
        hand = _hand(request, hand_id)
        return Response(selectors.hand_view(hand=hand, user=request.user))


class HandMovesView(APIView):
    throttle_scope = "moves"  # its own rate (settings: DEFAULT_THROTTLE_RATES)

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
            raise Http404(_("no such hand")) from None
        # The hand as the command left it, not read again. ``command`` is the stored first
        # answer: a retry gets it again even if the hand has moved on since; the view around
        # it is then the hand as it is now, whose next hand is looked up (the stored answer's
        # may be older, or absent when the retried move did not end the hand).
        following = (selectors.next_hand_of(played.hand) if played.retried
                     else played.response.get("next_hand"))
        view = selectors.view_of(hand=played.hand, loaded=played.loaded, seat=played.seat,
                                 next_hand=following)
        # 202: chosen during a Comet chance, played when the chance ends.
        code = status.HTTP_202_ACCEPTED if played.pending else status.HTTP_201_CREATED
        return Response({**view, "command": played.response}, status=code)


class HandShareView(APIView):
    """A seated person's share of the deal's randomness (HAND_RECORD.md, version 2)."""

    throttle_scope = "moves"

    @extend_schema(request=s.ShareSerializer, responses={201: s.ShareAnswerSerializer})
    def post(self, request: Request, hand_id: str) -> Response:
        hand = _hand(request, hand_id)
        data = s.ShareSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        sent = services.share_send(hand_id=hand.pk, user=request.user,
                                   share=data.validated_data["share"], at=timezone.now())
        return Response(sent, status=status.HTTP_201_CREATED)


class HandEventsView(APIView):
    @extend_schema(responses=s.HandEventsSerializer)
    def get(self, request: Request, hand_id: str) -> Response:
        hand = _hand(request, hand_id)
        events = selectors.hand_events(hand=hand, user=request.user)
        last = events[-1] if events else None
        return Response({"hand": str(hand.id), "over": hand.status == Hand.Status.OVER,
                         "events": events,
                         "receipt": selectors.receipt_of(hand, last["seq"], last["hash"])
                         if last and "hash" in last else None})


_NOT_OVER = OpenApiResponse(description="The hand is not over yet: its record, seed included, "
                                       "is published when it ends.")


class HandRecordView(APIView):
    @extend_schema(responses={200: dict, 409: _NOT_OVER})
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_record(hand=_hand(request, hand_id)))


class HandReplayView(APIView):
    """A finished hand step by step: the table after each event, every seat's cards shown."""

    @extend_schema(responses={200: dict, 409: _NOT_OVER})
    def get(self, request: Request, hand_id: str) -> Response:
        return Response({"hand": hand_id,
                         "steps": selectors.hand_replay(hand=_hand(request, hand_id))})


class HandVerifyView(APIView):
    @extend_schema(responses={200: s.HandVerificationSerializer, 409: _NOT_OVER})
    def get(self, request: Request, hand_id: str) -> Response:
        return Response(selectors.hand_verification(hand=_hand(request, hand_id)))


class SigningKeysView(APIView):
    """The service's public keys, current and retired, that its receipts are signed with
    (HAND_RECORD.md, version 3): public, so that anyone can check a receipt."""

    permission_classes = [AllowAny]

    @extend_schema(responses=s.SigningKeysSerializer)
    def get(self, request: Request) -> Response:
        return Response(signing.published_keys())
