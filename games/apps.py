from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


def _publish_signing_key(**_: Any) -> None:
    # A deployment migrates before it serves: a rotated key is published, and the old one
    # retired, before the first receipt it signs.
    from games import signing

    signing.publish_current_key()


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = _("Games and hands")

    def ready(self) -> None:
        from games import live, signals

        signals.committed.connect(live.on_committed, dispatch_uid="games.live.commit")
        post_migrate.connect(_publish_signing_key, sender=self,
                             dispatch_uid="games.signing.publish")
