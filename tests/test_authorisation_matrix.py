"""Authorisation as a matrix: every endpoint of the OpenAPI schema and every page, crossed with
every role, answers the status this table expects.

The endpoints come from drf-spectacular's generator and the pages from frontend/urls.py, at
test time: a new endpoint or page that the table does not name fails the test, so none can skip
it. Each cell runs in a savepoint rolled back afterwards, so that no cell sees another's writes.
A POST is sent with an empty JSON body: what is checked is who gets past the door (401, 403,
404) and who reaches the validation behind it (400).
"""

from __future__ import annotations

import re
import uuid
from datetime import date, timedelta
from typing import Any

import pytest
from django.db import transaction
from django.urls import URLPattern
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from frontend.urls import urlpatterns as page_patterns
from games import services
from tournaments.models import Club, Membership, Season, Soiree

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "seated", "member", "other_club", "auditor", "organiser", "staff",
         "superuser")

# Who sees a club's parties and hands: its members in any role, staff and superusers; not a
# member of another club. Who acts: the seated player plays; the organiser runs the soirée.
_VIEW = {"anonymous": 401, "seated": 200, "member": 200, "other_club": 403, "auditor": 200,
         "organiser": 200, "staff": 200, "superuser": 200}
_NOT_OVER = {**_VIEW, **{r: 409 for r, s in _VIEW.items() if s == 200}}
_ANY_SIGNED_IN = {r: (401 if r == "anonymous" else 200) for r in ROLES}
_SIGNED_IN_400 = {r: (401 if r == "anonymous" else 400) for r in ROLES}
_ORGANISER_ONLY = {"anonymous": 401, "seated": 403, "member": 403, "other_club": 403,
                   "auditor": 403, "organiser": 200, "staff": 200, "superuser": 200}
_ORGANISER_400 = {r: (400 if s == 200 else s) for r, s in _ORGANISER_ONLY.items()}
# A member registers himself (an empty body names nobody else); staff who are not members of
# the club cannot play in it.
_REGISTER = {**_VIEW, "seated": 201, "member": 201, "auditor": 201, "organiser": 201,
             "staff": 403, "superuser": 403}
# One's own wallet: only the seated player has one in the club (his buy-in).
_OWN_WALLET = {**{r: 404 for r in ROLES}, "anonymous": 401, "seated": 200}
_PAGE = {r: (302 if r == "anonymous" else 200) for r in ROLES}
_PAGE_VIEW = {**{r: (403 if s == 403 else 200) for r, s in _VIEW.items()}, "anonymous": 302}
# The organiser's pages: the club's organisers and staff; a signed-out visitor is sent to log in.
_PAGE_ORGANISER = {**{r: (403 if s == 403 else 200) for r, s in _ORGANISER_ONLY.items()},
                   "anonymous": 302}

