"""Hand events and seeds are append-only on PostgreSQL (games/models.py's Meta.triggers,
installed by django-pgtrigger); SQLite gets no triggers."""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0001_initial'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='handevent',
            trigger=pgtrigger.compiler.Trigger(name='handevent_append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'hand events are append-only: % refused on %', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';", hash='0c5bed674b4abb37040d4c6f07a17c4d195bdac8', operation='UPDATE OR DELETE', pgid='pgtrigger_handevent_append_only_25cbe', table='games_handevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='handevent',
            trigger=pgtrigger.compiler.Trigger(name='handevent_no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'hand events are append-only: % refused on %', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';", hash='0ef4c7393023a8eb4b2b54a87a93fca946ca22a7', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_handevent_no_truncate_14731', table='games_handevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='handseed',
            trigger=pgtrigger.compiler.Trigger(name='handseed_append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'hand seeds are append-only: % refused on %', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';", hash='6c4b65aac2311b4dcac75863aced8adaa759c4b7', operation='UPDATE OR DELETE', pgid='pgtrigger_handseed_append_only_9e805', table='games_handseed', when='BEFORE')),
        ),
    ]
