from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class TrivialView(APIView):
    """POST answers a tiny JSON through the move endpoint's stack (DRF, the session, CSRF,
    IsAuthenticated) and none of the game: the ceiling a move is compared with."""

    def post(self, request: Request) -> Response:
        return Response({"ok": True, "user": request.user.pk})
