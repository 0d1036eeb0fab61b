"""POST /bench/trivial/ inserts one row and answers its id: same stack as the move endpoint
(DRF, the project's authentication and IsAuthenticated), none of the game."""

from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Row


class RowSerializer(serializers.Serializer):
    value = serializers.IntegerField()


class TrivialView(APIView):
    def post(self, request: Request) -> Response:
        data = RowSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = Row.objects.create(value=data.validated_data["value"])
        return Response({"id": row.pk, "value": row.value}, status=status.HTTP_201_CREATED)
