"""Disputes and rulings through the API: a hand's players and the organiser open a dispute on a
finished soirée hand; the club's auditors see their queue and rule (tournaments.arbitration)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games.models import Hand
from games.permissions import may_view
from tournaments import arbitration, selectors
from tournaments.errors import NotAuditor, NotMember
from tournaments.models import Dispute, Ruling


class DisputeOpenSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    event = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                     help_text="the seq of the event it concerns")
    request_id = serializers.UUIDField(help_text="The same id again opens it once")


class RulingRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Ruling.Kind.choices)
    reason = serializers.CharField(max_length=2000)
    corrections = serializers.DictField(
        child=serializers.IntegerField(min_value=-1_000_000, max_value=1_000_000),
        required=False, default=dict, help_text="adjusted: chips per player, summing to zero")
    request_id = serializers.UUIDField(help_text="The same id again rules once")
    cites = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False,
                                  default=list, max_length=50,
                                  help_text="what-if drafts of this dispute it cites")


class RulingEffectRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Ruling.Kind.choices)
    corrections = serializers.DictField(
        child=serializers.IntegerField(min_value=-1_000_000, max_value=1_000_000),
        required=False, default=dict, help_text="adjusted: chips per player, summing to zero")


class EffectLineSerializer(serializers.Serializer):
    player = serializers.CharField(help_text="a player of the hand, or one of its pots")
    holds = serializers.IntegerField(help_text="the chips he holds at the soirée now")
    moves = serializers.IntegerField(help_text="what he would give (negative) or receive")
    short = serializers.IntegerField(help_text="what he would fail to give")


class RulingEffectSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Ruling.Kind.choices)
    lines = EffectLineSerializer(many=True)
    shortfall = serializers.IntegerField()
    postable = serializers.BooleanField(help_text="false: an adjustment asking a player for "
                                                  "more than he holds, which is refused")


class WhatIfRequestSerializer(serializers.Serializer):
    from_seq = serializers.IntegerField(min_value=1, help_text="the step it branches from")
    moves = serializers.ListField(child=serializers.DictField(), max_length=500, default=list,
                                  help_text='[{"seat": 1, "move": {"type": "play", …}}]')
    play_out = serializers.BooleanField(default=False,
                                        help_text="play the rest by the time-out rule")
    keep = serializers.BooleanField(default=False, help_text="keep it as a draft")
    note = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class WhatIfSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="the draft's, if kept")
    from_seq = serializers.IntegerField()
    events = serializers.ListField(child=serializers.DictField())
    view = serializers.DictField(help_text="the table after them, every hand shown")
    to_act = serializers.ListField(child=serializers.IntegerField())
    legal_moves = serializers.DictField(child=serializers.ListField())
    result = serializers.DictField(allow_null=True)


class WhatIfDraftSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField()
    created_at = serializers.DateTimeField()
    from_seq = serializers.IntegerField()
    moves = serializers.ListField(child=serializers.DictField())
    played_out = serializers.BooleanField()
    result = serializers.DictField(allow_null=True)
    note = serializers.CharField()


class RulingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Ruling.Kind.choices)
    reason = serializers.CharField()
    at = serializers.DateTimeField()
    arbiter = serializers.CharField()
    corrections = serializers.DictField(child=serializers.IntegerField())
    entries = serializers.ListField(child=serializers.IntegerField(),
                                    help_text="the ledger entries it posted")
    shortfall = serializers.DictField(child=serializers.IntegerField())
    cites = serializers.ListField(child=serializers.IntegerField())


class DisputeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    hand = serializers.UUIDField()
    hand_number = serializers.IntegerField()
    table = serializers.CharField()
    soiree = serializers.IntegerField()
    opened_by = serializers.CharField()
    opened_at = serializers.DateTimeField()
    reason = serializers.CharField()
    event = serializers.IntegerField(allow_null=True)
    status = serializers.ChoiceField(choices=["open", "ruled"])
    ruling = RulingSerializer(allow_null=True, help_text="the one that stands: the latest")
    rulings = RulingSerializer(many=True)
    whatifs = WhatIfDraftSerializer(many=True)


class DisputeListSerializer(serializers.Serializer):
    disputes = DisputeSerializer(many=True)


def _hand(request: Request, hand_id: str) -> Hand:
    hand = get_object_or_404(Hand.objects.select_related("partie"), pk=hand_id)
    if not may_view(request.user, hand.partie):
        raise NotMember(_("Only the club's members may see this hand."))
    return hand


class HandDisputesView(APIView):
    @extend_schema(responses=DisputeListSerializer)
    def get(self, request: Request, hand_id: str) -> Response:
        hand = _hand(request, hand_id)
        return Response({"disputes": selectors.disputes_of_hand(hand=hand)})

    @extend_schema(request=DisputeOpenSerializer, responses={201: DisputeSerializer})
    def post(self, request: Request, hand_id: str) -> Response:
        hand = _hand(request, hand_id)
        data = DisputeOpenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        dispute = arbitration.dispute_open(hand=hand, user=request.user, reason=v["reason"],
                                           event_seq=v["event"], request_id=v["request_id"],
                                           at=timezone.now())
        return Response(selectors.dispute_row(dispute), status=status.HTTP_201_CREATED)


class DisputeQueueView(APIView):
    """The arbiter's queue: the disputes of the clubs he audits, oldest first."""

    @extend_schema(operation_id="disputes_queue", responses=DisputeListSerializer,
                   parameters=[OpenApiParameter("status", enum=["open", "ruled", "all"])])
    def get(self, request: Request) -> Response:
        wanted = request.query_params.get("status", "open")
        if wanted not in ("open", "ruled", "all"):
            raise serializers.ValidationError({"status": ["one of open, ruled, all"]})
        return Response({"disputes": selectors.arbiter_queue(user=request.user,
                                                             status=wanted)})


