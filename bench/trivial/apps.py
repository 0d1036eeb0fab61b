from django.apps import AppConfig


class TrivialConfig(AppConfig):
    name = "bench.trivial"
    label = "bench_trivial"
    default_auto_field = "django.db.models.BigAutoField"
