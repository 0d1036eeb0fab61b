"""Production: the default of the entry points (config/wsgi.py). Refuses to start without its
secrets and a real database; HTTPS everywhere, set from the environment."""

import re

from django.core.exceptions import ImproperlyConfigured

from config.logging import logging_config

from .base import *  # noqa: F403
from .base import LOG_LEVEL, database, env

DEBUG = False
SECRET_KEY = env.str("DJANGO_SECRET_KEY")
# Django's own rule (check --deploy, security.W009): 50 characters or more, at least 5 distinct.
if SECRET_KEY.startswith(("insecure", "django-insecure")):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a real secret in production")
if len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be at least 50 characters long with at least 5 distinct "
        f"characters (it has {len(SECRET_KEY)} characters); generate one with "
        "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`")
DATABASES = {"default": database(None)}

# The receipts' signing key: given, never made here (a key made by a replica would sign what
# the published keys do not vouch for).
ACADEMIE_SIGNING_KEY = env.str("ACADEMIE_SIGNING_KEY", default="")
ACADEMIE_SIGNING_KEY_FILE = ""
if not re.fullmatch(r"[0-9a-f]{64}", ACADEMIE_SIGNING_KEY):
    raise ImproperlyConfigured(
        "ACADEMIE_SIGNING_KEY must be set in production: the receipts' Ed25519 private key, 32 "
        "random bytes as 64 lowercase hex digits; make one with "
        "`python -c 'import secrets; print(secrets.token_hex(32))'`")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS: every plain-HTTP request is redirected (but the probes, which a load balancer or the
# container runtime sends inside the network), and browsers are told to come back only over
# HTTPS for a year (HSTS). Behind a proxy that ends TLS, DJANGO_SECURE_PROXY_SSL_HEADER names
# the header it sets, e.g. HTTP_X_FORWARDED_PROTO (value "https"; "NAME,value" for another).
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=True)
_proxy_header = env.str("DJANGO_SECURE_PROXY_SSL_HEADER", default="")
if _proxy_header:
    _name, _, _value = _proxy_header.partition(",")
    SECURE_PROXY_SSL_HEADER = (_name.strip(), _value.strip() or "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True

# Email by SMTP when the deployment has a server; without one nothing is sent, and the pages
# say so (an organiser then hands the invitation link over himself).
EMAIL_HOST = env.str("EMAIL_HOST", default="")
EMAIL_PORT = env.int("EMAIL_PORT", default=587)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=True)
EMAIL_BACKEND = ("django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                 else "django.core.mail.backends.dummy.EmailBackend")
ACADEMIE_SENDS_EMAIL = bool(EMAIL_HOST)

# One JSON object per line on stdout, unless DJANGO_LOG_FORMAT says text.
LOGGING = logging_config(json_lines=env.str("DJANGO_LOG_FORMAT", default="json") == "json",
                         level=LOG_LEVEL)
