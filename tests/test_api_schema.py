"""Every operation of the API against its own OpenAPI schema, fuzzed by schemathesis.

Schemathesis generates requests from the published schema (valid ones and, in its negative
mode, invalid ones), sends them to the service in this process (its WSGI application, on the
test database) as a signed-in staff member, and checks every answer: never a 500, a status code,
content type, headers and body that the schema documents, and every schema-invalid request
refused. Its first run against `make run` found two 500s (a NUL character in Basic credentials
or in the session cookie), answers the schema did not describe (every refusal; the move's 201;
HTML 404 pages under /api/), and a soirée accepted in year 33 whose answer's offset was not RFC
3339; each is fixed, and has its own test besides (tests/test_nul_input.py,
tests/tournaments/test_api.py).

Excluded: ``positive_data_acceptance``, which expects every schema-valid request to succeed;
the API rightly refuses some that a schema cannot describe (a soirée that ends before it starts,
a partie with too many seats, a move the rules forbid), and says why.

The path parameters of a positive case are either generated or, one time in two, the ids of
real objects (a club of which the person is organiser, a soirée, a season, a partie he sits
at, its hand, his wallet), so that requests reach past the 404. And a refusal changes
nothing: after every answer of 400 or more, every row of every table that holds play or chips
is as it was before the request.

Derandomized, so that a run finds what the previous one found; a change of the schema changes
the examples.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import CHECKS
from schemathesis.errors import FailureGroup

from config.wsgi import application
from games.models import Command, Hand, HandEvent, HandSeed, Partie, Seat
from games.services import partie_start, partie_tick
from ledger.models import Account, JournalEntry, Posting
from ledger.services import wallet_get_or_create
from tournaments.models import Club, Membership, Registration, Season, Soiree, SoireeTable
from tournaments.services import club_create, membership_add, registration_add, soiree_create

pytestmark = pytest.mark.django_db

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)

USERNAME, PASSWORD = "fuzz-staff", "fuzz-staff-pass"
EXCLUDED = [CHECKS.get_one("positive_data_acceptance")]


#: The real objects' ids by path parameter, set by ``signed_in`` for the running test.
REAL: dict[str, Any] = {}
#: The tables whose rows a refused request must leave as they were.
KEPT = [Partie, Seat, Hand, HandSeed, HandEvent, Command, Club, Membership, Season, Soiree,
        Registration, SoireeTable, Account, JournalEntry, Posting]


@schema.hook
def flatmap_case(context: Any, case: Any) -> Any:
    """A positive case as generated, or with the real objects' ids in its path."""
    real = {name: REAL[name] for name in case.path_parameters or {} if name in REAL}
    if not real or case.meta is None or case.meta.generation.mode.is_negative:
        return st.just(case)

    generated = dict(case.path_parameters)

    def pick(use_real: bool) -> Any:  # each draw sets both ways: a case may be drawn again
        case.path_parameters = {**generated, **real} if use_real else dict(generated)
        return case

    return st.booleans().map(pick)


@pytest.fixture
def signed_in(django_user_model: Any) -> Iterator[dict[str, str]]:
    person = django_user_model.objects.create_user(USERNAME, password=PASSWORD, is_staff=True)
    club = club_create(name="Le Cercle", slug="cercle", organiser=person)
    today = timezone.now().date()
    season = Season.objects.create(club=club, name="Hiver", starts_on=today,
                                   ends_on=today + timedelta(days=90))
    soiree = soiree_create(club=club, name="Jeudi", game="comet", season=season,
                           starts_at=timezone.now() + timedelta(hours=1),
                           ends_at=timezone.now() + timedelta(hours=4))
    # A Ma commère table of the person and three bots; no delays, so a hand that ends deals
    # the next at once.
    partie = partie_start(game="commere", players=[person], bots=["heuristic"] * 3, options={},
                          club_key="cercle", buy_in=50, at=timezone.now(),
                          forced_move_delay=timedelta(0), comet_window=timedelta(0),
                          pause_between_hands=timedelta(0))
    REAL.update(club_key="cercle", soiree_id=soiree.pk, season_id=season.pk,
                partie_id=str(partie.pk), hand_id=str(partie.hands.get().pk),
                account_id=wallet_get_or_create(club_key="cercle", owner=person).pk)
    token = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    # As Django's test client does: a request must not close the test's connection (its
    # transaction is the test's database).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield {"Authorization": f"Basic {token}"}
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=25, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_every_answer_is_one_the_schema_documents(case: Any, signed_in: dict[str, str]) -> None:
    before = _rows()
    try:
        status = case.call_and_validate(headers=signed_in, excluded_checks=EXCLUDED).status_code
    except FailureGroup as group:
        # A body over the API's size limit is refused (413) before it is parsed: a rejection,
        # which the negative-data check does not count among its expected statuses.
        if any(f.code != "ST201" or getattr(f, "status_code", None) != 413
               for f in group.exceptions):
            raise
        status = 413
    if status >= 400:
        assert _rows() == before, f"{status}: a refused request changed rows"


