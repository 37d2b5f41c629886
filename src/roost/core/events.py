"""The event log's words and records: what happened to an agent (store/events.py keeps them).

`EventKind` names every kind roost writes, so a typo in a writer or a reader is a type error
(mypy's strict equality: `e.kind == "stauts"` compares with no kind there is). An `Event` is one
row as a reader gets it: the columns every event has, and `data`, the kind's own details as
they were written (JSON). The two shapes the event log has on the outside (`roost events
--json` and the stream: `roost watch --json`, the web's feed) are `listed` and `streamed`,
byte for byte what they were when readers spread the details into one dict.

>>> e = Event(7, "id-a", "api", "T", "exited", {"exit_code": 1})
>>> e.listed(), e.streamed()["seq"], e.data.get("exit_code")
({'id': 7, 'agent': 'api', 'at': 'T', 'kind': 'exited', 'exit_code': 1}, 7, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

EventKind = Literal[
    # an agent's life
    "spawned",
    "started",
    "fresh-start",
    "start-failed",
    "exited",
    "restarted",
    "unresumable",
    "failed",
    "stopping",
    "stop-failed",
    "killed",
    "hibernated",
    "removed",
    "orphans-stopped",
    "forked",
    "approved",
    "worktree-files",
    "worktree-setup",
    # its CLI's session and signals
    "session",
    "session-ignored",
    "session-refused",
    "hook-events-ignored",
    "clock-step",
    "hook",
    "bell",
    "status",
    # what roost typed or held for it
    "sent",
    "answered",
    "input-held",
    "input-delivered",
    "resumed",
    "resume_postponed",
    # orchestration: children and their notices
    "child-created",
    "child-sent",
    "notice-queued",
    "notice-held",
    "notified",
    "died-on-notice",
    "notice-dropped",
    # budgets, alerts, the service's config
    "budget",
    "max-live",
    "alert",
    "alert-failed",
    "config-applied",
    "config-refused",
    # merges and agents that collide (the merge room, issue 38)
    "merging",
    "merged",
    "merge-failed",
    "collision",
    "device-paired",  # issue 40: a phone (roost web pair, devices revoke, a refused capability)
    "device-revoked",
    "push-refused",
    "push-answering",  # an answer from a notification, sent to a host's roost (before the ssh)
    "push-answered",  # what that host said of it
]


@dataclass(frozen=True, slots=True)
class Event:
    """One row of the event log. `agent_id` is roost's id (the service's own events name a
    file there: config.toml), `agent` the name it had then; `at` ISO 8601; `data` the kind's
    details (`status`, `previous`, `source` for a status change; `exit_code` for an exit...)."""

    seq: int
    agent_id: str
    agent: str
    at: str
    kind: EventKind
    data: Mapping[str, object]

    def text(self, key: str) -> str | None:
        """A detail that is a string, else None (an old version's shape, another kind's).

        >>> Event(1, "a", "x", "T", "status", {"status": "idle", "n": 2}).text("n") is None
        True
        """
        value = self.data.get(key)
        return value if isinstance(value, str) else None

    def number(self, key: str) -> int | None:
        """A detail that is a whole number (not a bool), else None.

        >>> e = Event(1, "a", "x", "T", "exited", {"exit_code": 2, "ok": True})
        >>> e.number("exit_code"), e.number("ok")
        (2, None)
        """
        value = self.data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def listed(self) -> dict[str, object]:
        """As `roost events --json` prints it: id, agent, at, kind, then the details."""
        return {"id": self.seq, "agent": self.agent, "at": self.at, "kind": self.kind, **self.data}

    def streamed(self) -> dict[str, object]:
        """As the stream hands it on (`roost watch --json`, the web's feed): the details, then
        seq, agent_id, agent, at and kind."""
        return {
            **self.data,
            "seq": self.seq,
            "agent_id": self.agent_id,
            "agent": self.agent,
            "at": self.at,
            "kind": self.kind,
        }
