"""Ledger admin: everything is read-only; chips are granted or withdrawn only by posting an
entry (bank <-> wallet) with a reason and the staff member's name. Nobody edits a balance."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ledger.exceptions import InsufficientChips, LedgerError
from ledger.models import Account, AccountKind, JournalEntry, Posting
from ledger.services import MAX_AMOUNT, chips_grant, wallet_get_or_create

ACCOUNT_FIELDS = (
    "name",
    "kind",
    "club_key",
    "owner",
    "ref",
    "balance",
    "last_posted_at",
    "created_at",
    "entries",
)
ENTRY_FIELDS = ("at", "club_key", "memo", "source", "idempotency_key", "shortfall", "reverses")
POSTING_FIELDS = ("account", "amount", "balance_after", "at")


class ChipGrantForm(forms.Form):
    direction = forms.ChoiceField(
        label=gettext_lazy("direction"),
        choices=[
            ("grant", gettext_lazy("Grant chips (bank \u2192 wallet)")),
            ("withdraw", gettext_lazy("Withdraw chips (wallet \u2192 bank)")),
        ],
    )
    amount = forms.IntegerField(label=gettext_lazy("amount"), min_value=1, max_value=MAX_AMOUNT)
    reason = forms.CharField(
        label=gettext_lazy("reason"),
        max_length=200,
        help_text=gettext_lazy("Kept in the entry's memo with your name."),
    )
    # One token per form shown: submitting the same form twice posts once.
    token = forms.CharField(widget=forms.HiddenInput)

    def signed_amount(self) -> int:
        amount: int = self.cleaned_data["amount"]
        return amount if self.cleaned_data["direction"] == "grant" else -amount


class PlayerChipGrantForm(ChipGrantForm):
    player = forms.ModelChoiceField(
        label=gettext_lazy("player"), queryset=User.objects.order_by("username")
    )
    club_key = forms.SlugField(
        label=gettext_lazy("club key"),
        max_length=64,
        help_text=gettext_lazy("The club's key, or 'casual'."),
    )

    field_order = ["player", "club_key", "direction", "amount", "reason", "token"]


def _grant(request: HttpRequest, wallet: Account, form: ChipGrantForm) -> bool:
    assert isinstance(request.user, User)
    try:
        entry = chips_grant(
            wallet=wallet,
            amount=form.signed_amount(),
            reason=form.cleaned_data["reason"],
            by=request.user,
            idempotency_key=f"admin:{form.cleaned_data['token']}:{wallet.pk}",
        )
    except InsufficientChips as error:
        messages.error(
            request,
            _("%(wallet)s: not enough chips: it holds %(balance)s, this entry takes %(needed)s.")
            % {"wallet": wallet.name, "balance": error.balance, "needed": error.needed},
        )
        return False
    except LedgerError as error:
        messages.error(
            request, _("%(wallet)s: %(error)s") % {"wallet": wallet.name, "error": error.message}
        )
        return False
    messages.success(
        request,
        _("%(wallet)s: entry #%(entry)s posted; balance %(balance)s.")
        % {"wallet": wallet.name, "entry": entry.pk, "balance": wallet.balance},
    )
    return True


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["name", "kind", "club_key", "owner", "ref", "balance", "last_posted_at"]
    list_filter = ["kind", "club_key"]
    search_fields = ["name", "club_key", "ref", "owner__username"]
    fields = ACCOUNT_FIELDS
    readonly_fields = ACCOUNT_FIELDS
    actions = ["grant_or_withdraw_chips"]
    change_list_template = "admin/ledger/account/change_list.html"

    @admin.display(description=gettext_lazy("Entries"))
    def entries(self, account: Account) -> SafeString:
        url = reverse("admin:ledger_journalentry_changelist")
        return format_html(
            '<a href="{}?postings__account__id__exact={}">{}</a>',
            url,
            account.pk,
            _("Entries of this account"),
        )

    def has_grant_chips_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("ledger.grant_chips"))

    @admin.action(description=gettext_lazy("Grant or withdraw chips"), permissions=["grant_chips"])
    def grant_or_withdraw_chips(
        self, request: HttpRequest, queryset: QuerySet[Account]
    ) -> HttpResponse | None:
        wallets = list(queryset.filter(kind=AccountKind.WALLET))
        if not wallets:
            self.message_user(
                request,
                _("Select players' wallets: chips are granted to wallets only."),
                messages.WARNING,
            )
            return None
        if "apply" in request.POST:
            form = ChipGrantForm(request.POST)
            if form.is_valid():
                for wallet in wallets:
                    _grant(request, wallet, form)
                return None
        else:
            form = ChipGrantForm(initial={"token": uuid.uuid4().hex})
        return TemplateResponse(
            request,
            "admin/ledger/account/grant_chips.html",
            {
                **self.admin_site.each_context(request),
                "title": _("Grant or withdraw chips"),
                "opts": self.model._meta,
                "form": form,
                "wallets": wallets,
                "action": "grant_or_withdraw_chips",
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )

    def get_urls(self) -> list[URLPattern]:
        grant = path(
            "grant/",
            self.admin_site.admin_view(self.grant_to_player_view),
            name="ledger_account_grant",
        )
        return [grant, *super().get_urls()]

    def grant_to_player_view(self, request: HttpRequest) -> HttpResponse:
        """Grant or withdraw chips for any player and club, creating his wallet if need be."""
        if not self.has_grant_chips_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            form = PlayerChipGrantForm(request.POST)
            if form.is_valid():
                try:
                    wallet = wallet_get_or_create(
                        club_key=form.cleaned_data["club_key"], owner=form.cleaned_data["player"]
                    )
                except LedgerError as error:
                    messages.error(request, error.message)
                else:
                    if _grant(request, wallet, form):
                        return HttpResponseRedirect(reverse("admin:ledger_account_changelist"))
        else:
            form = PlayerChipGrantForm(initial={"token": uuid.uuid4().hex, "club_key": "casual"})
        return TemplateResponse(
            request,
            "admin/ledger/account/grant_chips.html",
            {
                **self.admin_site.each_context(request),
                "title": _("Grant or withdraw a player's chips"),
                "opts": self.model._meta,
                "form": form,
            },
        )


class PostingInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Posting
    fields = POSTING_FIELDS
    readonly_fields = POSTING_FIELDS
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(JournalEntry)
class JournalEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "at",
        "club_key",
        "memo",
        "source",
        "idempotency_key",
        "shortfall",
        "reverses",
    ]
    list_filter = ["club_key"]
    search_fields = [
        "=idempotency_key",
        "source",
        "memo",
        "postings__account__owner__username",
        "postings__account__name",
    ]
    date_hierarchy = "at"
    fields = ENTRY_FIELDS
    readonly_fields = ENTRY_FIELDS
    inlines = [PostingInline]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        # The "Entries of this account" link on an account's page.
        if lookup == "postings__account__id__exact":
            return True
        parent: Any = super()  # the stubs' signature differs between django-stubs versions
        return bool(parent.lookup_allowed(lookup, value, request))
