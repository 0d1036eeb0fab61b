"""The ASGI entry point: HTTP to Django, WebSocket to the routes of the module that the
WEBSOCKET_URLCONF setting names (games/routing.py), found by name as Django finds ROOT_URLCONF,
so that config imports no app. Served by daphne (``daphne config.asgi:application``;
``manage.py runserver`` too, as daphne is an installed app)."""

import os
from importlib import import_module

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
# Django is set up before the routes, whose consumers import models.
django_application = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

websocket_urlpatterns = import_module(settings.WEBSOCKET_URLCONF).websocket_urlpatterns

application = ProtocolTypeRouter({
    "http": django_application,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(
        URLRouter(websocket_urlpatterns))),
})
