"""The roost service, as data: its reserved session name, what `roost service status` reports,
and when to restart it after it died (pure; ops/service.py does the I/O).

The session's name starts with '_': no agent or home name can (core/names.py), so no agent ever
collides with it, and `roost ls` never shows it (it carries no `@roost_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

SESSION = "_roost_service"  # the hidden session: the service's pane, and its control client's seat
WINDOW = "service"
MAX_CRASHES = 5  # more deaths than this within CRASH_WINDOW: a crash loop, left stopped
CRASH_WINDOW = 60.0  # seconds


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """What `roost service status` says: running or not, its pid and pane, since when (ISO 8601),
    what it serves (its components' names), and why it is not running when it is not."""

    running: bool
    pid: int | None = None
    pane_id: str | None = None
    since: str | None = None
    serves: tuple[str, ...] = field(default_factory=tuple)
    note: str | None = None

    def text(self) -> str:
        """The line `roost service status` prints.

        >>> ServiceStatus(True, 42, "%3", "2026-01-01T00:00:00+00:00", ("monitor",)).text()
        'running (pid 42, since 2026-01-01T00:00:00+00:00): monitor'
        >>> ServiceStatus(False, note="not started").text()
        'not running: not started'
        """
        if not self.running:
            return f"not running: {self.note}" if self.note else "not running"
        return f"running (pid {self.pid}, since {self.since}): {', '.join(self.serves) or '-'}"

    def as_json(self) -> dict[str, object]:
        return {
            "running": self.running,
            "pid": self.pid,
            "pane_id": self.pane_id,
            "since": self.since,
            "serves": list(self.serves),
            "note": self.note,
        }


def restart_delay(deaths: Sequence[datetime], now: datetime) -> float | None:
    """Seconds to wait before restarting a service that died `now`, given its earlier deaths
    (any order, any age): 1 s, 2 s, 4 s... as for agents (core/supervision.py), None after more
    than MAX_CRASHES within CRASH_WINDOW (a crash loop: the next command that needs the service
    starts it again).

    >>> now = datetime(2026, 1, 1)
    >>> restart_delay([], now), restart_delay([now - timedelta(seconds=5)], now)
    (1.0, 2.0)
    >>> restart_delay([now - timedelta(seconds=120)] * 9, now)
    1.0
    >>> restart_delay([now] * MAX_CRASHES, now) is None
    True
    """
    since = now - timedelta(seconds=CRASH_WINDOW)
    recent = 1 + sum(1 for d in deaths if d >= since)  # this death included
    if recent > MAX_CRASHES:
        return None
    return float(2 ** (recent - 1))
