"""The API's lists come in pages: a list that returned every row grew without bound (a list of
parties was 341 KB after a few hours of play). DRF's limit and offset, at most ``max_limit``
rows a page; a page past the end is empty."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 100
