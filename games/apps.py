from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from games import live, signals

        signals.hand_changed.connect(live.on_hand_changed, dispatch_uid="games.live.hand")
        signals.partie_closed.connect(live.on_partie_closed, dispatch_uid="games.live.partie")