#: (method, path template) -> the status each role gets.
EXPECTED: dict[tuple[str, str], dict[str, int]] = {
    ("GET", "/api/parties/"): _ANY_SIGNED_IN,
    ("POST", "/api/parties/"): _SIGNED_IN_400,
    ("GET", "/api/parties/{partie_id}/"): _VIEW,
    # Past the door, an answer names its choice; the partie here is a club's, which no
    # creator closes (a casual table's creator does: tests/games/test_invitations.py).
    ("POST", "/api/parties/{partie_id}/answer"): {r: (400 if s == 200 else s)
                                                   for r, s in _VIEW.items()},
    ("GET", "/api/parties/{partie_id}/away"): _VIEW,
    ("POST", "/api/parties/{partie_id}/away"): {r: (400 if s == 200 else s)
                                                 for r, s in _VIEW.items()},
    # One's own standing order for the Comet: the seated player's alone; past the door, a
    # body without an order is refused first.
    ("GET", "/api/parties/{partie_id}/comet-order"): {r: (403 if s == 200 and r != "seated"
                                                            else s) for r, s in _VIEW.items()},
    ("POST", "/api/parties/{partie_id}/comet-order"): {r: (400 if s == 200 else s)
                                                        for r, s in _VIEW.items()},
    ("POST", "/api/parties/{partie_id}/close"): {r: (401 if r == "anonymous" else 403)
                                                  for r in ROLES},
    ("GET", "/api/invitations/"): _ANY_SIGNED_IN,
    # The keys that sign receipts are public: anyone checks a receipt.
    ("GET", "/api/keys"): {r: 200 for r in ROLES},
    ("GET", "/api/hands/{hand_id}/"): _VIEW,
    ("POST", "/api/hands/{hand_id}/moves"): _SIGNED_IN_400,
    # A share names itself: the body is checked once the hand may be seen.
    ("POST", "/api/hands/{hand_id}/share"): {r: (400 if s == 200 else s)
                                              for r, s in _VIEW.items()},
    ("GET", "/api/hands/{hand_id}/events"): _VIEW,
    ("GET", "/api/hands/{hand_id}/record"): _NOT_OVER,
    ("GET", "/api/hands/{hand_id}/verify"): _NOT_OVER,
    ("GET", "/api/hands/{hand_id}/replay"): _NOT_OVER,
    ("GET", "/api/hands/{hand_id}/disputes"): _VIEW,
    ("POST", "/api/hands/{hand_id}/disputes"): {r: (400 if s == 200 else s)
                                                 for r, s in _VIEW.items()},
    ("GET", "/api/disputes/"): _ANY_SIGNED_IN,
    ("GET", "/api/disputes/{dispute_id}/"): _VIEW,
    # A club auditor (or staff) who did not play the hand; an empty ruling is then refused.
    ("POST", "/api/disputes/{dispute_id}/rulings"): {
        **{r: 403 for r in ROLES}, "anonymous": 401, "auditor": 400, "staff": 400,
        "superuser": 400},
    ("POST", "/api/disputes/{dispute_id}/rulings/effect"): {
        **{r: 403 for r in ROLES}, "anonymous": 401, "auditor": 400, "staff": 400,
        "superuser": 400},
    ("POST", "/api/disputes/{dispute_id}/whatifs"): {
        **{r: 403 for r in ROLES}, "anonymous": 401, "auditor": 400, "staff": 400,
        "superuser": 400},
    ("GET", "/api/soirees/"): _ANY_SIGNED_IN,
    ("POST", "/api/soirees/"): _SIGNED_IN_400,
    ("GET", "/api/soirees/{soiree_id}/"): _VIEW,
    ("POST", "/api/soirees/{soiree_id}/register"): _REGISTER,
    ("POST", "/api/soirees/{soiree_id}/checkin"): _ORGANISER_400,
    ("POST", "/api/soirees/{soiree_id}/rebuy"): _ORGANISER_400,
    ("POST", "/api/soirees/{soiree_id}/seats"): _ORGANISER_400,
    ("GET", "/api/soirees/{soiree_id}/announcements"): _VIEW,
    ("POST", "/api/soirees/{soiree_id}/announcements"): _ORGANISER_400,
    ("PATCH", "/api/soirees/{soiree_id}/"): _ORGANISER_ONLY,  # an empty change: nothing done
    ("POST", "/api/soirees/{soiree_id}/cashout"): _ORGANISER_400,
    # Nobody is checked in at the soirée of the matrix: past the door, it waits (409).
    ("POST", "/api/soirees/{soiree_id}/open"): {r: (409 if s == 200 else s)
                                                 for r, s in _ORGANISER_ONLY.items()},
    ("POST", "/api/soirees/{soiree_id}/cancel"): _ORGANISER_ONLY,
    ("POST", "/api/soirees/{soiree_id}/checkin/undo"): _ORGANISER_400,
    # Anyone signed in may take his own name off; nobody is registered here (409).
    ("POST", "/api/soirees/{soiree_id}/unregister"): {r: (401 if r == "anonymous" else 409)
                                                       for r in ROLES},
    ("POST", "/api/soirees/{soiree_id}/close"): _ORGANISER_ONLY,
    ("GET", "/api/soirees/{soiree_id}/tables"): _VIEW,
    ("GET", "/api/soirees/{soiree_id}/my-table"): _VIEW,
    ("GET", "/api/soirees/{soiree_id}/standings"): _VIEW,
    ("GET", "/api/seasons/{season_id}/standings"): _VIEW,
    ("GET", "/api/ledger/me/wallets/"): _ANY_SIGNED_IN,
    ("GET", "/api/ledger/me/wallets/{club_key}/"): _OWN_WALLET,
    ("GET", "/api/ledger/me/wallets/{club_key}/statement/"): _OWN_WALLET,
    ("GET", "/api/ledger/clubs/{club_key}/accounts/"): _ORGANISER_ONLY,
    ("GET", "/api/ledger/clubs/{club_key}/accounts/{account_id}/"): _ORGANISER_ONLY,
    ("GET", "/api/ledger/clubs/{club_key}/accounts/{account_id}/statement/"): _ORGANISER_ONLY,
    ("GET", "/api/ledger/clubs/{club_key}/trial-balance/"): _ORGANISER_ONLY,
    # Past the door, the settlement asks for its time span.
    ("GET", "/api/ledger/clubs/{club_key}/settlement/"): _ORGANISER_400,
    ("GET", "/api/schema/"): {r: 200 for r in ROLES},
    # Pages (frontend/urls.py): a signed-out visitor is sent to the login page.
    ("PAGE", "/"): _PAGE,
    # The icon browsers ask for, whoever asks.
    ("PAGE", "/favicon.ico"): {r: 301 for r in ROLES},
    # The scripts' words (Django's JavaScript catalogue): nothing of anyone's.
    ("PAGE", "/jsi18n/"): {r: 200 for r in ROLES},
    ("PAGE", "/soirees/new"): _PAGE_ORGANISER,
    ("PAGE", "/soirees/{soiree_id}/"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/room"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/results"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/chips.svg"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/results.pdf"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/standings.csv"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/settlement.csv"): _PAGE_VIEW,
    ("PAGE", "/soirees/{soiree_id}/manage"): _PAGE_ORGANISER,
    # The door's member search (JSON, for the manage page's late-arrival box).
    ("PAGE", "/soirees/{soiree_id}/members"): _PAGE_ORGANISER,
    ("PAGE", "/soirees/{soiree_id}/seating"): _PAGE_ORGANISER,
    ("PAGE", "/soirees/{soiree_id}/edit"): _PAGE_ORGANISER,
    ("PAGE", "/seasons/{season_id}/"): _PAGE_VIEW,
    ("PAGE", "/seasons/{season_id}/players/{user_id}/"): _PAGE_VIEW,
    ("PAGE", "/seasons/{season_id}/players/{user_id}/rating.svg"): _PAGE_VIEW,
    ("PAGE", "/hands/"): _PAGE,
    ("PAGE", "/hands/{hand_id}/"): _PAGE_VIEW,
    ("PAGE", "/hands/{hand_id}/audit"): _PAGE_VIEW,
    ("PAGE", "/hands/{hand_id}/replay"): _PAGE_VIEW,
    # The hand of the world is in play: its record is published once it is over.
    ("PAGE", "/hands/{hand_id}/record.json"): {**_PAGE_VIEW, **{r: 409 for r, s in
                                                               _PAGE_VIEW.items() if s == 200}},
    # A member's calendar feed: no sign-in, its secret address is the key (any holder reads it).
    ("PAGE", "/calendar/{token}.ics"): {r: 200 for r in ROLES},
    # Revoking one's own feed is a POST (this GET: 405) by a signed-in member.
    ("PAGE", "/calendar/{club_id}/revoke"): {r: (302 if r == "anonymous" else 405)
                                             for r in ROLES},
    ("PAGE", "/accounts/login/"): {r: 200 for r in ROLES},
    ("PAGE", "/accounts/logout/"): {r: 405 for r in ROLES},
    # The club's people: its organisers invite; anyone with a link signs up (or, signed in,
    # joins); the password pages are Django's, a reset asked for signed out.
    ("PAGE", "/clubs/{club_id}/members"): _PAGE_ORGANISER,
    ("PAGE", "/accounts/invitation/{secret}/"): {r: 200 for r in ROLES},
    ("PAGE", "/accounts/password/change/"): _PAGE,
    ("PAGE", "/accounts/password/change/done/"): _PAGE,
    ("PAGE", "/accounts/password/reset/"): {r: 200 for r in ROLES},
    ("PAGE", "/accounts/password/reset/sent/"): {r: 200 for r in ROLES},
    # A forged reset link: the page says it cannot be used.
    ("PAGE", "/accounts/password/reset/{uidb64}/{token}/"): {r: 200 for r in ROLES},
    ("PAGE", "/accounts/password/reset/done/"): {r: 200 for r in ROLES},
}


