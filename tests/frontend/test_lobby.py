"""The lobby, as a player reads it: the hand he sits at now, the casual tables waiting for his
answer, the day's soirées of his clubs, the casual tables open to him and the form that makes
one; in French unless he asks for English."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from frontend.selectors import day_bounds
from games.models import Hand, Partie
from games.services import casual_table_create, partie_start, seat_away
from tests.tournaments.evenings import one_table
from tournaments.models import Membership, Soiree
from tournaments.services import club_create, membership_add

pytestmark = pytest.mark.django_db


def _section(html: str, name: str) -> str:
    """The lobby's ``<section id=name>``, to tell which part of the page says what."""
    found = re.search(rf'<section id="{name}".*?</section>', html, re.S)
    assert found is not None, f"no section {name!r}"
    return found.group(0)


def _lobby(client: Any, **headers: str) -> str:
    answer = client.get("/", headers=headers)
    assert answer.status_code == 200
    return answer.content.decode()


@pytest.fixture
def friends(django_user_model: Any) -> list[Any]:
    return [django_user_model.objects.create_user(name, password="pw-for-tests")
            for name in ("alice", "bruno", "chloe")]


def test_your_table_now_links_the_latest_hand_of_the_soiree_table_one_sits_at(
        client: Any, organiser: Any) -> None:
    club = club_create(name="Cercle", slug="cercle", organiser=organiser)
    membership_add(club=club, user=organiser, role=Membership.Role.PLAYER)
    table = one_table(club=club, player=organiser, name="Mardi du Cercle")
    hand = table.partie.hands.order_by("-number").first()
    client.force_login(organiser)

    lobby = _lobby(client)
    now_section = _section(lobby, "now")

    assert f'href="/hands/{hand.pk}/"' in now_section
    assert "Mardi du Cercle" in now_section and "table 1" in now_section
    assert f"donne {hand.number}" in now_section
    # The form that would seat him at another table says the soirée's will not wait.
    assert ("Vous avez une place à la table 1 de « Mardi du Cercle », qui n’attend personne"
            in _section(lobby, "new"))


def test_a_casual_seat_alone_brings_no_warning_to_the_new_table_form(
        client: Any, friends: list[Any]) -> None:
    alice = friends[0]
    casual_table_create(creator=alice, game="comet", players=[alice], bots=["heuristic"],
                        at=timezone.now())
    client.force_login(alice)

    new = _section(_lobby(client), "new")

    assert 'id="new-table"' in new and 'id="new-busy"' not in new


def test_your_table_now_shows_a_casual_table_in_play_and_not_one_that_is_over(
        client: Any, friends: list[Any]) -> None:
    alice = friends[0]
    over = partie_start(game="comet", players=[alice], bots=["heuristic"], buy_in=0,
                        at=timezone.now())
    Partie.objects.filter(pk=over.pk).update(status=Partie.Status.OVER)
    playing = casual_table_create(creator=alice, game="comet", players=[alice],
                                  bots=["heuristic", "heuristic"], at=timezone.now())
    hand, finished = Hand.objects.get(partie=playing), Hand.objects.get(partie=over)
    client.force_login(alice)

    now_section = _section(_lobby(client), "now")

    assert f'href="/hands/{hand.pk}/"' in now_section
    assert f'href="/hands/{finished.pk}/"' not in now_section
    assert "Table amicale (alice)" in now_section


def test_a_table_one_has_left_is_said_once_with_its_way_back(
        client: Any, friends: list[Any]) -> None:
    alice = friends[0]
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic"], at=timezone.now())
    seat_away(partie_id=partie.pk, user=alice, away=True, at=timezone.now(), how="pause")
    client.force_login(alice)

    now_section = _section(_lobby(client), "now")

    assert "Vous avez quitté la table amicale (alice)" in now_section
    assert now_section.count('class="come-back"') == 1
    assert 'class="go"' not in now_section  # not a second card for the same table
    assert "Vous n’êtes assis à aucune table" not in now_section


def test_nobody_seated_is_told_so(client: Any, outsider: Any) -> None:
    client.force_login(outsider)

    assert "Vous n’êtes assis à aucune table" in _section(_lobby(client), "now")


def test_an_invitation_shows_who_invites_the_game_the_buy_in_and_the_others_with_answers(
        client: Any, friends: list[Any]) -> None:
    alice, bruno, chloe = friends
    partie = casual_table_create(creator=alice, game="commere",
                                 players=[alice, bruno, chloe], bots=["heuristic"], buy_in=120,
                                 at=timezone.now())
    client.force_login(bruno)

    invitations = _section(_lobby(client), "invitations")

    assert f'data-partie="{partie.pk}"' in invitations
    assert "alice vous invite à une table de Ma commère" in invitations
    assert "Cave : 120 jetons" in invitations
    assert "alice (a accepté)" in invitations and "chloe (en attente)" in invitations
    assert "robot" in invitations and "bruno (" not in invitations
    assert 'data-action="accept">Accepter</button>' in invitations
    assert 'data-action="decline">Refuser</button>' in invitations


def test_an_accepted_invitation_leaves_the_list_and_the_table_is_one_s_table_now(
        client: Any, friends: list[Any]) -> None:
    alice, bruno, _ = friends
    partie = casual_table_create(creator=alice, game="comet", players=[alice, bruno],
                                 at=timezone.now())
    client.force_login(bruno)
    before = _section(_lobby(client), "invitations")

    # What the Accept button posts (lobby.js): the page's session signs it.
    answer = client.post(f"/api/parties/{partie.pk}/answer", {"accept": True},
                         content_type="application/json")
    html = _lobby(client)

    assert f'data-partie="{partie.pk}"' in before
    assert answer.status_code == 200 and answer.json()["status"] == "playing"
    assert f'data-partie="{partie.pk}"' not in _section(html, "invitations")
    hand = Hand.objects.get(partie=partie)
    assert f'href="/hands/{hand.pk}/"' in _section(html, "now")


