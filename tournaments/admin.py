"""Clubs, memberships, seasons and soirées in the admin site; soirées open and close from here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from config.errors import DomainError
from games.models import Seat
from ledger.models import Account

from . import selectors, services
from .models import Club, Membership, Registration, Season, Soiree, SoireeTable


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Club)
class ClubAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "club", "role", "joined_at"]
    list_filter = ["club", "role"]
    search_fields = ["user__username", "club__name"]
    autocomplete_fields = ["user"]


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    list_display = ["name", "club", "starts_on", "ends_on"]
    list_filter = ["club"]
    readonly_fields = ["standings_table"]

    @admin.display(description=gettext_lazy("Season standings"))
    def standings_table(self, obj: Season) -> str:
        rows = selectors.season_standings(season=obj) if obj.pk else []
        return _standings_html(rows)


class RegistrationInline(admin.TabularInline):
    model = Registration
    extra = 0
    fields = ["user", "registered_at", "checked_in_at"]
    readonly_fields = ["registered_at", "checked_in_at"]
    autocomplete_fields = ["user"]


class TableInline(admin.TabularInline):
    model = SoireeTable
    extra = 0
    fields = ["number", "round", "partie"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _standings_html(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "—"
    body = format_html_join(
        "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ((r["player"], r["net"], r["hands_won"], r["comets"], r["tricons"]) for r in rows))
    return format_html("<table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>"
                       "{}</table>", _("player"), _("net"), _("hands won"), _("Comets"),
                       _("tricons"), body)


class SoireeForm(forms.ModelForm):
    """The admin's soirée, checked as the API checks a new one (services.soiree_check): an
    unknown option, or one PostgreSQL cannot store (a NUL character), was saved as typed and
    failed at the database (500) or when the soirée opened. The admin gives it its model and
    fields."""

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean()
        needed = ("starts_at", "ends_at", "game", "options", "move_timeout", "bot_kind")
        if all(data.get(name) is not None for name in needed):
            try:
                services.soiree_check(**{name: data[name] for name in needed})
            except DomainError as exc:
                raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(Soiree)
class SoireeAdmin(admin.ModelAdmin):
    form = SoireeForm
    list_display = ["name", "club", "game", "starts_at", "ends_at", "status"]
    list_filter = ["club", "game", "status"]
    search_fields = ["name"]
    inlines = [RegistrationInline, TableInline]
    autocomplete_fields = ["created_by"]  # people only (PlayerAdmin.get_search_results)
    readonly_fields = ["status", "seating_seed", "opened_at", "closed_at", "live_tables",
                       "standings_table", "settlement_json"]
    exclude = ["standings", "settlement"]
    actions = ["check_in_everyone", "open_now", "close_now"]

    @admin.action(description=gettext_lazy(
        "Check in every registered player (each gets his buy-in)"))
    def check_in_everyone(self, request: HttpRequest, queryset: QuerySet[Soiree]) -> None:
        for soiree in queryset:
            _check_in(self, request, soiree.registrations.filter(checked_in_at__isnull=True))

    @admin.action(description=gettext_lazy("Open now (seat the checked-in players and deal)"))
    def open_now(self, request: HttpRequest, queryset: QuerySet[Soiree]) -> None:
        for soiree in queryset:
            try:
                tables = services.soiree_open(soiree=soiree, at=timezone.now())
                self.message_user(request, _("%(soiree)s: %(n)s table(s) opened")
                                  % {"soiree": soiree, "n": len(tables)})
            except DomainError as exc:
                self.message_user(request, _("%(soiree)s: %(error)s")
                                  % {"soiree": soiree, "error": exc}, level=messages.ERROR)

    @admin.action(description=gettext_lazy("Close now (no new hand; hands in progress finish)"))
    def close_now(self, request: HttpRequest, queryset: QuerySet[Soiree]) -> None:
        for soiree in queryset:
            try:
                services.soiree_close_now(soiree=soiree, at=timezone.now())
                self.message_user(request, _("%(soiree)s: closing") % {"soiree": soiree})
            except DomainError as exc:
                self.message_user(request, _("%(soiree)s: %(error)s")
                                  % {"soiree": soiree, "error": exc}, level=messages.ERROR)

    @admin.display(description=gettext_lazy("Tables"))
    def live_tables(self, obj: Soiree) -> str:
        if not obj.pk:
            return "—"
        tables = selectors.soiree_tables(soiree=obj)
        line = _("Table {table} (round {round}, {status}): {players} · {hands} hand(s) played")
        return format_html_join(
            "", "<p>{}</p>",
            ((format_html(line, table=t["table"], round=t["round"],
                          status=pgettext("table status", t["status"]),
                          players=", ".join(s["player"] for s in t["seats"]),
                          hands=t["hands_played"]),) for t in tables))

    @admin.display(description=gettext_lazy("Standings"))
    def standings_table(self, obj: Soiree) -> str:
        standings = selectors.soiree_standings(soiree=obj) if obj.pk else None
        return _standings_html((standings or {}).get("players", []))

    @admin.display(description=gettext_lazy("Settlement"))
    def settlement_json(self, obj: Soiree) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.settlement, indent=1)) \
            if obj.settlement else "—"


def _check_in(model_admin: admin.ModelAdmin[Any], request: HttpRequest,
              registrations: QuerySet[Registration]) -> None:
    for registration in registrations.select_related("soiree", "user"):
        try:
            services.checkin(soiree=registration.soiree, user=registration.user,
                             at=timezone.now())
            model_admin.message_user(request, _("%(player)s checked in at %(soiree)s") % {
                "player": registration.user, "soiree": registration.soiree})
        except DomainError as exc:
            model_admin.message_user(request, _("%(player)s: %(error)s") % {
                "player": registration.user, "error": exc}, level=messages.ERROR)


@admin.register(Registration)
class RegistrationAdmin(admin.ModelAdmin):
    """The door: who registered for which soirée, who is checked in, and the check-in."""

    list_display = ["user", "soiree", "registered_at", "checked_in_at"]
    list_filter = ["soiree", ("checked_in_at", admin.EmptyFieldListFilter)]
    search_fields = ["user__username", "soiree__name"]
    readonly_fields = ["registered_at", "checked_in_at"]
    autocomplete_fields = ["user"]
    actions = ["check_in"]

    @admin.action(description=gettext_lazy(
        "Check in the selected players (each gets his buy-in)"))
    def check_in(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        _check_in(self, request, queryset.filter(checked_in_at__isnull=True))


User = get_user_model()


class WalletInline(admin.TabularInline):
    """A player's wallets, with their balances and a link to each one's entries (its
    statement); chips are granted or withdrawn from the account's page."""

    model = Account
    fk_name = "owner"
    fields = ["club_key", "ref", "balance", "statement"]
    readonly_fields = fields
    extra = 0
    verbose_name = gettext_lazy("wallet")
    verbose_name_plural = gettext_lazy("wallets")

    @admin.display(description=gettext_lazy("Statement"))
    def statement(self, account: Account) -> str:
        return format_html('<a href="{}?postings__account__id__exact={}">{}</a> · '
                           '<a href="{}">{}</a>',
                           reverse("admin:ledger_journalentry_changelist"), account.pk,
                           _("entries"), reverse("admin:ledger_account_change", args=[account.pk]),
                           _("grant or withdraw"))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class PlayerMembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fk_name = "user"


