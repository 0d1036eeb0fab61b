"""Read-only ledger API. A player reads his own wallets, balances and statements; an organiser
of a club (ledger.permissions.is_organiser) reads that club's accounts, statements, trial
balance and settlements; nobody else reads anything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
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
    default_limit = 100
    max_limit = 1000


class _LedgerView:
    permission_classes: Sequence[Any] = (IsAuthenticated,)


def _query(serializer_class: type[Any], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
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
        raise Http404(f"You have no wallet in club {club_key}.")
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
