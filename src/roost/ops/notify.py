"""Results reach the parent: queue a notice when an orchestrated child's status changes
(ops/observe.record calls `enqueue` inside its transaction), and deliver the queue to parents
that are ready (`deliver`), in order, as their next prompt through ops/send.

No daemon: delivery runs where roost already runs. Claude Code's Stop, Notification and
SessionEnd hooks start `roost _notify` in the background (hook.sh), so a child's finished turn
and a parent's return to idle both trigger it; tmux's pane-died hook (`roost _supervise`) runs
it after an exit. A parent that is working keeps its queue until its own Stop; a hibernated or
stopped parent is woken (config.toml `[orchestration] notify_sleeping = "wake"`, the default)
or left asleep with its queue (`"hold"`) until the person wakes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from roost.core import notify as rule
from roost.core import settings as config_schema
from roost.core.observation import Observation
from roost.ops.context import App
from roost.providers import hooks
from roost.store import events
from roost.store import orchestration as queue
from roost.store.db import now_iso
from roost.system import locks


def details(app: App, changed: Sequence[Observation]) -> dict[str, str | None]:
    """What each notice will say beyond the status (the reply, the exit code, the error),
    read before the transaction: file reads never happen while the store is locked."""
    found: dict[str, str | None] = {}
    for o in changed:
        kind = rule.kind_of(o.agent.status, o.status)
        if not o.agent.orchestration_parent or kind is None:
            continue
        if kind == "finished":
            found[o.agent.id] = _last_stop(app, o.agent.id)
        elif kind == "exited":
            found[o.agent.id] = f"exit code {o.exit_code}"
        elif kind == "failed":
            found[o.agent.id] = o.agent.last_error
        else:
            found[o.agent.id] = None
    return found


def _last_stop(app: App, agent_id: str) -> str | None:
    log = hooks.log_path(str(app.paths.home), agent_id)
    found, _ = hooks.read_since(log, max(0, hooks.size(log) - (256 << 10)))
    for _, event, payload in reversed(found):
        if event == "Stop" and isinstance(payload.get("last_assistant_message"), str):
            return str(payload["last_assistant_message"])
        if event == "UserPromptSubmit":
            return None  # this turn said nothing
    return None


def enqueue(c: sqlite3.Connection, changed: Sequence[Observation],
            detail: dict[str, str | None], at: str) -> None:
    """Queue a notice for each change a parent must hear of. Inside the transaction that
    records the changes, before they are stored: only the writer that records a change
    queues its notice (a concurrent refresh that saw the same change finds it stored)."""
    for o in changed:
        if o.agent.id not in detail:
            continue
        row = c.execute("SELECT a.status, p.id FROM agents a JOIN agents p ON "
                        "p.id = a.orchestration_parent WHERE a.id = ?", (o.agent.id,)).fetchone()
        if row is None or row[0] != o.agent.status:
            continue  # no parent any more, or another refresh recorded this change first
        kind = rule.kind_of(o.agent.status, o.status)
        assert kind is not None
        notice = rule.text(o.agent.name, kind, detail[o.agent.id])
        queue.enqueue(c, row[1], o.agent.id, o.agent.name, kind, notice, at)
        events.append(c, o.agent.id, o.agent.name, at, "notice-queued",
                      {"parent": o.agent.orchestration_parent, "notice": kind})


def deliver(app: App) -> list[str]:
    """Deliver every parent's queue that can be delivered now; the parents told."""
    from roost.ops import observe

    found = {o.agent.id: o for o in observe.refresh(app)}
    with app.store.write() as c:
        parents = list(dict.fromkeys(n.parent_id for n in queue.pending(c)))
    _, _, when_sleeping = config_schema.orchestration(app.settings)
    told = []
    for parent_id in parents:
        o = found.get(parent_id)
        if o is None:
            continue
        asleep = not o.alive
        if asleep and when_sleeping != "wake":
            continue
        if not asleep and o.status != "idle":
            continue  # working or waiting: its own next Stop brings it here again
        if deliver_to(app, parent_id):
            told.append(o.agent.name)
    return told


def deliver_to(app: App, parent_id: str) -> bool:
    """Send the parent its pending notices (as many as fit in one message), oldest first; they
    are marked delivered once the parent's CLI confirmed the message. One delivery per parent
    at a time (a lock), so a notice goes out once."""
    from roost.ops import send

    parent = app.store.get_by_id(parent_id)
    if parent is None:
        return False
    with locks.hold(app.paths.locks, f"{parent.name}.notify", timeout=120):
        # A delivery killed between its paste and its Enter left its notices on the parent's
        # input line: submit them first (marked delivered), so they are not sent again.
        finished = send.finish_interrupted(app, parent.name) is not None
        with app.store.write() as c:
            notices = queue.pending(c, parent_id)
        if not notices:
            return finished
        text, count = rule.message([n.text for n in notices])
        sent = send.send(app, parent.name, text, notices=[n.id for n in notices[:count]])
        if not sent.delivered:
            app.store.log(parent, "notice-held", reason=sent.how, pending=len(notices))
            return False
        ids = [n.id for n in notices[:count]]
        with app.store.write() as c:
            queue.mark_delivered(c, ids, now_iso())
            events.append(c, parent.id, parent.name, now_iso(), "notified",
                          {"children": [n.child_name for n in notices[:count]],
                           "notices": [n.status for n in notices[:count]],
                           "confirmed_by": sent.how})
        return True


def seen_by_parent(app: App, parent_id: str, child_ids: Sequence[str]) -> None:
    """The parent read these children's results itself (wait_for_agents): their queued
    notices would only repeat it."""
    with app.store.write() as c:
        ids = [n.id for n in queue.pending(c, parent_id) if n.child_id in child_ids]
        queue.mark_delivered(c, ids, now_iso())
