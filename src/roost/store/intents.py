"""Intent before effect (issue 36 point 3): a stop roost makes (kill, hibernate, rm, a budget's
park, `max_live`) is recorded here, with a `stopping` event, before its signal is sent, so every
observer of the exit that follows (the status pipeline, the pane-died hook, the alerts) can tell
it from a crash: until its deadline, an exit of the launch it stops is that stop's.

One row per agent (the newest stop; ON DELETE CASCADE with the agent). A row whose stop
completed stays, harmless: the agent's stored intent says the same, and its next launch is
none of the row's business. A stop that failed before its signal went out drops its row; one
that failed after it (the exit it caused is its own), or was cut off (the stopping process
killed), is void at its deadline. A start
ends it too: its launch is no longer the one running. Times are the store's ISO text (UTC, to
the millisecond), which compare as text. `begin` and `drop` run inside the caller's
`store.write()` transaction; `active` only reads; `covering` is the one test of what it read
that the status pipeline and the pane-died hook both make.
"""

from __future__ import annotations

import sqlite3

from roost.store import events


def begin(
    c: sqlite3.Connection,
    agent_id: str,
    name: str,
    intent: str,
    why: str,
    launches: int,
    at: str,
    until: str,
) -> None:
    """Record the stop of the agent's launch `launches`, which leaves it `intent` (stopped or
    hibernated), and log it as a `stopping` event (what the alerts read), before its signal."""
    c.execute(
        "INSERT INTO stop_intents (agent_id, intent, why, launches, at, until) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET intent = excluded.intent, "
        "why = excluded.why, launches = excluded.launches, at = excluded.at, "
        "until = excluded.until",
        (agent_id, intent, why, launches, at, until),
    )
    detail = {"intent": intent, "why": why, "until": until}
    events.append(c, agent_id, name, at, "stopping", detail)


def drop(c: sqlite3.Connection, agent_id: str, name: str, at: str, error: str) -> None:
    """The stop failed (`error`) before its signal went out: a later exit of this launch is the
    agent's own again, which a `stop-failed` event tells the alerts."""
    c.execute("DELETE FROM stop_intents WHERE agent_id = ?", (agent_id,))
    events.append(c, agent_id, name, at, "stop-failed", {"error": error})


def active(c: sqlite3.Connection, now: str) -> dict[str, tuple[str, int]]:
    """Agent id -> (the intent, the launch it stops) of every stop whose deadline is after
    `now` (read-only; almost always none)."""
    rows = c.execute("SELECT agent_id, intent, launches FROM stop_intents WHERE until > ?", (now,))
    return {str(r[0]): (str(r[1]), int(r[2])) for r in rows}
