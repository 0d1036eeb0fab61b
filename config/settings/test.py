"""Settings for the test suite; the database comes from DATABASE_URL (scripts/test.sh)."""

from .base import *  # noqa: F403
from .base import database, env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES = {"default": database("sqlite:///:memory:")}
ACADEMIE_TIMERS = env.str("ACADEMIE_TIMERS", default="off")
# High enough that no test is throttled but those of tests/test_throttling.py, which set their
# own rates.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {  # noqa: F405
    "anon": "100000/s", "user": "100000/s", "moves": "100000/s"}}
# Django's test client signs in without a request, which django-axes refuses: off, but in the
# lock-out tests (tests/test_throttling.py).
AXES_ENABLED = False
# Hands are dealt at once, with no share, unless a test is about the shares: those set their
# table's share_window (tests/games/test_shares.py, tests/frontend/test_shares_browser.py).
ACADEMIE_SHARE_WINDOW = env.float("ACADEMIE_SHARE_WINDOW", default=0)
