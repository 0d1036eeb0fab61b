"""HandEvent.hand loses its own index: the (hand, seq) unique constraint's index starts with the
hand and serves every lookup by hand; the second index cost an insert per event.

The index is dropped by name rather than by AlterField: on SQLite, AlterField rebuilds the table,
and a rebuilt table loses the triggers that keep the events immutable (0002). On PostgreSQL it
is dropped CONCURRENTLY (outside a transaction, hence ``atomic = False``), so that a live
service's moves are not blocked while the migration runs.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

INDEX = "games_handevent_hand_id_d48ec1bd"


def _concurrently(schema_editor: Any) -> str:
    return " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""


def drop(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute(f"DROP INDEX{_concurrently(schema_editor)} IF EXISTS {INDEX}")


def create(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute(f"CREATE INDEX{_concurrently(schema_editor)} IF NOT EXISTS {INDEX} "
                          f"ON games_handevent (hand_id)")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("games", "0005_hand_started_at_deal_time"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="handevent",
                    name="hand",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="games.hand",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, create)],
        ),
    ]