class PlayerKindFilter(admin.SimpleListFilter):
    """People by default; the users bots play as (games.services.chips.BOT_PLAYERS) only when
    asked for. A bot is a user who has sat as one."""

    title = gettext_lazy("kind")
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("bots", _("Bots")), ("all", _("All"))]

    def choices(self, changelist: Any) -> Iterator[dict[str, Any]]:
        yield {"selected": self.value() is None, "display": _("People"),
               "query_string": changelist.get_query_string(remove=[self.parameter_name])}
        for value, title in self.lookup_choices:
            yield {"selected": self.value() == value, "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: value})}

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() is None:
            return queryset.exclude(pk__in=_bots())
        if self.value() == "bots":
            return queryset.filter(pk__in=_bots())
        return queryset


def _bots() -> QuerySet[Any]:
    """The users who have sat as a bot."""
    return Seat.objects.exclude(bot="").values("player_id")


admin.site.unregister(User)


@admin.register(User)
class PlayerAdmin(UserAdmin):
    """Players are users; their club memberships are edited with them. The list shows people
    unless bots are asked for (PlayerKindFilter), and the user pickers people only."""

    inlines = [*UserAdmin.inlines, PlayerMembershipInline, WalletInline]
    list_filter = [PlayerKindFilter, *UserAdmin.list_filter]

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Any],
                           search_term: str) -> tuple[QuerySet[Any], bool]:
        """The user pickers (a membership's, a soirée registration's) offer people only: a
        bot is never a member nor registered, the service seats it."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        match = request.resolver_match
        if match is not None and match.url_name == "autocomplete":
            found = found.exclude(pk__in=_bots())
        return found, duplicates


# -- Hands by soirée, disputes and rulings ------------------------------------------------------

from games.admin import HandAdmin, ReadOnlyMixin  # noqa: E402
from games.models import Hand  # noqa: E402

from .models import Dispute, Ruling  # noqa: E402


class SoireeOfHandFilter(admin.SimpleListFilter):
    """The hands of one soirée (games knows no soirée: the filter is added here)."""

    title = gettext_lazy("soirée")
    parameter_name = "soiree"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[int, str]]:
        return [(s.pk, str(s)) for s in Soiree.objects.select_related("club")[:50]]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value and value.isdigit():
            return queryset.filter(partie__soiree_table__soiree_id=int(value))
        return queryset


admin.site.unregister(Hand)


@admin.register(Hand)
class SoireeHandAdmin(HandAdmin):
    list_filter = [SoireeOfHandFilter, *HandAdmin.list_filter]


class RulingInline(ReadOnlyMixin, admin.StackedInline):
    model = Ruling
    fields = ["at", "arbiter", "kind", "reason", "corrections", "entries", "shortfall"]
    readonly_fields = fields
    extra = 0


@admin.register(Dispute)
class DisputeAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Disputes and their rulings are the record: read-only here, ruled on the audit page."""

    list_display = ["id", "soiree", "hand_link", "opened_by", "opened_at", "status"]
    list_filter = ["soiree"]
    search_fields = ["reason", "opened_by__username"]
    readonly_fields = ["hand_link", "soiree", "opened_by", "opened_at", "reason", "event_seq"]
    exclude = ["hand", "request_id"]
    inlines = [RulingInline]

    @admin.display(description=gettext_lazy("hand"))
    def hand_link(self, obj: Dispute) -> str:
        return format_html(_('hand {number} · <a href="{replay}">the replay</a> · '
                             '<a href="{audit}#disputes">its audit and rulings</a>'),
                           number=obj.hand.number,
                           replay=reverse("replay-page", args=[obj.hand_id]),
                           audit=reverse("audit-page", args=[obj.hand_id]))

    @admin.display(description=gettext_lazy("status"))
    def status(self, obj: Dispute) -> str:
        latest = obj.rulings.order_by("-at", "-pk").first()
        if latest is None:
            return _("waiting for the arbiter")
        if latest.kind == Ruling.Kind.STANDS:
            return _("ruled: the result stands")
        if latest.kind == Ruling.Kind.VOID:
            return _("ruled: the hand is void")
        return _("ruled: adjusted")
