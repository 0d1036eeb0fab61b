"""Settings for the test suite; the database comes from DATABASE_URL (scripts/test.sh)."""

from .base import *  # noqa: F403
from .base import database, env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES = {"default": database("sqlite:///:memory:")}
ACADEMIE_TIMERS = env.str("ACADEMIE_TIMERS", default="off")