def test_the_soirees_of_the_day_show_their_status_and_times_in_the_club_s_time_zone(
        client: Any, organiser: Any, outsider: Any, settings: Any) -> None:
    settings.TIME_ZONE = "Europe/Paris"
    club = club_create(name="Cercle", slug="cercle", organiser=organiser)
    other = club_create(name="Autre", slug="autre", organiser=outsider)
    midnight, _ = day_bounds(timezone.now())
    tonight = Soiree.objects.create(club=club, name="Ce soir", game="comet",
                                    starts_at=midnight + timedelta(hours=20, minutes=30),
                                    ends_at=midnight + timedelta(hours=23))
    Soiree.objects.create(club=club, name="Hier soir", game="comet",
                          starts_at=midnight - timedelta(hours=4),
                          ends_at=midnight - timedelta(hours=1), status=Soiree.Status.CLOSED)
    Soiree.objects.create(club=other, name="Chez les autres", game="comet",
                          starts_at=midnight + timedelta(hours=20),
                          ends_at=midnight + timedelta(hours=22))
    client.force_login(organiser)

    soirees = _section(_lobby(client), "soirees")
    today = soirees.split("Autres soirées")[0]

    assert f'href="/soirees/{tonight.pk}/"' in today
    assert "20:30" in today and "23:00" in today and "prévue" in today
    assert "Hier soir" not in today and "Hier soir" in soirees and "terminée" in soirees
    assert "Chez les autres" not in soirees


def test_casual_tables_list_those_one_may_watch_with_their_hand_and_close_for_the_creator(
        client: Any, friends: list[Any], outsider: Any) -> None:
    alice, bruno, chloe = friends
    inviting = casual_table_create(creator=alice, game="comet", players=[alice, bruno],
                                   at=timezone.now())
    playing = casual_table_create(creator=chloe, game="comet", players=[chloe],
                                  bots=["heuristic"], at=timezone.now())
    hand = Hand.objects.get(partie=playing)

    client.force_login(alice)
    mine = _section(_lobby(client), "casual")
    client.force_login(chloe)
    chloe_s = _section(_lobby(client), "casual")
    client.force_login(outsider)
    stranger_s = _section(_lobby(client), "casual")

    assert f'data-partie="{inviting.pk}"' in mine and "bruno (en attente)" in mine
    assert "Annuler la table" in mine and f'data-partie="{playing.pk}"' not in mine
    assert f'href="/hands/{hand.pk}/"' in chloe_s and "Arrêter après cette donne" in chloe_s
    assert "Aucune table amicale" in stranger_s and "data-partie" not in stranger_s


def test_the_new_table_form_names_both_games_and_the_club_s_buy_in_limit(
        client: Any, outsider: Any, settings: Any) -> None:
    settings.ACADEMIE_CASUAL_MAX_BUY_IN = 300
    client.force_login(outsider)

    form = _section(_lobby(client), "new")

    assert "Nouvelle table amicale" in form
    assert '<option value="comet">Comet</option>' in form
    assert '<option value="commere">Ma commère, accommodez-moi</option>' in form
    assert 'id="new-players" name="players"' in form and 'for="new-players"' in form
    assert 'name="seat_me" type="checkbox" checked' in form
    assert 'name="bots" type="number" min="0" max="11"' in form
    assert 'name="buy_in" type="number" min="0" max="300"' in form
    assert "Créer la table" in form


def test_the_lobby_speaks_french_by_default_and_english_to_who_asks(
        client: Any, friends: list[Any]) -> None:
    alice, bruno, _ = friends
    casual_table_create(creator=alice, game="comet", players=[alice, bruno], at=timezone.now())
    client.force_login(bruno)

    french = _lobby(client)
    english = _lobby(client, accept_language="en-GB,en;q=0.8")

    assert '<html lang="fr">' in french and "Votre table" in french
    assert "Accepter" in french and "Nouvelle table amicale" in french
    assert '<html lang="en">' in english and "Your table now" in english
    assert "alice invites you to a table of Comet" in english
    assert "Accept</button>" in english and "Decline</button>" in english
    assert "New casual table" in english and "Votre table" not in english


def test_the_language_switch_keeps_the_choice_and_the_page(client: Any, outsider: Any) -> None:
    client.force_login(outsider)
    switch = re.search(r'<form[^>]*id="language-switch".*?</form>',
                       _lobby(client, accept_language="fr"), re.S).group(0)

    chosen = client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    after = _lobby(client, accept_language="fr")  # the choice outweighs the browser's

    assert 'action="/i18n/setlang/"' in switch and 'name="next" value="/"' in switch
    assert 'aria-label="Langue"' in switch
    assert '<option value="en" lang="en">English</option>' in switch
    assert chosen.status_code == 302 and chosen["Location"] == "/"
    assert "Your table now" in after and '<option value="en" lang="en" selected>' in after


def test_the_sign_in_page_has_the_switch_and_speaks_either_language(client: Any) -> None:
    french = client.get("/accounts/login/?next=/").content.decode()
    english = client.get("/accounts/login/?next=/", headers={"accept-language": "en"})
    # A visitor not signed in may switch too, before he signs in.
    client.post("/i18n/setlang/", {"language": "en", "next": "/accounts/login/?next=/"})
    chosen = client.get("/accounts/login/?next=/").content.decode()

    assert "Se connecter" in french and 'id="language-switch"' in french
    assert 'name="next" value="/accounts/login/?next=/"' in french
    assert "Sign in" in english.content.decode() and "Se connecter" not in chosen
    assert "<h1>Sign in</h1>" in chosen
