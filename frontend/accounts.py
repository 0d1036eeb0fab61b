"""The club's people: an organiser's members page (who is in the club, invitation links), and
the sign-up a link leads to. Password change and reset are Django's own views (urls.py)."""

from __future__ import annotations

import logging
from smtplib import SMTPException
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.core.mail import send_mail
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from tournaments.invitations import (
    INVITATION_LIFETIME,
    InvitationInvalid,
    invitation_accept,
    invitation_create,
    invitation_get,
    invitations_pending,
)
from tournaments.models import Club, Membership
from tournaments.permissions import clubs_organised, may_organise

log = logging.getLogger(__name__)
#: The backend a new member is signed in with (django-axes' own only counts failures).
SIGN_IN_BACKEND = "tournaments.auth.NulSafeModelBackend"


class InvitationForm(forms.Form):
    email = forms.EmailField(label=gettext_lazy("Email (optional)"), required=False,
                             help_text=gettext_lazy("The link is also sent to this address."))


class SignUpForm(UserCreationForm):  # type: ignore[type-arg]
    """Django's form (username, password twice, the validators of settings) and the name the
    club's pages show: first and last name, on the user row (``get_full_name``)."""

    first_name = forms.CharField(label=gettext_lazy("First name"), max_length=150)
    last_name = forms.CharField(label=gettext_lazy("Last name"), max_length=150, required=False,
                                help_text=gettext_lazy(
                                    "Shown with your first name on the club's pages and sheets."))

    email = forms.EmailField(label=gettext_lazy("Email"), required=False,
                             help_text=gettext_lazy(
                                 "Optional: where a new password is sent if you forget yours."))

    class Meta(UserCreationForm.Meta):  # type: ignore[name-defined,misc]
        model = get_user_model()
        fields = ("username", "first_name", "last_name", "email")


@login_required
def club_members(request: HttpRequest, club_id: int) -> HttpResponse:
    """The organiser's page of his club's people: the members, the links not used yet, and the
    form that makes a new link (and mails it, where the deployment sends email)."""
    club = get_object_or_404(Club, pk=club_id)
    if not may_organise(request.user, club.pk):
        raise PermissionDenied(_("Only the club's organisers may invite members."))
    now = timezone.now()
    form, link = InvitationForm(), None
    if request.method == "POST":
        form = InvitationForm(request.POST)
        if form.is_valid():
            email = form.cleaned_data["email"] if settings.ACADEMIE_SENDS_EMAIL else ""
            _invitation, token = invitation_create(
                club=club, by=request.user, at=now, email=email)  # type: ignore[arg-type]
            link = request.build_absolute_uri(reverse("invitation", args=[token]))
            if email:
                _mail_invitation(request, club=club, email=email, link=link)
            form = InvitationForm()
    members = (Membership.objects.filter(club=club).select_related("user")
               .order_by("user__username", "role"))
    return render(request, "frontend/club_members.html", {
        "club": club, "members": members, "pending": invitations_pending(club=club, at=now),
        "form": form, "link": link, "days": INVITATION_LIFETIME.days,
        "sends_email": settings.ACADEMIE_SENDS_EMAIL})


def _mail_invitation(request: HttpRequest, *, club: Club, email: str, link: str) -> None:
    inviter = request.user.get_full_name() or request.user.get_username()  # type: ignore[union-attr]
    subject = _("Invitation to %(club)s") % {"club": club.name}
    body = _("%(inviter)s invites you to join %(club)s on Académie.\n\n"
             "Choose your name and password here (the link is good for %(days)d days, "
             "once):\n%(link)s\n") % {"inviter": inviter, "club": club.name, "link": link,
                                      "days": INVITATION_LIFETIME.days}
    try:
        send_mail(subject, body, None, [email])
    except (SMTPException, OSError):
        log.exception("the invitation to %s could not be mailed", club.slug)
        messages.error(request, _("The email could not be sent: give the link yourself."))
    else:
        messages.success(request, _("The link was sent to %(email)s.") % {"email": email})


def invitation_page(request: HttpRequest, secret: str) -> HttpResponse:
    """Where an invitation link leads: a sign-up form (signed out), or joining the club with
    the account one is signed in with. A link that may not be used gets a page saying why."""
    now = timezone.now()
    try:
        invitation = invitation_get(token=secret, at=now)
    except InvitationInvalid as refused:
        return _invalid(request, refused)
    signed_in = request.user.is_authenticated
    form = None if signed_in else SignUpForm(initial={"email": invitation.email})
    if request.method == "POST":
        try:
            if signed_in:
                invitation_accept(token=secret, at=now, user=request.user)  # type: ignore[arg-type]
                messages.success(request, _("You are now a member of %(club)s.")
                                 % {"club": invitation.club.name})
                return redirect("lobby")
            form = SignUpForm(request.POST)
            if form.is_valid():
                user = invitation_accept(token=secret, at=now, make_user=form.save)
                # Signed in at once; django-axes has nothing to count (no password was tried).
                login(request, user, backend=SIGN_IN_BACKEND)  # type: ignore[arg-type]
                messages.success(request, _("Welcome to %(club)s!")
                                 % {"club": invitation.club.name})
                return redirect("lobby")
        except InvitationInvalid as refused:
            return _invalid(request, refused)
    return render(request, "frontend/invitation.html", {
        "invitation": invitation, "form": form, "signed_in": signed_in})


def _invalid(request: HttpRequest, refused: InvitationInvalid) -> HttpResponse:
    return render(request, "frontend/invitation_invalid.html", {"reason": refused.reason},
                  status=404 if refused.reason == "unknown" else 410)


def club_links(user: Any) -> list[Club]:
    """The clubs whose members page the lobby links for ``user``: those he organises."""
    return list(clubs_organised(user=user)) if user.is_authenticated else []