def schema_endpoints() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [(method.upper(), path) for path, operations in schema["paths"].items()
            for method in operations if method in ("get", "post", "put", "patch", "delete")]


def page_routes() -> list[tuple[str, str]]:
    out = []
    for pattern in page_patterns:
        assert isinstance(pattern, URLPattern)
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        out.append(("PAGE", "/" + route))
    return out


@pytest.fixture
def world(django_user_model: Any, settings: Any) -> dict[str, Any]:
    make = django_user_model.objects.create_user
    users = {role: make(role, password=f"pw-{role}-123") for role in ROLES[1:6]}
    users["staff"] = make("staff", password="pw-staff-123", is_staff=True)
    users["superuser"] = django_user_model.objects.create_superuser(
        "root", password="pw-root-123")
    club = Club.objects.create(name="Les Amis", slug="les-amis")
    other = Club.objects.create(name="Autre Cercle", slug="autre")
    for role, membership in (("seated", "player"), ("member", "player"),
                             ("auditor", "auditor"), ("organiser", "organiser")):
        Membership.objects.create(club=club, user=users[role], role=membership)
    Membership.objects.create(club=other, user=users["other_club"])
    now = timezone.now()
    season = Season.objects.create(club=club, name="2026", starts_on=date(2026, 1, 1),
                                   ends_on=date(2026, 12, 31))
    soiree = Soiree.objects.create(club=club, season=season, name="Jeudi", starts_at=now,
                                   ends_at=now + timedelta(hours=2), game="comet")
    partie = services.partie_start(game="comet", players=[users["seated"]], bots=["heuristic"],
                                   club_key=club.slug, buy_in=50, at=now,
                                   move_timeout=timedelta(hours=1),
                                   forced_move_delay=timedelta(hours=1),
                                   comet_window=timedelta(seconds=15))
    hand = partie.hands.get()
    from ledger.models import Account
    from tournaments.models import Dispute

    dispute = Dispute.objects.create(hand=hand, soiree=soiree, opened_by=users["seated"],
                                     opened_at=now, reason="a revoke", request_id=uuid.uuid4())

    account = Account.objects.filter(club_key=club.slug).first()
    assert account is not None
    from tournaments.calendar import calendar_token_get

    token = calendar_token_get(club=club, user=users["member"])
    from tournaments.invitations import invitation_create

    _invitation, secret = invitation_create(club=club, by=users["organiser"], at=now)
    return {"users": users, "params": {
        "partie_id": partie.pk, "hand_id": hand.pk, "soiree_id": soiree.pk,
        "season_id": season.pk, "club_key": club.slug, "account_id": account.pk,
        "dispute_id": dispute.pk, "club_id": club.pk, "token": token,
        "user_id": users["member"].pk, "secret": secret, "uidb64": "MTIzNDU"}}


