"""Serializer fields the API shares."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rest_framework import serializers


class DateTimeField(serializers.DateTimeField):
    """DRF's date-time, accepted only from 1970 to 2999 (UTC).

    Earlier times meant nothing here and came back broken: in 1908 Paris ran on local mean
    time, and a soirée said to start then was answered with the offset "+00:09:21", which RFC
    3339 cannot hold and other people's tools refuse (found by schemathesis). Later ones are
    typing mistakes."""

    EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
    LATEST = datetime(3000, 1, 1, tzinfo=UTC)
    default_error_messages = {
        "range": "must be from 1970-01-01T00:00:00Z up to 2999-12-31T23:59:59Z.",
    }

    def to_internal_value(self, value: Any) -> datetime:
        parsed: datetime = super().to_internal_value(value)
        if not self.EARLIEST <= parsed < self.LATEST:
            self.fail("range")
        return parsed
