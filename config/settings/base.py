"""Settings shared by every use, read from the environment (django-environ).

Embedded default: SQLite in the project folder and no Redis, so that the service runs on a
laptop with only Python. Real deployment: DATABASE_URL (PostgreSQL) and REDIS_URL.
"""

import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from csp.constants import NONCE, NONE, SELF

from config.logging import logging_config

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
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here rather than a CDN
    "csp",
    "axes",
    "pgtrigger",
    "ledger",
    "games",
    "tournaments",
    "frontend",
]

MIDDLEWARE = [
    "config.request_id.request_id_middleware",  # first: whatever is logged carries the id
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # the static files, in every deployment
    "csp.middleware.CSPMiddleware",
    "config.middleware.RefuseNulMiddleware",  # before anything reads a cookie or the query
    "config.middleware.RefuseLargeBodyMiddleware",  # before anything reads the body
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the visitor's choice (the switch's cookie), else his browser's,
    # else French. After the session, before CommonMiddleware (Django's order).
    "django.middleware.locale.LocaleMiddleware",
    "config.middleware.ApiLanguageMiddleware",  # the API: English unless the client asks
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"
# The WebSocket routes, as ROOT_URLCONF names the HTTP ones (config/asgi.py).
WEBSOCKET_URLCONF = "games.routing"

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
    # A connection kept between requests (opening one costs more than most requests), checked
    # before reuse so that a server restart or a killed backend costs one request nothing.
    db["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
    db["CONN_HEALTH_CHECKS"] = True
    options = db.setdefault("OPTIONS", {})
    if db["ENGINE"] == "django.db.backends.sqlite3":
        # Several threads write (the web server, timer threads): wait for the lock instead of
        # failing, and take the write lock when a transaction begins, so two writers never
        # deadlock upgrading a read lock.
        options.update({"timeout": 30, "transaction_mode": "IMMEDIATE"})
    return db


DATABASES = {"default": database(f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's four validators, as its new projects have them: a member's password is checked when
# he signs up from an invitation, changes it or resets it.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in ("UserAttributeSimilarityValidator", "MinimumLengthValidator",
                 "CommonPasswordValidator", "NumericPasswordValidator")
]

# French first: the clubs' language, and what a browser asking for neither language gets.
LANGUAGE_CODE = "fr"
LANGUAGES = [("fr", "Français"), ("en", "English")]
# The catalogues live with the pages (frontend/locale/), for every app's strings.
LOCALE_PATHS = [BASE_DIR / "frontend" / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="Europe/Paris")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise serves the apps' static files (admin, Swagger UI) through Django's finders, so that
# a deployment serves them without a collectstatic step or a separate file server.
WHITENOISE_USE_FINDERS = True
# STATIC_ROOT exists only where collectstatic ran; the finders serve the files without it.
warnings.filterwarnings("ignore", "No directory at", UserWarning)

REDIS_URL = env.str("REDIS_URL", default="")

# Sessions: with Redis, Django's cached_db engine (read from the cache, written to the database
# too, so a session outlives a cache flush); without Redis (the embedded default), the database.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": REDIS_URL, "KEY_PREFIX": "academie"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    # The throttles' counts live here too: per process, which is the whole embedded default.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.db"
# django-axes first: it refuses a locked-out sign-in before any password is checked, on the
# sign-in page and HTTP Basic alike; then the project's own backend.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend",
                           "tournaments.auth.NulSafeModelBackend"]
# Sign-in lock-out (django-axes): this many failures of one username from one address lock that
# pair out for the cool-off (429). By the pair, not the address alone: a club's members often
# share one address at the venue, and one member's typos must not lock the others out.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Counted in Redis when there is one: no query per signed request, shared by the processes, and
# a username that PostgreSQL's text cannot hold (a NUL) is only ever hashed into a key. Without
# Redis (the embedded default, SQLite), in the database: a per-process cache would not do.
AXES_HANDLER = ("axes.handlers.cache.AxesCacheHandler" if REDIS_URL
                else "axes.handlers.database.AxesDatabaseHandler")

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Basic first: a request without credentials gets 401 with WWW-Authenticate.
        "rest_framework.authentication.BasicAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "EXCEPTION_HANDLER": "config.exceptions.exception_handler",
    # JSON within a size, a depth and real text (config/parsers.py); forms for the browsable
    # pages' posts, as DRF's defaults.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.Pagination",
}

