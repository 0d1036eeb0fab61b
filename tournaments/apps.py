from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = _("Clubs and soirées")

    def ready(self) -> None:
        from games.signals import hand_ended, partie_ended
        from ledger.permissions import register_organiser_check

        from . import projections
        from .permissions import is_club_organiser

        # The ledger asks "is this user an organiser of club X?"; memberships answer it.
        register_organiser_check(is_club_organiser)
        # The soirée's read models follow its hands and its parties' closes, each in the
        # transaction of the command that ended it (tournaments/projections.py).
        hand_ended.connect(projections.on_hand_ended, dispatch_uid="tournaments.projections.hand")
        partie_ended.connect(projections.on_partie_ended,
                             dispatch_uid="tournaments.projections.partie")