def _answer(client: APIClient, method: str, path: str, params: dict[str, Any]) -> int:
    url = path.format(**params)
    if method in ("POST", "PATCH"):
        response = getattr(client, method.lower())(url, {}, format="json")
    else:
        response = client.get(url)
    return int(response.status_code)


def test_every_endpoint_and_page_is_in_the_table() -> None:
    found = set(schema_endpoints()) | set(page_routes())

    assert sorted(found - set(EXPECTED)) == [], "endpoints the matrix does not name"
    assert sorted(set(EXPECTED) - found) == [], "the matrix names endpoints that are gone"


def test_every_role_gets_the_expected_status_at_every_endpoint_and_page(
        world: dict[str, Any]) -> None:
    wrong = []
    for method, path in schema_endpoints() + page_routes():
        expected = EXPECTED.get((method, path))
        if expected is None:
            wrong.append(f"{method} {path}: not in the table")
            continue
        for role in ROLES:
            client = APIClient()
            if role != "anonymous":
                client.force_login(world["users"][role])
            with transaction.atomic():
                got = _answer(client, "GET" if method == "PAGE" else method, path,
                              world["params"])
                transaction.set_rollback(True)
            if got != expected[role]:
                wrong.append(f"{method} {path} as {role}: {got}, expected {expected[role]}")

    assert wrong == [], "\n".join(wrong)
