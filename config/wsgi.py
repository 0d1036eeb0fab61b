import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()
get_resolver().check()  # imports the URLconf and its views now, not at the first request

# What the process has loaded so far (Django, the apps, the views) lives as long as it
# does: moved out of the garbage collector's way, so that a full collection traverses only
# what requests made since: about 90,000 objects, which every full collection of a busy
# worker traversed while its requests waited (bench/api_bench.md, eighth round).
gc.collect()  # nothing left over from start-up is frozen with the rest
gc.freeze()
