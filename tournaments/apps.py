from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = _("Clubs and soirées")

    def ready(self) -> None:
        from ledger.permissions import register_organiser_check

        from .permissions import is_club_organiser

        # The ledger asks "is this user an organiser of club X?"; memberships answer it.
        register_organiser_check(is_club_organiser)
