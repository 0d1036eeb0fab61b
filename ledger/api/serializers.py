"""Input and output shapes of the ledger API; no rule of the books lives here."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from rest_framework import serializers

from config.fields import DateTimeField
from ledger.models import Account, AccountKind, Posting


class AccountSerializer(serializers.ModelSerializer[Any]):
    owner = serializers.CharField(source="owner.get_username", default=None, read_only=True,
                                  allow_null=True)  # the bank and pots have no owner

    class Meta:
        model = Account
        fields = ["id", "kind", "club_key", "name", "owner", "ref", "balance", "last_posted_at"]
        read_only_fields = fields


class BalanceSerializer(serializers.Serializer[Any]):
    account = AccountSerializer()
    at = serializers.DateTimeField(allow_null=True)
    balance = serializers.IntegerField()


class StatementLineSerializer(serializers.ModelSerializer[Any]):
    entry = serializers.IntegerField(source="entry_id")
    memo = serializers.CharField(source="entry.memo")
    # A field named "source" shadows Field.source in the stubs; DRF itself allows it.
    source = serializers.CharField(source="entry.source")  # type: ignore[assignment]
    shortfall = serializers.IntegerField(source="entry.shortfall")
    reverses = serializers.IntegerField(source="entry.reverses_id", allow_null=True)

    class Meta:
        model = Posting
        fields = [
            "id",
            "entry",
            "at",
            "amount",
            "balance_after",
            "memo",
            "source",
            "shortfall",
            "reverses",
        ]
        read_only_fields = fields


class TrialBalanceSerializer(serializers.Serializer[Any]):
    club_key = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)
    total = serializers.IntegerField()
    accounts = AccountSerializer(many=True)


class SettlementNetSerializer(serializers.Serializer[Any]):
    account = AccountSerializer()
    net = serializers.IntegerField()


class SettlementTransferSerializer(serializers.Serializer[Any]):
    payer = AccountSerializer()
    payee = AccountSerializer()
    amount = serializers.IntegerField()


class SettlementSerializer(serializers.Serializer[Any]):
    club_key = serializers.CharField()
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    source_prefix = serializers.CharField(allow_null=True)
    nets = SettlementNetSerializer(many=True)
    transfers = SettlementTransferSerializer(many=True)


class AsOfQuerySerializer(serializers.Serializer[Any]):
    at = DateTimeField(
        required=False, help_text="Balance as of this time (default now)."
    )


class WindowQuerySerializer(serializers.Serializer[Any]):
    since = DateTimeField(required=False)
    until = DateTimeField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError(gettext("since must come before until."))
        return attrs


class SettlementQuerySerializer(WindowQuerySerializer):
    since = DateTimeField()
    until = DateTimeField()
    source_prefix = serializers.CharField(required=False, max_length=200)


class AccountsQuerySerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=AccountKind.choices, required=False)
