"""The API's lists come in pages: a list that returned every row grew without bound (a list of
parties was 341 KB after a few hours of play). DRF's limit and offset, at most ``max_limit``
rows a page; a page past the end is empty. A limit or offset that is not a whole number in
range is refused with a 400 naming it (DRF would read it as its default), as the schema's
ranges say."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request


def _count(request: Request, name: str, default: int, low: int, high: int | None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError({name: ["must be a whole number"]}) from None
    if value < low or (high is not None and value > high):
        top = f" to {high}" if high is not None else " or more"
        raise ValidationError({name: [f"must be from {low}{top}"]})
    return value


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 100

    def get_limit(self, request: Request) -> int:
        return _count(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _count(request, self.offset_query_param, 0, 0, None)

    def get_schema_operation_parameters(self, view: object) -> list[dict]:
        params = super().get_schema_operation_parameters(view)
        for param in params:
            low = 1 if param["name"] == self.limit_query_param else 0
            param["schema"]["minimum"] = low
            if low:
                param["schema"]["maximum"] = self.max_limit
        return params
