from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from config.postgres import use_c_timestamptz_loader

        # Every PostgreSQL connection of the project, the ledger's and the admin's included.
        connection_created.connect(use_c_timestamptz_loader,
                                   dispatch_uid="config.postgres.use_c_timestamptz_loader")
