"""The JSON renderer (config/renderers.py) writes the bytes DRF's own renderer writes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.core.management import call_command
from django.utils.translation import gettext_lazy
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import renderers
from rest_framework.exceptions import ErrorDetail
from rest_framework.test import APIClient
from rest_framework.utils.serializer_helpers import ReturnDict

from config.renderers import JSONRenderer
from games.models import Hand

DRF = renderers.JSONRenderer()
OURS = JSONRenderer()

zones = st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=1)),
                         dt.timezone(dt.timedelta(hours=-5, minutes=-30))])
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.integers(), st.text(alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from(
        ["\u2028", "\u2029", '"', "\\", "\n", "é", "♣"])),
    st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: f == 0 or 1e-4 <= abs(f) < 1e16),
    st.uuids(), st.datetimes(timezones=zones), st.datetimes(), st.dates(), st.times(),
    st.timedeltas(), st.decimals(min_value=-(10**13), max_value=10**13, places=2),
    st.builds(ErrorDetail, st.text(max_size=10), st.sampled_from(["invalid", "required"])),
    st.just(gettext_lazy("This field is required.")), st.binary(max_size=8).map(
        lambda b: b.decode("utf-8", "replace").encode()),
)
keys = st.one_of(st.text(max_size=6), st.integers(min_value=0, max_value=9))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=3).map(
            lambda d: ReturnDict(d, serializer=None))),
    max_leaves=20)


def _drf(data: Any) -> bytes | str:
    try:
        return DRF.render(data, "application/json", {})
    except (TypeError, ValueError) as exc:
        return type(exc).__name__


def _ours(data: Any) -> bytes | str:
    try:
        return OURS.render(data, "application/json", {})
    except (TypeError, ValueError) as exc:
        return type(exc).__name__


@settings(max_examples=1500, deadline=None)
@given(documents)
def test_any_answer_is_written_byte_for_byte_as_drf_writes_it(data: Any) -> None:
    assert _ours(data) == _drf(data)


@given(documents)
def test_an_indented_answer_is_drfs_own(data: Any) -> None:
    for media_type, context in (("application/json; indent=4", {}), (None, {"indent": 2})):
        assert OURS.render(data, media_type, context) == DRF.render(data, media_type, context)


def test_dict_keys_that_are_not_strings_and_line_separators_come_out_as_drf_writes_them():
    data = {1: "a\u2028b", None: [1, True], "t": dt.datetime(2030, 5, 4, 20, 0, 0, 123456,
                                                             tzinfo=dt.UTC)}
    assert OURS.render(data) == DRF.render(data) == (
        b'{"1":"a\\u2028b","null":[1,true],"t":"2030-05-04T20:00:00.123456Z"}')
    assert OURS.render(None) == b""


@pytest.mark.django_db
def test_the_apis_answers_are_drfs_bytes(django_user_model: Any) -> None:
    call_command("play_bots", game="commere", players=4, hands=2, verbosity=0)
    staff = django_user_model.objects.create_superuser("renderer-staff", password="x")
    client = APIClient()
    client.force_authenticate(staff)
    hand = Hand.objects.filter(status=Hand.Status.OVER).first()
    assert hand is not None
    paths = ["/api/parties/", f"/api/parties/{hand.partie_id}/", f"/api/hands/{hand.id}/",
             f"/api/hands/{hand.id}/events", f"/api/hands/{hand.id}/record",
             f"/api/hands/{hand.id}/verify", f"/api/hands/{uuid.uuid4()}/",
             f"/api/hands/{hand.id}/moves"]
    seen = 0
    for path in paths:
        response = client.get(path) if not path.endswith("moves") else client.post(
            path, {"command_id": "not-a-uuid", "seq": -1, "move": {}}, format="json")
        assert isinstance(response.accepted_renderer, JSONRenderer), path
        assert response.content == DRF.render(response.data, "application/json", {}), path
        seen += response.status_code in (200, 400, 404, 409)
    assert seen == len(paths)


def test_answers_as_the_api_gives_them_are_written_by_orjson(monkeypatch):
    data = {"hand": str(uuid.uuid4()), "seq": 12, "your_seat": None, "legal_moves": [
        {"type": "offer", "card": "7S"}], "deadline": dt.datetime(2030, 5, 4, 20, 0, 1, 5000,
                                                                  tzinfo=dt.UTC),
        "view": {"seats": {0: 7, 1: 8}, "to_act": (1,), "partie": uuid.uuid4()},
        "detail": ErrorDetail("no", "invalid")}
    expected = DRF.render(data)

    def refused(*args: Any, **kwargs: Any) -> bytes:
        raise AssertionError("rendered by json")

    monkeypatch.setattr(renderers.JSONRenderer, "render", refused)
    assert OURS.render(data, "application/json", {}) == expected
    assert OURS.render(data) == expected


def test_nan_is_written_as_null_where_drf_refuses_it():
    """The one difference kept (config/renderers.py): DRF's strict renderer raises on NaN and
    infinities, which the view turned into a 500; orjson writes ``null``. No answer of this
    API holds such a float: its serializers refuse them on the way in."""
    assert OURS.render({"x": float("nan")}) == b'{"x":null}'
    with pytest.raises(ValueError):
        DRF.render({"x": float("nan")})
