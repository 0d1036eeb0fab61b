"""The management commands: export_hand, verify_hands, play_bots.

They run on the test database through ``call_command``; the exported files are checked by the
stand-alone verifier (``python -m games.engine.verify``) in a separate process, as another
club's tools would. One test runs ``manage.py`` itself against the PostgreSQL test database.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from games.models import Hand, HandEvent, Partie
from games.selectors import hand_record
from games.services import hand_deal, partie_start

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
OK_LINE = re.compile(r"^OK ([0-9a-f]{64})$")


def _bot_partie(game: str, seats: int, hands: int) -> Partie:
    key = "deals" if game == "comet" else "rounds"
    partie = partie_start(game=game, players=[], bots=(["heuristic", "random"] * seats)[:seats],
                          options={key: hands}, buy_in=100, table_label=f"{game} bots", at=T0)
    clock = T0
    while partie.status == Partie.Status.PLAYING:
        clock += timedelta(seconds=1)
        hand_deal(partie=partie, at=clock)
        partie.refresh_from_db()
    return partie


def _verifier(*paths: Path) -> subprocess.CompletedProcess[str]:
    """The stand-alone verifier, in its own process, without Django."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "DATABASE"))}
    return subprocess.run([sys.executable, "-m", "games.engine.verify", *map(str, paths)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _export(*args: str) -> str:
    out = StringIO()
    call_command("export_hand", *args, stdout=out)
    return out.getvalue()


# -- export_hand ---------------------------------------------------------------------------------


def test_export_one_hand_to_a_directory_gives_a_record_the_verifier_accepts(tmp_path):
    hand = _bot_partie("comet", 3, 2).hands.get(number=2)

    out = _export(str(hand.id), "--out", str(tmp_path))

    path = tmp_path / f"{hand.id}.json"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert f"1 record(s) written to {tmp_path}" in out
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record == hand_record(hand=hand)
    assert record["format"] == "academie.hand/3" and record["number"] == 2
    checked = _verifier(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines() == [f"OK {record['digest']}"]


def test_export_all_writes_one_verifiable_file_per_finished_hand(tmp_path, django_user_model):
    comet = _bot_partie("comet", 4, 3)
    commere = _bot_partie("commere", 5, 3)
    people = [django_user_model.objects.create_user(f"late{i}") for i in range(4)]
    unfinished = partie_start(game="commere", players=people, at=T0).hands.get()
    assert unfinished.status == Hand.Status.PLAYING

    out = _export("--all", "--out", str(tmp_path / "records"))

    finished = set(Hand.objects.filter(partie__in=[comet, commere]).values_list("id", flat=True))
    files = sorted((tmp_path / "records").iterdir())
    assert {p.stem for p in files} == {str(h) for h in finished}
    assert len(files) == 6
    assert "6 record(s) written" in out
    checked = _verifier(*files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert len(lines) == 6 and all(OK_LINE.match(line) for line in lines)
    digests = {json.loads(p.read_text(encoding="utf-8"))["digest"] for p in files}
    assert {OK_LINE.match(line).group(1) for line in lines} == digests


def test_an_exported_record_changed_afterwards_is_refused_by_the_verifier(tmp_path):
    hand = _bot_partie("commere", 4, 1).hands.get()
    _export(str(hand.id), "--out", str(tmp_path))
    path = tmp_path / f"{hand.id}.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    pay = next(e for e in record["events"] if e["type"] == "pay")
    pay["amount"] += 1
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(record), encoding="utf-8")

    checked = _verifier(path, forged)

    assert checked.returncode == 1
    good, bad = checked.stdout.splitlines()
    assert good == f"OK {record['digest']}"
    assert bad.startswith(f"FAIL {forged}:")


def test_export_one_hand_without_out_prints_the_record():
    hand = _bot_partie("comet", 2, 1).hands.get()

    printed = json.loads(_export(str(hand.id)))

    assert printed == hand_record(hand=hand)


@pytest.mark.parametrize("args, message", [
    ((), "name hand ids, or --all"),
    (("--all",), "--all needs --out DIR"),
    (("not-a-uuid",), "no such hand"),
    (("0b6d3c1e-7d3c-4d0e-9a4e-2b7f7c1d9e00",), "no such hand"),
])
def test_export_hand_refuses_bad_arguments(args, message):
    with pytest.raises(CommandError, match=message):
        _export(*args)


def test_export_hand_refuses_ids_and_all_together_and_an_unfinished_hand(django_user_model,
                                                                          tmp_path):
    people = [django_user_model.objects.create_user(f"p{i}") for i in range(4)]
    hand = partie_start(game="commere", players=people, at=T0).hands.get()

    with pytest.raises(CommandError, match="not both"):
        _export(str(hand.id), "--all", "--out", str(tmp_path))
    with pytest.raises(CommandError, match=f"hand {hand.id}: the record is published once"):
        _export(str(hand.id), "--out", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


# -- verify_hands --------------------------------------------------------------------------------


def test_verify_hands_lists_every_finished_hand_and_succeeds():
    partie = _bot_partie("commere", 6, 3)

    out = StringIO()
    call_command("verify_hands", stdout=out)

    lines = out.getvalue().splitlines()
    for hand in partie.hands.all():
        assert f"OK {hand_record(hand=hand)['digest']} hand {hand.id}" in lines
    assert lines[-1] == "3 finished hand(s) checked, 0 with discrepancies"


def test_verify_hands_quiet_prints_failures_only():
    partie = _bot_partie("comet", 3, 2)

    out = StringIO()
    call_command("verify_hands", "--quiet", stdout=out)

    assert out.getvalue().splitlines() == ["2 finished hand(s) checked, 0 with discrepancies"]
    assert partie.hands.count() == 2


# -- play_bots -----------------------------------------------------------------------------------


@pytest.mark.parametrize("game, players, bots", [
    ("comet", 3, "heuristic,random,timeout"),
    ("commere", 5, "timeout,heuristic"),
])
def test_play_bots_plays_the_hands_through_the_services(game, players, bots):
    out = StringIO()
    call_command("play_bots", game=game, players=players, hands=4, bots=bots,
                 options='{"ante": 2}', buy_in=60, stdout=out)

    partie = Partie.objects.get()
    assert re.fullmatch(rf"partie {partie.id}: 4 hand\(s\), \d+ events, [\d.]+ s\n",
                        out.getvalue())
    assert partie.status == Partie.Status.OVER and partie.options["ante"] == 2
    names = bots.split(",")
    assert [s.bot for s in partie.seats.order_by("number")] == [
        names[i % len(names)] for i in range(players)]
    hands = list(partie.hands.order_by("number"))
    assert [h.number for h in hands] == [1, 2, 3, 4]
    assert all(h.status == Hand.Status.OVER for h in hands)
    assert HandEvent.objects.filter(hand=hands[0], type="hand_started").get().payload[
        "chips_before"] == {str(s): 60 for s in range(players)}
    report = StringIO()
    call_command("verify_hands", stdout=report)
    assert report.getvalue().splitlines()[-1] == "4 finished hand(s) checked, 0 with discrepancies"


@pytest.mark.parametrize("kwargs, message", [
    ({"game": "comet", "players": 7, "hands": 1}, "Comet is played by 2 to 6 players, not 7"),
    ({"game": "commere", "players": 4, "hands": 1, "bots": "wizard"}, "unknown bot 'wizard'"),
    ({"game": "comet", "players": 3, "hands": 1, "options": "{ante: 1"}, "--options is not JSON"),
    ({"game": "comet", "players": 3, "hands": 1, "options": '{"tricks": 1}'}, "tricks"),
])
def test_play_bots_refuses_a_bad_table(kwargs, message):
    with pytest.raises(CommandError, match=message):
        call_command("play_bots", stdout=StringIO(), **kwargs)
    assert not Partie.objects.exists()


# -- manage.py itself, on the PostgreSQL test database --------------------------------------------


def _manage(*args: str) -> subprocess.CompletedProcess[str]:
    db = connection.settings_dict
    url = (f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST'] or '127.0.0.1'}:"
           f"{db['PORT'] or 5432}/{db['NAME']}")
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_manage_py_verify_hands_exits_non_zero_on_a_tampered_event(tmp_path):
    partie = _bot_partie("comet", 3, 2)
    victim = partie.hands.get(number=1)

    clean = _manage("verify_hands")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "2 finished hand(s) checked, 0 with discrepancies" in clean.stdout

    event = HandEvent.objects.filter(hand=victim, type="pay").last()
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute("UPDATE games_handevent SET payload = %s WHERE id = %s",
                           [json.dumps({**event.payload, "amount": event.payload["amount"] + 5}),
                            event.id])
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")

    tampered = _manage("verify_hands", "--quiet")
    assert tampered.returncode == 1
    assert f"FAIL hand {victim.id}" in tampered.stdout
    assert "1 hand(s) failed verification" in tampered.stderr

    exported = _manage("export_hand", "--all", "--out", str(tmp_path))
    assert exported.returncode == 0, exported.stderr
    checked = _verifier(*sorted(tmp_path.iterdir()))
    assert checked.returncode == 1
    assert sum(line.startswith("OK ") for line in checked.stdout.splitlines()) == 1
    assert f"FAIL {tmp_path / f'{victim.id}.json'}:" in checked.stdout
