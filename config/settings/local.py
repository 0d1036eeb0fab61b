"""The embedded default: a laptop, SQLite unless DATABASE_URL says otherwise."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
