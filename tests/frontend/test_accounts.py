"""The club's people, through the pages: an organiser makes an invitation link (and mails it),
the person invited signs up with it and is a signed-in member; bad links and bad sign-ups
change nothing; passwords are changed and reset with Django's own views. French unless the
reader asks for English."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from tournaments.invitations import invitation_create
from tournaments.models import Invitation, Membership
from tournaments.services import club_create, membership_add

pytestmark = pytest.mark.django_db
User = get_user_model()
GOOD_PASSWORD = "Vingt-et-un-au-Comet"


@pytest.fixture
def club(organiser: Any) -> Any:
    return club_create(name="Cercle des Amis", slug="amis", organiser=organiser)


def _link(organiser: Any, club: Any, email: str = "") -> str:
    """The members page's new link, made by the organiser as he would."""
    client = Client()
    client.force_login(organiser)
    answer = client.post(f"/clubs/{club.pk}/members", {"email": email})
    assert answer.status_code == 200
    found = re.search(r'id="new-link"[^>]*value="([^"]+)"', answer.content.decode())
    assert found is not None
    return found.group(1).removeprefix("http://testserver")


def _sign_up(client: Client, link: str, username: str = "helene",
             password: str = GOOD_PASSWORD, **headers: str) -> Any:
    return client.post(link, {"username": username, "first_name": "Hélène",
                              "last_name": "Fournier", "email": "helene@example.org",
                              "password1": password, "password2": password}, headers=headers)


def test_an_invited_person_signs_up_becomes_a_member_and_is_signed_in(
        organiser: Any, club: Any) -> None:
    link = _link(organiser, club, email="helene@example.org")
    newcomer = Client()

    form = newcomer.get(link)
    answer = _sign_up(newcomer, link)

    assert "Rejoindre Cercle des Amis" in form.content.decode()
    assert 'value="helene@example.org"' in form.content.decode()  # the address invited
    assert answer.status_code == 302 and answer["Location"] == "/"
    helene = User.objects.get(username="helene")
    assert helene.get_full_name() == "Hélène Fournier"
    assert helene.email == "helene@example.org"
    assert Membership.objects.filter(club=club, user=helene, role="player").exists()
    invitation = Invitation.objects.get()
    assert invitation.used_by == helene and invitation.used_at is not None
    lobby = newcomer.get("/")
    assert lobby.status_code == 200 and "Bienvenue à Cercle des Amis" in lobby.content.decode()


def test_the_link_is_mailed_when_an_address_is_given(organiser: Any, club: Any) -> None:
    link = _link(organiser, club, email="helene@example.org")

    (sent,) = mail.outbox
    assert sent.to == ["helene@example.org"]
    assert "Cercle des Amis" in sent.subject
    assert f"http://testserver{link}" in sent.body
    assert "olga vous invite" in sent.body


def test_the_secret_of_a_link_is_not_stored(organiser: Any, club: Any) -> None:
    _invitation, secret = invitation_create(club=club, by=organiser, at=timezone.now())

    assert not Invitation.objects.filter(token_hash__contains=secret).exists()
    assert len(Invitation.objects.get().token_hash) == 64


def test_only_the_clubs_organisers_and_staff_make_links(
        organiser: Any, outsider: Any, club: Any, django_user_model: Any) -> None:
    membership_add(club=club, user=outsider, role=Membership.Role.PLAYER)
    player, staff = Client(), Client()
    player.force_login(outsider)
    staff.force_login(django_user_model.objects.create_user("sam", is_staff=True))

    assert player.post(f"/clubs/{club.pk}/members", {}).status_code == 403
    assert staff.post(f"/clubs/{club.pk}/members", {}).status_code == 200
    assert Invitation.objects.count() == 1


def test_the_lobby_links_the_members_page_for_organisers_only(
        organiser: Any, outsider: Any, club: Any) -> None:
    membership_add(club=club, user=outsider, role=Membership.Role.PLAYER)
    boss, member = Client(), Client()
    boss.force_login(organiser)
    member.force_login(outsider)

    boss_lobby, member_lobby = boss.get("/").content.decode(), member.get("/").content.decode()

    assert f'href="/clubs/{club.pk}/members"' in boss_lobby
    assert "Membres et invitations" in boss_lobby
    assert "/members" not in member_lobby
    assert 'href="/accounts/password/change/"' in member_lobby
    assert "Changer de mot de passe" in member_lobby


def test_a_used_link_gives_a_clear_page_and_creates_nobody(organiser: Any, club: Any) -> None:
    link = _link(organiser, club)
    _sign_up(Client(), link)

    again = _sign_up(Client(), link, username="intrus")

    assert again.status_code == 410
    assert "déjà été utilisé" in again.content.decode()
    assert not User.objects.filter(username="intrus").exists()
    assert Client().get(link).status_code == 410


def test_an_expired_link_gives_a_clear_page_and_creates_nobody(organiser: Any, club: Any) -> None:
    _invitation, secret = invitation_create(club=club, by=organiser,
                                            at=timezone.now() - timedelta(days=8))

    answer = _sign_up(Client(), f"/accounts/invitation/{secret}/")

    assert answer.status_code == 410
    assert "Il a expiré" in answer.content.decode()
    assert not User.objects.filter(username="helene").exists()


