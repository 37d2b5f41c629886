"""Results reach the parent: queue a notice when an orchestrated child's status changes
(`ON_STATUS`, a reaction in the status pipeline's transaction: ops/root.py), and deliver the
queue to parents that are ready (`deliver`), in order, as their next prompt through ops/send.

No daemon: delivery runs where roost already runs. Claude Code's Stop, Notification and
SessionEnd hooks start `roost _notify` in the background (hook.sh), so a child's finished turn
and a parent's return to idle both trigger it; tmux's pane-died hook (`roost _supervise`) runs
it after an exit. A parent that is working keeps its queue until its own Stop; a hibernated
parent, or one that exited by itself, is woken (config.toml `[orchestration] notify_sleeping =
"wake"`, the default) or left asleep with its queue (`"hold"`) until the person wakes it. One
the person stopped (`roost kill`, MCP `stop_agent`) or that failed is never woken for a notice:
its SessionStart at the person's wake delivers the queue. A parent that dies on a delivery is
not woken again while that notice waits, and deliveries back off and give up
(core/notify.py's rules), so a notice can never start a parent again and again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from roost.core import notify as rule
from roost.core.errors import RoostError
from roost.core.model import INTENT_STOPPED, Agent
from roost.core.observation import Observation
from roost.core.pane import agent_panes
from roost.ops.context import App, OnStatus
from roost.ops.learn import stop_message
from roost.providers import hooks, traits
from roost.store import events
from roost.store import orchestration as queue
from roost.store import status as listing
from roost.store.db import Connection
from roost.system import locks

HISTORY = 200  # events of a parent read back for the crash-loop window


def details(app: App, changed: Sequence[Observation]) -> dict[str, str | None]:
    """What each notice will say beyond the status (the reply, the exit code, the error),
    read before the transaction: file reads never happen while the store is locked."""
    found: dict[str, str | None] = {}
    for o in changed:
        kind = rule.kind_of(o.agent.status, o.status)
        if not o.agent.orchestration_parent or kind is None:
            continue
        if kind == "finished":
            found[o.agent.id] = (
                _last_stop(app, o.agent.id)
                if traits.of(o.agent.provider).hooks
                else _recorded(app, o.agent.id)
            )
        elif kind == "exited":
            found[o.agent.id] = f"exit code {o.exit_code}"
        elif kind == "failed":
            found[o.agent.id] = o.agent.last_error
        else:
            found[o.agent.id] = None
    return found


def _recorded(app: App, agent_id: str) -> str | None:
    """The last answer in the CLI's own record of the turn (codex, gemini, aider)."""
    from roost.ops import replies  # here: each hook's start (`roost _notify`) skips it

    agent = app.store.get_by_id(agent_id)
    return replies.recorded_last(app, agent) if agent is not None else None


def _last_stop(app: App, agent_id: str) -> str | None:
    """This turn's answer (the log's last 256 KiB are plenty for one turn)."""
    size = hooks.size(hooks.log_path(str(app.paths.home), agent_id))
    return stop_message(app, agent_id, max(0, size - (256 << 10)), this_turn=True)


def enqueue(
    app: App,
    c: Connection,
    changed: Sequence[Observation],
    at: str,
    detail: dict[str, str | None],
) -> None:
    """Queue a notice for each change a parent must hear of. Inside the transaction that
    records the changes, after them, with the changes this writer stored: only the writer
    that records a change queues its notice (a concurrent refresh that saw the same change
    finds it stored and reacts to nothing)."""
    for o in changed:
        if o.agent.id not in detail:
            continue
        parent_id = listing.orchestration_parent_while(c, o.agent.id, o.status)
        if parent_id is None:
            continue  # no parent any more, or a later change is stored already
        kind = rule.kind_of(o.agent.status, o.status)
        assert kind is not None
        notice = rule.text(o.agent.name, kind, detail[o.agent.id])
        queue.enqueue(c, parent_id, o.agent.id, o.agent.name, kind, notice, at)
        events.append(
            c,
            o.agent.id,
            o.agent.name,
            at,
            "notice-queued",
            {"parent": o.agent.orchestration_parent_name, "notice": kind},
        )


ON_STATUS = OnStatus("notify", enqueue, read=details)


def deliver(app: App) -> list[str]:
    """Deliver every parent's queue that can be delivered now; the parents told."""
    from roost.ops import observe

    observe.refresh(app)  # records the children's changes, which queues their notices
    with app.store.write() as c:
        parents = list(dict.fromkeys(n.parent_id for n in queue.pending(c)))
    told = []
    for parent_id in parents:
        if deliver_to(app, parent_id):
            parent = app.store.get_by_id(parent_id)
            told.append(parent.name if parent else parent_id)
    return told


