"""WebSocket routes of the games app (config/asgi.py mounts them)."""

from django.urls import path

from games.consumers import PartieConsumer

websocket_urlpatterns = [
    path("ws/parties/<uuid:partie_id>/", PartieConsumer.as_asgi()),
    path("ws/parties/<uuid:partie_id>/seats/<int:seat>/", PartieConsumer.as_asgi()),
]
