"""factory_boy factories for the game service's tests.

A partie is never built row by row: ``PartieFactory`` starts it through the service, so that its
seats, buy-ins and first hand are exactly what a real table gets.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import factory
from django.utils import timezone

from games import services
from games.models import Partie


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "auth.User"
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"player-{n}")
    password = factory.django.Password("pw-player-123")


class PartieFactory(factory.Factory):
    """A casual partie started by ``games.services.partie_start`` (first hand dealt).

    Forced moves and the Comet window default to no delay, so a test fires a person's forced
    move at once with ``deadline_fire``; people's decisions still wait ``move_timeout``.
    """

    class Meta:
        model = Partie

    game = "comet"
    players = factory.LazyFunction(lambda: [UserFactory(), UserFactory()])
    bots: Any = ()
    options = factory.LazyFunction(dict)
    buy_in = 50
    move_timeout = timedelta(seconds=30)
    forced_move_delay = timedelta(0)
    comet_window = timedelta(0)
    at = factory.LazyFunction(timezone.now)

    @classmethod
    def _create(cls, model_class: type[Partie], **kwargs: Any) -> Partie:
        return services.partie_start(**kwargs)


def play_bots_partie(game: str, bots: list[str], hands: int = 1, at: Any = None,
                     **options: Any) -> Partie:
    """A partie of bots played to its end through the services (bots never wait): ``hands``
    deals (Comet) or rounds (Ma commère), dealt one a second from ``at``."""
    key = "deals" if game == "comet" else "rounds"
    clock = at or timezone.now()
    partie = services.partie_start(game=game, players=[], bots=bots,
                                   options={key: hands, **options}, buy_in=100,
                                   table_label=f"{game} bots", at=clock)
    while partie.status == Partie.Status.PLAYING:
        clock += timedelta(seconds=1)
        services.hand_deal(partie=partie, at=clock)
        partie.refresh_from_db()
    return partie
