"""Read-only ledger API. A player reads his own wallets, balances and statements; an organiser
of a club (ledger.permissions.is_organiser) reads that club's accounts, statements, trial
balance and settlements; nobody else reads anything."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ledger import selectors
from ledger.api.serializers import (
    AccountSerializer,
    AccountsQuerySerializer,
    AsOfQuerySerializer,
    BalanceSerializer,
    SettlementQuerySerializer,
    SettlementSerializer,
    StatementLineSerializer,
    TrialBalanceSerializer,
    WindowQuerySerializer,
)
from ledger.models import Account, Posting
from ledger.permissions import is_organiser

CLUB = OpenApiParameter("club_key", OpenApiTypes.STR, OpenApiParameter.PATH)
ACCOUNT = OpenApiParameter("account_id", OpenApiTypes.INT, OpenApiParameter.PATH)


class IsClubOrganiser(BasePermission):
    message = "Only the organisers of this club read its books."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(is_organiser(request.user, view.kwargs["club_key"]))


class StatementPagination(LimitOffsetPagination):
    """DRF's limit and offset, refused with a 400 that names them when they are not whole
    numbers in range (DRF read such a value as its default: ``offset=x`` was the first page,
    ``limit=5000`` a thousand lines); the schema gives their ranges."""

    default_limit = 100
    max_limit = 1000

    def get_limit(self, request: Request) -> int:
        return _count(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _count(request, self.offset_query_param, 0, 0, None)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        ranges = {self.limit_query_param: {"minimum": 1, "maximum": self.max_limit},
                  self.offset_query_param: {"minimum": 0}}
        for parameter in parameters:
            parameter["schema"].update(ranges.get(parameter["name"], {}))
        return parameters


def _count(request: Request, name: str, default: int, least: int, most: int | None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not re.fullmatch(r"-?[0-9]+", raw):  # int() would take " 5", "1_0", "+5", "٥"
        raise ValidationError({name: [f"must be a whole number, not {raw!r}"]})
    value = int(raw)
    if value < least or (most is not None and value > most):
        span = f"from {least} to {most}" if most is not None else f"{least} or more"
        raise ValidationError({name: [f"must be {span}, not {value}"]})
    return value


class _LedgerView:
    permission_classes: Sequence[Any] = (IsAuthenticated,)


def _query(serializer_class: type[Any], request: Request) -> dict[str, Any]:
    """The query's parameters, validated. One given empty (``?at=``) is refused: DRF reads it as
    absent, so a client whose value went missing got the default (now, every kind) unwarned."""
    serializer = serializer_class(data=request.query_params)
    empty = [name for name in serializer.fields if request.query_params.get(name) == ""]
    if empty:
        raise ValidationError({name: ["is empty: give a value, or leave the parameter out"]
                               for name in empty})
    serializer.is_valid(raise_exception=True)
    data: dict[str, Any] = serializer.validated_data
    return data


def _balance(account: Account, request: Request) -> Response:
    at = _query(AsOfQuerySerializer, request).get("at")
    balance = selectors.account_balance(account=account, at=at)
    return Response(BalanceSerializer({"account": account, "at": at, "balance": balance}).data)


def _statement(account: Account, request: Request) -> QuerySet[Posting]:
    window = _query(WindowQuerySerializer, request)
    return selectors.account_statement(account=account, **window)


def _my_wallet(request: Request, club_key: str) -> Account:
    wallet = selectors.wallet_of(user=request.user, club_key=club_key)
    if wallet is None:
        raise Http404(gettext("You have no wallet in club %(club)s.") % {"club": club_key})
    return wallet


# -- a player's own chips ---------------------------------------------------------------------


class MyWalletsView(_LedgerView, APIView):
    @extend_schema(responses=AccountSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(
            AccountSerializer(selectors.player_wallets(user=request.user), many=True).data
        )


class MyBalanceView(_LedgerView, APIView):
    @extend_schema(parameters=[CLUB, AsOfQuerySerializer], responses=BalanceSerializer)
    def get(self, request: Request, club_key: str) -> Response:
        return _balance(_my_wallet(request, club_key), request)


@extend_schema(parameters=[CLUB, WindowQuerySerializer])
class MyStatementView(_LedgerView, ListAPIView[Any]):
    serializer_class = StatementLineSerializer
    pagination_class = StatementPagination

    def get_queryset(self) -> QuerySet[Posting]:
        return _statement(_my_wallet(self.request, self.kwargs["club_key"]), self.request)


# -- a club's books, for its organisers -------------------------------------------------------


@extend_schema(parameters=[CLUB, AccountsQuerySerializer])
class ClubAccountsView(_LedgerView, ListAPIView[Any]):
    permission_classes = [IsAuthenticated, IsClubOrganiser]
    serializer_class = AccountSerializer
    pagination_class = StatementPagination

    def get_queryset(self) -> QuerySet[Account]:
        kind = _query(AccountsQuerySerializer, self.request).get("kind")
        return selectors.club_accounts(club_key=self.kwargs["club_key"], kind=kind)


class ClubAccountBalanceView(_LedgerView, APIView):
    permission_classes = [IsAuthenticated, IsClubOrganiser]

    @extend_schema(parameters=[CLUB, ACCOUNT, AsOfQuerySerializer], responses=BalanceSerializer)
    def get(self, request: Request, club_key: str, account_id: int) -> Response:
        return _balance(get_object_or_404(Account, pk=account_id, club_key=club_key), request)


@extend_schema(parameters=[CLUB, ACCOUNT, WindowQuerySerializer])
class ClubAccountStatementView(_LedgerView, ListAPIView[Any]):
    permission_classes = [IsAuthenticated, IsClubOrganiser]
    serializer_class = StatementLineSerializer
    pagination_class = StatementPagination

    def get_queryset(self) -> QuerySet[Posting]:
        account = get_object_or_404(
            Account, pk=self.kwargs["account_id"], club_key=self.kwargs["club_key"]
        )
        return _statement(account, self.request)


class ClubTrialBalanceView(_LedgerView, APIView):
    permission_classes = [IsAuthenticated, IsClubOrganiser]

    @extend_schema(parameters=[CLUB, AsOfQuerySerializer], responses=TrialBalanceSerializer)
    def get(self, request: Request, club_key: str) -> Response:
        at = _query(AsOfQuerySerializer, request).get("at")
        trial = selectors.trial_balance(club_key=club_key, at=at)
        return Response(TrialBalanceSerializer(trial).data)


class ClubSettlementView(_LedgerView, APIView):
    permission_classes = [IsAuthenticated, IsClubOrganiser]

    @extend_schema(parameters=[CLUB, SettlementQuerySerializer], responses=SettlementSerializer)
    def get(self, request: Request, club_key: str) -> Response:
        query = _query(SettlementQuerySerializer, request)
        result = selectors.settlement(
            club_key=club_key,
            since=query["since"],
            until=query["until"],
            source_prefix=query.get("source_prefix"),
        )
        return Response(SettlementSerializer(result).data)