# No request of this service needs more: a move is a few hundred bytes, a soirée's options a
# few more. A larger body is refused, by the API with a JSON 413 (config/parsers.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

SPECTACULAR_SETTINGS = {
    "TITLE": "Académie API",
    "DESCRIPTION": "Club soirées of Comet and Ma commère: parties, hands, moves, chips.",
    "VERSION": "0.1.0",
    # One name per choice set: a partie's and a hand's status, a soirée's, the bots a table
    # can seat.
    "ENUM_NAME_OVERRIDES": {"PlayStatusEnum": "games.models.Hand.Status",
                            "PartieStatusEnum": "games.models.Partie.Status",
                            "BotKindEnum": "games.services.parties.BOT_NAMES",
                            "BotLevelEnum": "games.services.parties.BOT_CHOICES",
                            "SoireeStatusEnum": "tournaments.models.Soiree.Status",
                            "AnnouncementKindEnum": "tournaments.models.Announcement.Kind",
                            "RulingKindEnum": "tournaments.models.Ruling.Kind"},
    # Then every operation's error answers (config/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "config.schema.document_errors"],
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files: the page works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Throttling (DRF): per address for anonymous clients, per user otherwise, and the moves of one
# user on their own rate; counted in the default cache (Redis in a deployment). Rates are
# "number/period" with period s, m, h or d. NUM_PROXIES: how many proxies in front append to
# X-Forwarded-For, so that an anonymous client is told by its own address, not the proxy's.
REST_FRAMEWORK |= {
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.AnonRateThrottle",
                                 "rest_framework.throttling.UserRateThrottle",
                                 "rest_framework.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("THROTTLE_ANON_RATE", default="30/m"),
        "user": env.str("THROTTLE_USER_RATE", default="20/s"),
        "moves": env.str("THROTTLE_MOVES_RATE", default="5/s"),
    },
    "NUM_PROXIES": env.int("DJANGO_NUM_PROXIES", default=None),
}

# Content-Security-Policy (django-csp): the pages' own scripts and styles carry the request's
# nonce; nothing inline without it, nothing from elsewhere. 'self' covers the live WebSockets of
# the same address (ws: and wss:); CSP_CONNECT_SRC adds other origins, e.g. a live server of its
# own ("wss://live.example.org").
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],  # no inline script: every page script is a static file
        "style-src": [SELF, NONCE],
        "connect-src": [SELF, *env.list("CSP_CONNECT_SRC", default=[])],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# Logs on stdout, each record with its request's id: JSON lines in production (DJANGO_LOG_FORMAT
# = json), text otherwise.
LOG_LEVEL = env.str("DJANGO_LOG_LEVEL", default="INFO")
LOGGING = logging_config(json_lines=env.str("DJANGO_LOG_FORMAT", default="text") == "json",
                         level=LOG_LEVEL)

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

# Casual tables (games/services/invitations.py): the chips a player's casual wallet opens with,
# once, and the club's limit on a casual table's buy-in.
ACADEMIE_CASUAL_WELCOME_CHIPS = env.int("ACADEMIE_CASUAL_WELCOME_CHIPS", default=1_000)
ACADEMIE_CASUAL_MAX_BUY_IN = env.int("ACADEMIE_CASUAL_MAX_BUY_IN", default=500)

# Version-2 hands (HAND_RECORD.md): how long a new hand waits for the seated people's shares of
# randomness before it is dealt without the missing ones; the default of new soirées and tables.
ACADEMIE_SHARE_WINDOW = env.float("ACADEMIE_SHARE_WINDOW", default=3.0)

# Receipts (HAND_RECORD.md, version 3): the service signs what it shows of each hand with an
# Ed25519 key, its 32 private bytes as 64 hex digits. Production must be given one
# (production.py); elsewhere the service makes one on first use and keeps it in this file.
ACADEMIE_SIGNING_KEY = env.str("ACADEMIE_SIGNING_KEY", default="")
ACADEMIE_SIGNING_KEY_FILE = env.str("ACADEMIE_SIGNING_KEY_FILE",
                                    default=str(BASE_DIR / ".signing-key"))

# Email (invitations, password resets): printed on the console here; production sends it by
# SMTP when EMAIL_HOST is set (production.py).
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Académie <academie@localhost>")
#: Whether the pages offer to send an email (an invitation, a password reset).
ACADEMIE_SENDS_EMAIL = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "login"
