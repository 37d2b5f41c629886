"""Time as a value that can be passed in: the operations that wait or stamp ask a Clock, so
tests fix "now" and skip the waiting (honcho's injected `Env` is the model).

`ManualClock` is the shipped fake: pure, it moves only when someone sleeps or advances it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


def iso(moment: datetime) -> str:
    """How the store writes a time: UTC, to the millisecond.

    >>> iso(datetime(2031, 3, 4, 5, 6, 7, 890123, tzinfo=UTC))
    '2031-03-04T05:06:07.890+00:00'
    """
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


class Clock(Protocol):
    def now(self) -> datetime:
        """The wall-clock time, timezone-aware (UTC)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, for deadlines and durations."""
        ...

    def sleep(self, seconds: float) -> None: ...


class ManualClock:
    """A clock that stands still until told: `sleep` advances it at once and is recorded.

    >>> from datetime import timezone
    >>> clock = ManualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    >>> clock.sleep(1.5)
    >>> clock.monotonic(), clock.now().isoformat(), clock.slept
    (1.5, '2026-01-01T00:00:01.500000+00:00', [1.5])
    """

    def __init__(self, start: datetime) -> None:
        self.start = start
        self.elapsed = 0.0
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        return self.elapsed

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self.elapsed += max(0.0, seconds)
