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


# A component's states in a run (store/service.py keeps them): starting until its start returns;
# serving; off (nothing to do here: web without `[web] enabled`); failed (its start raised).
STARTING, SERVING, OFF, FAILED = "starting", "serving", "off", "failed"


@dataclass(frozen=True, slots=True)
class Part:
    """One component of the running service: its state, where it serves (a socket's path, a
    URL; None when it says nothing), and its last failure (starting it, or handling events)."""

    name: str
    state: str
    address: str | None = None
    error: str | None = None
    at: str | None = None  # when its state or error last changed

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "state": self.state,
            "address": self.address,
            "error": self.error,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """What `roost service status` says: running or not, its pid and pane, since when (ISO 8601),
    what it serves (the components serving now), the shared MCP endpoint's address, each
    component's state and last error, and why it is not running when it is not."""

    running: bool
    pid: int | None = None
    pane_id: str | None = None
    since: str | None = None
    serves: tuple[str, ...] = field(default_factory=tuple)
    note: str | None = None
    endpoint: str | None = None
    parts: tuple[Part, ...] = field(default_factory=tuple)

    def offers(self, name: str) -> bool:
        """Whether component `name` serves, or will once its start returns."""
        return self.running and any(
            p.name == name and p.state in (STARTING, SERVING) for p in self.parts
        )

    def text(self) -> str:
        """What `roost service status` prints: a line, then one per address and failure.

        >>> ServiceStatus(True, 42, "%3", "2026-01-01T00:00:00+00:00", ("monitor",)).text()
        'running (pid 42, since 2026-01-01T00:00:00+00:00): monitor'
        >>> ServiceStatus(False, note="not started").text()
        'not running: not started'
        >>> print(ServiceStatus(True, 7, "%1", "T", ("mcp",), endpoint="http://127.0.0.1:9/mcp",
        ...     parts=(Part("readers", FAILED, error="OSError: no"),)).text())
        running (pid 7, since T): mcp
          mcp endpoint: http://127.0.0.1:9/mcp
          readers failed: OSError: no
        """
        if not self.running:
            head = f"not running: {self.note}" if self.note else "not running"
        else:
            head = f"running (pid {self.pid}, since {self.since}): {', '.join(self.serves) or '-'}"
        lines = [head]
        if self.endpoint:
            lines.append(f"  mcp endpoint: {self.endpoint}")
        for part in self.parts:
            if part.state == FAILED:
                lines.append(f"  {part.name} failed: {part.error}")
            elif part.error:
                lines.append(f"  {part.name} last error ({part.at}): {part.error}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, object]:
        return {
            "running": self.running,
            "pid": self.pid,
            "pane_id": self.pane_id,
            "since": self.since,
            "serves": list(self.serves),
            "endpoint": self.endpoint,
            "components": [p.as_json() for p in self.parts],
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
