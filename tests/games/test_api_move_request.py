"""The move request's quick check (``MoveRequestSerializer.well_formed``) against the serializer
it stands in for: it accepts nothing the serializer refuses, gives what the serializer gives, and
takes the requests clients send."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from games.api.serializers import MOVE_TYPES, MoveRequestSerializer
from games.engine.cards import FULL_DECK, SUITS


def _by_serializer(data: Any) -> dict[str, Any] | None:
    checked = MoveRequestSerializer(data=data)
    if not checked.is_valid():
        return None
    v = checked.validated_data
    return {"command_id": v["command_id"], "seq": v["seq"], "move": dict(v["move"])}


# Values near the edges of every field: strings that strip to a card, blanks, a suit's two
# letters, bools for ints, UUIDs in every spelling, numbers as strings, nested odd shapes.
_odd = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
    st.sampled_from(["", " ", "TD", " TD", "TD ", "10D", "td", "C", " C", "CD", "X", "CDHS",
                     "play", "open", "Play", "0", "7", "7.0", "-1", str(uuid.uuid4()),
                     uuid.uuid4().hex, "urn:uuid:" + str(uuid.uuid4()),
                     "{" + str(uuid.uuid4()) + "}", str(uuid.uuid4()).upper(), "not a uuid"]),
    st.text(max_size=4), st.lists(st.integers(), max_size=2),
)
_spellings = st.uuids().flatmap(lambda u: st.sampled_from(
    [str(u), u.hex, str(u).upper(), "urn:uuid:" + str(u), "{" + str(u) + "}"]))
_valid_move = st.builds(
    lambda t, card, suit, keys, extra: {
        "type": t, **({"card": card} if "card" in keys else {}),
        **({"suit": suit} if "suit" in keys else {}), **extra},
    st.sampled_from(MOVE_TYPES), st.one_of(st.none(), st.sampled_from(FULL_DECK)),
    st.one_of(st.none(), st.sampled_from(list(SUITS))),
    st.sets(st.sampled_from(["card", "suit"])),
    st.dictionaries(st.sampled_from(["other", "seat"]), _odd, max_size=1))
_valid = st.builds(lambda c, seq, m, extra: {"command_id": c, "seq": seq, "move": m, **extra},
                   _spellings, st.integers(0, 2**63 - 1), _valid_move,
                   st.dictionaries(st.sampled_from(["extra", "hand"]), _odd, max_size=1))


@st.composite
def _request(draw: st.DrawFn) -> Any:
    """A request as clients write it (UUID spellings, nulls and extra keys included), or the
    same with one field, or the move's, replaced by an odd value, or no request at all."""
    kind = draw(st.sampled_from(["valid", "field", "move field", "odd"]))
    if kind == "odd":
        return draw(st.one_of(_odd, st.dictionaries(st.text(max_size=8), _odd, max_size=3)))
    data = draw(_valid)
    if kind == "field":
        data[draw(st.sampled_from(["command_id", "seq", "move"]))] = draw(_odd)
    elif kind == "move field":
        data["move"][draw(st.sampled_from(["type", "card", "suit"]))] = draw(_odd)
    return data


@settings(max_examples=1500, deadline=None)
@given(_request())
def test_the_quick_check_accepts_only_what_the_serializer_accepts_and_gives_the_same(
        data: Any) -> None:
    quick = MoveRequestSerializer.well_formed(data)

    event("quick check: " + ("accepted" if quick is not None else "left to the serializer"))
    if quick is not None:
        assert _by_serializer(data) == quick


def test_the_requests_drawn_are_accepted_and_refused_both_often() -> None:
    """The property above compares only what the quick check accepts: make sure it sees much
    of that, and of what it leaves."""
    seen: list[bool] = []

    @settings(max_examples=400, deadline=None, database=None)
    @given(_request())
    def draw(data: Any) -> None:
        seen.append(MoveRequestSerializer.well_formed(data) is not None)

    draw()
    assert 0.2 < sum(seen) / len(seen) < 0.8, sum(seen) / len(seen)


@settings(max_examples=300, deadline=None)
@given(command_id=st.uuids(), seq=st.integers(0, 10**9), type_=st.sampled_from(MOVE_TYPES),
       card=st.one_of(st.none(), st.sampled_from(FULL_DECK)),
       suit=st.one_of(st.none(), st.sampled_from(list(SUITS))), fields=st.sets(
           st.sampled_from(["card", "suit"])))
def test_a_request_as_clients_write_it_takes_the_quick_check(
        command_id: uuid.UUID, seq: int, type_: str, card: str | None, suit: str | None,
        fields: set[str]) -> None:
    move: dict[str, Any] = {"type": type_}
    if "card" in fields:
        move["card"] = card
    if "suit" in fields:
        move["suit"] = suit
    data = {"command_id": str(command_id), "seq": seq, "move": move}

    quick = MoveRequestSerializer.well_formed(data)

    assert quick == {"command_id": command_id, "seq": seq, "move": move}
    assert quick == _by_serializer(data)


def test_what_the_serializer_would_mend_or_refuse_is_left_to_it() -> None:
    cid = str(uuid.uuid4())
    for move in ({"type": "play", "card": " TD"}, {"type": "open", "suit": "CD"},
                 {"type": "open", "suit": ""}, {"type": "play", "card": 5}, {"type": 1}):
        assert MoveRequestSerializer.well_formed(
            {"command_id": cid, "seq": 0, "move": move}) is None, move
    for seq in (True, -1, "3", 3.0):
        assert MoveRequestSerializer.well_formed(
            {"command_id": cid, "seq": seq, "move": {"type": "open"}}) is None, seq
    assert MoveRequestSerializer.well_formed(
        {"command_id": "not a uuid", "seq": 0, "move": {"type": "open"}}) is None
    assert MoveRequestSerializer.well_formed([{"command_id": cid}]) is None