def deliver_to(app: App, parent_id: str) -> bool:
    """Send the parent its pending notices (as many as fit in one message), oldest first; they
    are marked delivered once the parent's CLI confirmed the message. One delivery per parent
    at a time (a lock), so a notice goes out once; whether to deliver is decided under it."""
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
        found = _observed(app, parent_id)
        if found is None:
            return False
        when_sleeping = app.settings.orchestration.notify_sleeping
        # a notice that only says a base branch moved (merge/operations.py) wakes nobody
        wakes = any(n.status != rule.BASE_MOVED for n in notices)
        why = rule.hold_reason(
            alive=found.alive,
            status=found.status,
            intent=found.agent.intent,
            state=found.state,
            wake=when_sleeping == "wake" and wakes,
            died_on=any(n.tries for n in notices),
        )
        if why == "busy":
            return False
        if why is not None:
            app.store.log(parent, "notice-held", reason=why, pending=len(notices))
            return False
        parent = app.store.get_by_id(parent_id) or parent
        if not found.alive and parent.orchestration_parent:
            from roost.ops import orchestrate

            try:  # waking a parent that is itself a child counts against its tree's limits
                orchestrate.wake_within_limits(app, parent)
            except RoostError as exc:
                app.store.log(parent, "notice-held", reason=str(exc), pending=len(notices))
                return False
        return _send_notices(app, parent, notices)


def _observed(app: App, agent_id: str) -> Observation | None:
    from roost.ops import observe

    return next((o for o in observe.refresh(app) if o.agent.id == agent_id), None)


def _send_notices(app: App, parent: Agent, notices: Sequence[queue.Notice]) -> bool:
    from roost.ops import send

    deaths = _recent_deaths(app, parent)
    if deaths:
        app.clock.sleep(rule.backoff(deaths))  # like supervision's restarts: 1 s, 2 s, 4 s
    text, count = rule.message([n.text for n in notices])
    batch = notices[:count]
    sent = send.send(app, parent.name, text, notices=[n.id for n in batch])
    if not sent.delivered:
        # Its person stopped it while the notices were on their way: not its death.
        now = app.store.get_by_id(parent.id)
        if now is not None and now.intent == INTENT_STOPPED:
            app.store.log(parent, "notice-held", reason=rule.STOPPED, pending=len(notices))
            return False
        if not _alive(app, parent.id):
            _died_on(app, parent, batch, deaths + 1)
        app.store.log(parent, "notice-held", reason=sent.how, pending=len(notices))
        return False
    with app.store.write() as c:
        queue.mark_delivered(c, [n.id for n in batch], app.store.now_iso())
        events.append(
            c,
            parent.id,
            parent.name,
            app.store.now_iso(),
            "notified",
            {
                "children": [n.child_name for n in batch],
                "notices": [n.status for n in batch],
                "confirmed_by": sent.how,
            },
        )
    return True


def _alive(app: App, agent_id: str) -> bool:
    pane = agent_panes(app.tmux.list_panes()).get(agent_id)
    return pane is not None and not pane.dead


def _recent_deaths(app: App, parent: Agent) -> int:
    """How many deliveries the parent died on within the crash-loop window."""
    since = app.clock.now() - timedelta(seconds=rule.DEATH_WINDOW)
    return sum(
        1
        for e in app.store.events(parent.id, limit=HISTORY)
        if e.kind == "died-on-notice" and datetime.fromisoformat(e.at) >= since
    )


def _died_on(app: App, parent: Agent, batch: Sequence[queue.Notice], deaths: int) -> None:
    """The parent died while `batch` was being delivered: no wake for these notices any more
    (the person's wake delivers them), a notice it died on twice is given up, and dying on
    delivery after delivery is a crash loop (`failed` until the person wakes it)."""
    at = app.store.now_iso()
    given_up = [n for n in batch if n.tries + 1 >= rule.MAX_TRIES]
    with app.store.write() as c:
        queue.mark_tried(c, [n.id for n in batch])
        events.append(
            c,
            parent.id,
            parent.name,
            at,
            "died-on-notice",
            {"children": [n.child_name for n in batch], "deaths": deaths},
        )
        queue.mark_delivered(c, [n.id for n in given_up], at)
        for n in given_up:
            events.append(
                c,
                parent.id,
                parent.name,
                at,
                "notice-dropped",
                {
                    "child": n.child_name,
                    "notice": n.status,
                    "text": n.text,
                    "reason": f"{parent.name} died on {rule.MAX_TRIES} deliveries of it",
                },
            )
    if deaths >= rule.MAX_DEATHS:
        app.store.update(
            parent.id,
            last_error=(
                f"crash loop: it died on {deaths} deliveries of notices within "
                f"{rule.DEATH_WINDOW:.0f} s; `roost wake {parent.name}` clears it"
            ),
        )
        app.store.log(parent, "failed", deaths_on_notice=deaths)


def seen_by_parent(app: App, parent_id: str, child_ids: Sequence[str]) -> None:
    """The parent read these children's results itself (wait_for_agents): their queued
    notices would only repeat it."""
    with app.store.write() as c:
        ids = [n.id for n in queue.pending(c, parent_id) if n.child_id in child_ids]
        queue.mark_delivered(c, ids, app.store.now_iso())
