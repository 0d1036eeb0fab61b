"""Production: refuses to start without its secrets and a real database."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import database, env

DEBUG = False
SECRET_KEY = env.str("DJANGO_SECRET_KEY")
if SECRET_KEY.startswith("insecure"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a real secret in production")
DATABASES = {"default": database(None)}
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