def _call(headers: dict[str, str], method: str, path: str, parameters: dict[str, Any],
          **kwargs: Any) -> Any:
    """One request built by hand, sent and checked as the fuzzed ones are."""
    case = schema[path][method].Case(path_parameters=parameters, **kwargs)
    return case.call_and_validate(headers=headers, excluded_checks=EXCLUDED)


def _rows() -> dict[str, list[Any]]:
    """Every row of those tables, in full (the test's few): a refusal may neither add, change
    nor remove one."""
    return {model.__name__: list(model.objects.order_by("pk").values_list())
            for model in KEPT}


def test_a_hand_played_to_its_end_answers_as_documented(signed_in: dict[str, str]) -> None:
    """The answers fuzzing rarely reaches, built by hand and checked the same way: every move
    of a hand (201), its view after each, and once it is over its record and verification."""
    partie = Partie.objects.get(pk=REAL["partie_id"])
    for _ in range(20):  # a hand may end at its deal (a forced announcement): deal the next
        hand = partie.hands.order_by("-number").first()
        if hand is not None and hand.status == Hand.Status.PLAYING:
            break
        partie_tick(partie_id=partie.pk, at=timezone.now())
    hand_id = str(hand.pk)

    def call(method: str, path: str, **kwargs: Any) -> Any:
        return _call(signed_in, method, path, {"hand_id": hand_id}, **kwargs)

    moves = 0
    view = call("GET", "/api/hands/{hand_id}/").json()
    while view["status"] != "over":
        assert view["your_seat"] in view["to_act"] and view["legal_moves"], view
        answer = call("POST", "/api/hands/{hand_id}/moves", body={
            "command_id": str(uuid.uuid4()), "seq": view["seq"], "move": view["legal_moves"][0]},
            media_type="application/json")
        assert answer.status_code == 201
        moves += 1
        view = call("GET", "/api/hands/{hand_id}/").json()
    assert moves > 0 and view["seed"] is not None
    assert call("GET", "/api/hands/{hand_id}/events").json()["over"] is True
    assert call("GET", "/api/hands/{hand_id}/record").json()["hand"] == hand_id
    assert call("GET", "/api/hands/{hand_id}/verify").json()["ok"] is True


def test_a_soiree_run_through_the_api_answers_as_documented(signed_in: dict[str, str],
                                                            django_user_model: Any) -> None:
    """A soirée checked in, opened, watched and closed by its organiser over the API, every
    answer checked against the schema (the fuzzing reaches these only by chance)."""
    soiree = Soiree.objects.get(pk=REAL["soiree_id"])
    member = django_user_model.objects.create_user("fuzz-member")
    membership_add(club=soiree.club, user=member, role="player")
    registration_add(soiree=soiree, user=member)

    def call(method: str, path: str, **kwargs: Any) -> Any:
        return _call(signed_in, method, path, {"soiree_id": soiree.pk}, **kwargs)

    checked = call("POST", "/api/soirees/{soiree_id}/checkin", body={"player": "fuzz-member"},
                   media_type="application/json")
    assert checked.status_code == 201 and checked.json()["player"] == "fuzz-member"
    assert call("POST", "/api/soirees/{soiree_id}/open").json()["tables"] == 1
    [table] = call("GET", "/api/soirees/{soiree_id}/tables").json()["tables"]
    assert [s["player"] for s in table["seats"] if s["bot"] is None] == ["fuzz-member"]
    assert table["current_hand"] is not None
    assert call("GET", "/api/soirees/{soiree_id}/my-table").json()["table"] is None  # staff
    # Computed once open (its shape checked by the schema; its rows come as hands end).
    assert call("GET", "/api/soirees/{soiree_id}/standings").json()["standings"] is not None
    assert call("POST", "/api/soirees/{soiree_id}/close").json()["status"] in ("open", "closed")
    season = _call(signed_in, "GET", "/api/seasons/{season_id}/standings",
                   {"season_id": REAL["season_id"]})
    assert season.status_code == 200
