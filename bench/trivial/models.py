from django.db import models


class Row(models.Model):
    """One row per request: the least a write endpoint can do."""

    value = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"row {self.pk}: {self.value}"
