"""Parties and hands in the admin site, read-only: events are evidence and never edited."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from games.errors import HandNotOver
from games.models import Hand, HandEvent, Invitation, Partie, Seat, SigningKey
from games.selectors import hand_record, hand_verification


class ReadOnlyMixin:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SeatInline(ReadOnlyMixin, admin.TabularInline):
    model = Seat
    fields = ["number", "player", "bot"]
    readonly_fields = fields
    extra = 0


class InvitationInline(ReadOnlyMixin, admin.TabularInline):
    model = Invitation
    fields = ["number", "player", "bot", "answer", "answered_at"]
    readonly_fields = fields
    extra = 0


class HandInline(ReadOnlyMixin, admin.TabularInline):
    model = Hand
    fields = ["number", "dealer", "status", "last_seq", "deadline", "started_at", "ended_at"]
    readonly_fields = fields
    extra = 0
    show_change_link = True


@admin.register(Partie)
class PartieAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "game", "table_label", "club_key", "status", "created_at"]
    list_filter = ["game", "status", "club_key"]
    search_fields = ["id", "table_label", "seats__player__username"]
    readonly_fields = [f.name for f in Partie._meta.fields]
    inlines = [InvitationInline, SeatInline, HandInline]


class EventInline(ReadOnlyMixin, admin.TabularInline):
    model = HandEvent
    fields = ["seq", "type", "by", "payload", "actor", "at", "hash"]
    readonly_fields = fields
    extra = 0
    ordering = ["seq"]


@admin.register(Hand)
class HandAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "partie", "number", "status", "last_seq", "record_links"]
    list_filter = ["status", "partie__game"]
    # An arbiter looks a hand up by a player's name, or by its table's label.
    search_fields = ["id", "partie__id", "commitment", "partie__seats__player__username",
                     "partie__table_label"]
    readonly_fields = ["partie", "number", "dealer", "commitment", "status", "last_seq",
                       "deadline", "deadline_kind", "started_at", "ended_at", "record_links"]
    exclude = ["deadline_seq"]
    inlines = [EventInline]

    @admin.display(description=gettext_lazy("Record"))
    def record_links(self, obj: Hand) -> str:
        if obj.status != Hand.Status.OVER:
            return _("(published when the hand is over)")
        return format_html(
            '<a href="{}">{}</a> · <a href="{}">{}</a>',
            reverse("admin:games_hand_record", args=[obj.pk]), _("record"),
            reverse("admin:games_hand_verify", args=[obj.pk]), _("verification"),
        )

    def get_urls(self) -> list[URLPattern]:
        extra = [
            path("<uuid:hand_id>/record/", self.admin_site.admin_view(self.record_view),
                 name="games_hand_record"),
            path("<uuid:hand_id>/verify/", self.admin_site.admin_view(self.verify_view),
                 name="games_hand_verify"),
        ]
        return extra + super().get_urls()

    def record_view(self, request: HttpRequest, hand_id: Any) -> HttpResponse:
        hand = get_object_or_404(Hand, pk=hand_id)
        try:
            record = hand_record(hand=hand)
        except HandNotOver as exc:
            return JsonResponse({"error": str(exc)}, status=409)
        return JsonResponse(record, json_dumps_params={"indent": 1, "ensure_ascii": False})

    def verify_view(self, request: HttpRequest, hand_id: Any) -> HttpResponse:
        hand = get_object_or_404(Hand, pk=hand_id)
        try:
            result = hand_verification(hand=hand)
        except HandNotOver as exc:
            result = {"ok": False, "discrepancy": str(exc), "digest": None}
        context = {**self.admin_site.each_context(request), "hand": hand, "result": result,
                   "title": _("Verification of hand %(number)s") % {"number": hand.number},
                   "verdict": (_("Verified: OK {digest}").format(digest=result["digest"])
                               if result["ok"] else _("Discrepancy: {discrepancy}").format(
                                   discrepancy=result["discrepancy"])),
                   "result_json": json.dumps(result, indent=1)}
        return TemplateResponse(request, "admin/games/hand_verify.html", context)


@admin.register(SigningKey)
class SigningKeyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The receipts' public keys, current and retired (``/api/keys``): a new key is published
    by configuration (ACADEMIE_SIGNING_KEY) and ``migrate``, never typed in here."""

    list_display = ["id", "since", "until", "public"]
    ordering = ["-since"]
