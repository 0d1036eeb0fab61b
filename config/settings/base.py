"""Settings shared by every use, read from the environment (django-environ).

Embedded default: SQLite in the project folder and no Redis, so that the service runs on a
laptop with only Python. Real deployment: DATABASE_URL (PostgreSQL) and REDIS_URL.
"""

from pathlib import Path
from typing import Any

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="insecure-local-only-key")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "daphne",  # first: its runserver serves ASGI (HTTP and the live WebSockets)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "pgtrigger",
    "ledger",
    "games",
    "tournaments",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.RefuseNulMiddleware",  # before anything reads a cookie or the query
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

def database(default: str | None) -> dict[str, Any]:
    """The database of DATABASE_URL (or ``default``), with this project's options."""
    db: dict[str, Any] = (env.db_url("DATABASE_URL", default=default) if default is not None
                          else env.db_url("DATABASE_URL"))
    db["ATOMIC_REQUESTS"] = False
    options = db.setdefault("OPTIONS", {})
    if db["ENGINE"] == "django.db.backends.sqlite3":
        # Several threads write (the web server, timer threads): wait for the lock instead of
        # failing, and take the write lock when a transaction begins, so two writers never
        # deadlock upgrading a read lock.
        options.update({"timeout": 30, "transaction_mode": "IMMEDIATE"})
    return db


DATABASES = {"default": database(f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = env.str("TIME_ZONE", default="Europe/Paris")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

REDIS_URL = env.str("REDIS_URL", default="")

# Sessions: with Redis, Django's cached_db engine (read from the cache, written to the database
# too, so a session outlives a cache flush); without Redis (the embedded default), the database.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": REDIS_URL, "KEY_PREFIX": "academie"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    SESSION_ENGINE = "django.contrib.sessions.backends.db"
AUTHENTICATION_BACKENDS = ["tournaments.auth.NulSafeModelBackend"]

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Basic first: a request without credentials gets 401 with WWW-Authenticate.
        "rest_framework.authentication.BasicAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "EXCEPTION_HANDLER": "config.exceptions.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Académie API",
    "DESCRIPTION": "Club soirées of Comet and Ma commère: parties, hands, moves, chips.",
    "VERSION": "0.1.0",
    # One name per choice set: a partie's and a hand's status, a soirée's, the bots a table
    # can seat.
    "ENUM_NAME_OVERRIDES": {"PlayStatusEnum": "games.models.Partie.Status",
                            "BotKindEnum": "games.services.parties.BOT_NAMES",
                            "SoireeStatusEnum": "tournaments.models.Soiree.Status"},
    # Then every operation's error answers, and event streams event by event (config/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "config.schema.document_errors"],
}

# Celery: Redis when REDIS_URL is set; otherwise an in-memory broker for the embedded default.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
# Celery's Django fix-up closes the database connection before and after every task unless this
# is set, and opening a PostgreSQL connection costs more than playing a time-out: with one per
# deadline task, many tables of short time-outs fall behind. Keep it for this many tasks;
# config/celery.py closes it at once after a database error.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=100)

# How deadlines fire (games/tasks.py): celery with Redis, a timer thread in the embedded default.
ACADEMIE_TIMERS = env.str("ACADEMIE_TIMERS", default="celery" if REDIS_URL else "thread")

# Live table updates (games/live.py): channels-redis between the processes of a deployment; in
# the embedded default, where one process serves and plays everything, an in-memory layer.
if REDIS_URL:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                  "CONFIG": {"hosts": [REDIS_URL], "prefix": "academie:live"}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "games.live.InProcessChannelLayer"}}

# Who may see a club's parties (games/permissions.py): the club keys of a user's clubs.
ACADEMIE_PARTIE_VIEWERS = "tournaments.access.club_keys"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "login"
