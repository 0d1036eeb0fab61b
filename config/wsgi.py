"""The WSGI entry point (gunicorn): production settings unless DJANGO_SETTINGS_MODULE says
otherwise; development opts in (`make run` sets config.settings.local)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()