def _dispute(request: Request, dispute_id: int) -> Dispute:
    dispute = get_object_or_404(Dispute.objects.select_related("hand__partie", "soiree"),
                                pk=dispute_id)
    if not may_view(request.user, dispute.hand.partie):
        raise NotMember(_("Only the club's members may see this dispute."))
    return dispute


class DisputeDetailView(APIView):
    @extend_schema(responses=DisputeSerializer)
    def get(self, request: Request, dispute_id: int) -> Response:
        return Response(selectors.dispute_row(_dispute(request, dispute_id)))


class RulingView(APIView):
    """An arbiter rules; a second ruling on a dispute is an appeal (the latest stands)."""

    @extend_schema(request=RulingRequestSerializer, responses={201: DisputeSerializer})
    def post(self, request: Request, dispute_id: int) -> Response:
        dispute = _dispute(request, dispute_id)
        if not arbitration.may_rule(request.user, dispute):  # before reading the request
            raise NotAuditor(_("Only a club auditor who did not play this hand may rule on "
                             "it."))
        data = RulingRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v: dict[str, Any] = data.validated_data
        arbitration.rule(dispute=dispute, arbiter=request.user, kind=v["kind"],
                         reason=v["reason"], corrections=v["corrections"],
                         request_id=v["request_id"], cites=v["cites"], at=timezone.now())
        return Response(selectors.dispute_row(dispute), status=status.HTTP_201_CREATED)


class RulingEffectView(APIView):
    """What a ruling would do, before it is posted: nothing is written."""

    @extend_schema(request=RulingEffectRequestSerializer, responses={200: RulingEffectSerializer})
    def post(self, request: Request, dispute_id: int) -> Response:
        dispute = _dispute(request, dispute_id)
        if not arbitration.may_rule(request.user, dispute):  # before reading the request
            raise NotAuditor(_("Only a club auditor who did not play this hand may rule on "
                             "it."))
        data = RulingEffectRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v: dict[str, Any] = data.validated_data
        return Response(arbitration.ruling_effect(dispute=dispute, arbiter=request.user,
                                                  kind=v["kind"], corrections=v["corrections"]))


class WhatIfView(APIView):
    """An arbiter branches the disputed hand from one of its steps (never touching it), and
    keeps the branch as a draft of the dispute if he asks."""

    @extend_schema(request=WhatIfRequestSerializer, responses={200: WhatIfSerializer,
                                                               201: WhatIfSerializer})
    def post(self, request: Request, dispute_id: int) -> Response:
        dispute = _dispute(request, dispute_id)
        if not arbitration.may_rule(request.user, dispute):
            raise NotAuditor(_("Only a club auditor who did not play this hand may branch "
                             "it."))
        data = WhatIfRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        found = arbitration.whatif(dispute=dispute, arbiter=request.user,
                                   from_seq=v["from_seq"], moves=v["moves"],
                                   play_out=v["play_out"], keep=v["keep"], note=v["note"],
                                   at=timezone.now())
        return Response(found, status=status.HTTP_201_CREATED if v["keep"] else status.HTTP_200_OK)
