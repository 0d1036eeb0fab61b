"""Settings for the test suite; the database comes from DATABASE_URL (scripts/test.sh)."""

from .base import *  # noqa: F403
from .base import env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES = {"default": env.db_url("DATABASE_URL", default="sqlite:///:memory:")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
ACADEMIE_TIMERS = env.str("ACADEMIE_TIMERS", default="off")
