"""HandEvent.hand loses its own index: the (hand, seq) unique constraint's index starts with the
hand and serves every lookup by hand; the second index cost an insert per event.

The index is dropped by name rather than by AlterField: on SQLite, AlterField rebuilds the table,
and a rebuilt table loses the triggers that keep the events immutable (0002).
"""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "games_handevent_hand_id_d48ec1bd"


class Migration(migrations.Migration):
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
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {INDEX}",
                    reverse_sql=f"CREATE INDEX {INDEX} ON games_handevent (hand_id)",
                ),
            ],
        ),
    ]
