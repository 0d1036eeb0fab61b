"""The migrations match the models, and tournaments' start after the games' triggers."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader


@pytest.mark.django_db
def test_the_models_have_no_change_without_its_migration() -> None:
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    except SystemExit as exit:  # --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check found changes (exit {exit.code})")


def test_tournaments_start_from_their_initial_migration_after_the_games_triggers() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    names = sorted(name for app, name in loader.disk_migrations if app == "tournaments")
    assert names[0] == "0001_initial"
    initial = loader.disk_migrations["tournaments", "0001_initial"]
    assert ("games", "0002_event_triggers") in initial.dependencies
