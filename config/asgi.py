"""The ASGI entry point: HTTP to Django, WebSocket to the games' live routes (games/routing.py).
Served by daphne (``daphne config.asgi:application``; ``manage.py runserver`` too, as daphne is
an installed app)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
# Django is set up before the routes, whose consumers import models.
django_application = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from games.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_application,
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(
        URLRouter(websocket_urlpatterns))),
})
