"""Conversions between JSON values and Python ones."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_FRACTION = re.compile(r"(\.\d{1,6})\d*")


def parse_time(s: str) -> datetime:
    """Parse an RFC 3339 time as the server writes it (Go's time.Time:
    nanoseconds, "Z" for UTC) into an aware datetime, to the microsecond."""
    s = _FRACTION.sub(r"\1", s, count=1)
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    return datetime.fromisoformat(s)


def dump_time(t: datetime) -> str:
    """Write a datetime as RFC 3339; a naive one is taken as UTC."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.isoformat()
