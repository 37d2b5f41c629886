"""The real clock (core.clock.Clock): the system's wall and monotonic time, and real sleeping."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


def local_zone(environ: Mapping[str, str]) -> tzinfo:
    """The user's time zone, for the times people read: $TZ when it names a zone (with DST
    rules), else the one the system gives this process (its offset now)."""
    name = environ.get("TZ", "").removeprefix(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass  # a POSIX rule like "EST5EDT,M3.2.0,M11.1.0": the C library reads it
    return datetime.now().astimezone().tzinfo or UTC
