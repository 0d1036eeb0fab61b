"""Settings of the HTTP benchmark: the production stack (DEBUG off, the same middleware,
authentication and renderers) plus the trivial endpoint of bench/urls.py. Never deployed."""


from config.settings.base import *  # noqa: F403
from config.settings.base import INSTALLED_APPS

DEBUG = False
ROOT_URLCONF = "bench.urls"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [*INSTALLED_APPS, "bench.apps.BenchConfig"]

# Persistent connections, as a deployment runs them: without them each request opens one
# (a PostgreSQL backend started per request), a cost of the set-up and not of the code.
DATABASES["default"]["CONN_MAX_AGE"] = 600  # noqa: F405  (the deployment default is 60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405

# The throttles run as in production, at rates no benchmark client reaches: the load is the
# point here, not the clients' manners.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {  # noqa: F405
    "anon": "1000000/s", "user": "1000000/s", "moves": "1000000/s"}}