def test_a_forged_link_gives_a_clear_page_in_french_or_english(club: Any) -> None:
    french = _sign_up(Client(), "/accounts/invitation/forged-secret/")
    english = Client().get("/accounts/invitation/forged-secret/", headers={
        "Accept-Language": "en"})

    assert french.status_code == 404
    assert "pas un lien de ce site" in french.content.decode()
    assert "It is not a link of this site" in english.content.decode()
    assert not User.objects.filter(username="helene").exists()


def test_a_taken_username_is_refused_in_the_readers_language_and_nothing_is_made(
        organiser: Any, club: Any) -> None:
    link = _link(organiser, club)

    french = _sign_up(Client(), link, username="olga")
    english = _sign_up(Client(), link, username="olga", **{"Accept-Language": "en"})

    assert french.status_code == 200
    assert "Un utilisateur avec ce nom existe déjà" in french.content.decode()
    assert "A user with that username already exists" in english.content.decode()
    assert User.objects.count() == 1
    assert Invitation.objects.get().used_at is None


def test_a_weak_password_is_refused_in_the_readers_language_and_nothing_is_made(
        organiser: Any, club: Any) -> None:
    link = _link(organiser, club)

    french = _sign_up(Client(), link, password="12345678").content.decode()
    english = _sign_up(Client(), link, password="abc",
                       **{"Accept-Language": "en"}).content.decode()

    assert "Ce mot de passe est trop courant" in french
    assert "Ce mot de passe est entièrement numérique" in french
    assert "This password is too short" in english
    assert not User.objects.filter(username="helene").exists()
    assert Invitation.objects.get().used_at is None


def test_a_member_of_another_club_joins_with_his_own_account(
        organiser: Any, outsider: Any, club: Any) -> None:
    link = _link(organiser, club)
    client = Client()
    client.force_login(outsider)

    assert "Vous êtes connecté en tant que oscar" in client.get(link).content.decode()
    answer = client.post(link)

    assert answer.status_code == 302
    assert Membership.objects.filter(club=club, user=outsider).exists()
    assert User.objects.count() == 2


@pytest.fixture
def axes(settings: Any) -> Iterator[None]:
    settings.AXES_ENABLED = True
    cache.clear()
    yield
    cache.clear()


def test_with_the_lock_out_on_a_new_member_is_signed_in_and_signs_in_again(
        axes: None, organiser: Any, club: Any) -> None:
    link = _link(organiser, club)
    newcomer = Client()

    assert _sign_up(newcomer, link).status_code == 302
    assert newcomer.get("/").status_code == 200
    newcomer.post("/accounts/logout/")
    signed_in = newcomer.post("/accounts/login/", {"username": "helene",
                                                   "password": GOOD_PASSWORD})

    assert signed_in.status_code == 302 and signed_in["Location"] == "/"


def test_a_member_changes_his_password(organiser: Any) -> None:
    client = Client()
    client.force_login(organiser)

    page = client.get("/accounts/password/change/").content.decode()
    weak = client.post("/accounts/password/change/", {
        "old_password": "pw-olga-123", "new_password1": "123", "new_password2": "123"})
    changed = client.post("/accounts/password/change/", {
        "old_password": "pw-olga-123", "new_password1": GOOD_PASSWORD,
        "new_password2": GOOD_PASSWORD})

    assert "Changer de mot de passe" in page and "Ancien mot de passe" in page
    assert "trop court" in weak.content.decode()
    assert changed.status_code == 302
    assert client.get(changed["Location"]).status_code == 200
    organiser.refresh_from_db()
    assert organiser.check_password(GOOD_PASSWORD)


def test_the_login_page_links_the_reset(client: Any) -> None:
    page = client.get("/accounts/login/").content.decode()

    assert 'href="/accounts/password/reset/"' in page and "Mot de passe oublié ?" in page


def test_a_reset_mails_a_link_that_sets_a_new_password(organiser: Any) -> None:
    organiser.email = "olga@example.org"
    organiser.save()
    client = Client()

    asked = client.post("/accounts/password/reset/", {"email": "olga@example.org"})
    (sent,) = mail.outbox
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", sent.body)
    assert link is not None
    form = client.get(link.group(1), follow=True)
    done = client.post(form.redirect_chain[-1][0], {"new_password1": GOOD_PASSWORD,
                                                    "new_password2": GOOD_PASSWORD})

    assert asked.status_code == 302
    assert "mot de passe" in sent.subject and "olga" in sent.body
    assert "Choisir un nouveau mot de passe" in form.content.decode()
    assert done.status_code == 302
    assert "Vous pouvez vous connecter" in client.get(done["Location"]).content.decode()
    organiser.refresh_from_db()
    assert organiser.check_password(GOOD_PASSWORD)
    assert "ne peut pas servir" in client.get(link.group(1), follow=True).content.decode()


def _main(answer: Any) -> str:
    """The page's own part (the header and the scripts carry the request's CSRF token and
    nonce, which differ on every answer)."""
    found = re.search(r"<main>.*</main>", answer.content.decode(), re.S)
    assert found is not None
    return found.group(0)


def test_a_reset_for_an_unknown_address_answers_as_for_a_known_one(organiser: Any) -> None:
    organiser.email = "olga@example.org"
    organiser.save()

    known = Client().post("/accounts/password/reset/", {"email": "olga@example.org"},
                          follow=True)
    unknown = Client().post("/accounts/password/reset/", {"email": "nobody@example.org"},
                            follow=True)

    assert len(mail.outbox) == 1
    assert known.redirect_chain == unknown.redirect_chain
    assert _main(known) == _main(unknown)
    assert "Si un compte a cette adresse" in unknown.content.decode()
