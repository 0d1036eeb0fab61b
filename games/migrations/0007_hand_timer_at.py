"""The due time of the Celery task armed for a hand's deadlines (games/tasks.py): one task
per hand at a time instead of one per move."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0006_event_hand_index_in_the_seq_constraint'),
    ]

    operations = [
        migrations.AddField(
            model_name='hand',
            name='timer_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
