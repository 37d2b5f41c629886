"""Alerts to the person: decide from the event log which edges deserve one (alerts/rules.py),
queue them in the store with the cursor moved in the same transaction, and deliver the queue
through the channels of config.toml `[notify]` (system/outbound.py).

A pass is `decide_new` then `deliver_pending`. Any number of processes may run passes (the
roost service, `roost notify run`, `roost watch --notify`): the cursor moves by compare-and-set,
so each event is decided once, and each queued alert is claimed by one pass. The terminal
channel is the `alert` event a decision logs: every TUI or `roost watch --notify` that reads it
writes it to its own terminal (`terminal_text`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from roost.alerts import rules as core
from roost.core.events import Event
from roost.core.pane import agent_panes
from roost.core.settings import Settings
from roost.core.status import Status
from roost.ops.context import App
from roost.ops.observe import patterns_of
from roost.ops.service import Component, in_passes, news
from roost.store import alerts as outbox
from roost.store import events as event_log
from roost.system import outbound

BATCH = 500  # events decided in one pass
MAX_TRIES = 2  # a delivery cut off by a crash is tried once more, never forever
URGENT = (Status.WAITING, Status.ERROR, Status.LIMITED, "crashed", Status.FAILED)
SCREEN_LINES = 40  # a waiting dialog is tall: its question may sit above many option rows

Send = Callable[[outbox.Pending], "str | None"]


@dataclass(frozen=True, slots=True)
class Delivery:
    alert: outbox.Pending
    outcome: dict[str, str]  # channel -> "ok" or what went wrong


def run_pass(app: App) -> list[Delivery]:
    """Decide every new event (in batches), then deliver what they queued."""
    while decide_new(app) == BATCH:
        pass
    return deliver_pending(app)


def decide_new(app: App) -> int:
    """Decide the events after the stored cursor (up to BATCH): queue their alerts, log each as
    an `alert` event (the terminal channel), store the dedupe state and move the cursor, all at
    once. Returns how many events were decided (0: none new, or another pass took them)."""
    conn = app.store.conn
    after = outbox.cursor(conn)
    found_events = event_log.after(conn, after, BATCH)
    if not found_events:
        return 0
    state = outbox.seen(conn)
    children = outbox.person_children(conn)
    watched = looked_at(app) if _has_edges(found_events) else set()
    found, new_state = core.decide(found_events, state, children, watched)
    words = waiting_words(app, [a for a in found if a.edge == "waiting"])
    changed = {k: v for k, v in new_state.items() if state.get(k) != v}
    at = app.store.now_iso()
    with app.store.write() as c:
        if not outbox.advance(c, after, found_events[-1].seq, changed):
            return 0  # another pass decided these events first
        for a in found:
            title, body = core.message(a, words.get(a.agent_id))
            outbox.enqueue(c, a.event_id, a.agent_id, a.agent, a.edge, title, body, at)
            detail = {"edge": a.edge, "title": title, "body": body, "event": a.event_id}
            event_log.append(c, a.agent_id, a.agent, at, "alert", detail)
    return len(found_events)


def _has_edges(found_events: Sequence[Event]) -> bool:
    """Whether any event may alert (only then is tmux asked who is attached)."""
    return any(core.edge_of(e, True) for e in found_events)


def looked_at(app: App) -> set[str]:
    """The agents a person looks at right now: a client (not a control-mode one) showing the
    agent's window, directly or as a tile of `roost open`'s view, a tile counted only while
    someone looks at that view. One `list-clients`; with clients, one `list-panes` here and
    one on the view server."""
    clients = app.tmux.clients()
    if not clients:
        return set()
    tiles = app.tmux.view_client().pane_ttys()
    shown = {pane for pane, tty in clients if tiles.get(tty, True)}
    return {
        agent_id for agent_id, p in agent_panes(app.tmux.list_panes()).items() if p.pane_id in shown
    }


def waiting_words(app: App, waiting: Sequence[core.Alert]) -> dict[str, str]:
    """Agent id -> the question each waiting agent's screen asks, in its CLI's own words."""
    if not waiting:
        return {}
    panes = agent_panes(app.tmux.list_panes())
    found: dict[str, str] = {}
    for a in waiting:
        agent, pane = app.store.get_by_id(a.agent_id), panes.get(a.agent_id)
        if agent is None or pane is None:
            continue
        screen = app.tmux.capture(pane.pane_id, SCREEN_LINES)
        asked = core.question(screen, patterns_of(app, agent.provider).get("waiting", []))
        if asked:
            found[a.agent_id] = asked
    return found


# ---- delivery --------------------------------------------------------------------------------


def channels(
    config: Settings, ntfy_actions: Mapping[int, Sequence[Mapping[str, object]]] | None = None
) -> dict[str, Send]:
    """The configured outbound channels, by name (the terminal one is the `alert` event);
    `ntfy_actions`: an alert's answer buttons on ntfy, by its id (push/operations.py)."""
    given = config.notify
    timeout = given.timeout
    found: dict[str, Send] = {}
    if given.command:
        argv = list(given.command)
        found["command"] = lambda p: outbound.run_argv([*argv, p.title, p.body], timeout)
    if given.ntfy:
        url = given.ntfy
        acts = ntfy_actions or {}
        found["ntfy"] = lambda p: outbound.ntfy(
            url, p.title, p.body, p.edge in URGENT, timeout, acts.get(p.id, ())
        )
    if given.webhook:
        hook = given.webhook
        found["webhook"] = lambda p: outbound.webhook(
            hook,
            {"title": p.title, "body": p.body, "agent": p.agent, "edge": p.edge},
            timeout,
        )
    return found


def deliver_pending(app: App) -> list[Delivery]:
    """Deliver every queued alert through every channel at once, waiting no longer than the
    configured timeout (a slow or dead endpoint holds up nothing else). Each channel's outcome
    is stored the moment it is known, so a pass killed meanwhile leaves only the channels that
    had not answered to the next try; failures are logged as `alert-failed` events and not
    tried again."""
    if not outbox.has_pending(app.store.conn):  # a read: most passes take no write lock
        return []
    with app.store.write() as c:
        claimed = outbox.claim(c, MAX_TRIES)
    if not claimed:
        return []
    timeout = app.settings.notify.timeout
    from roost.push import operations as push  # a phone's Web Push and ntfy's answer buttons

    pushing = push.Channel(app, claimed)
    sends = channels(app.settings, pushing.ntfy)
    if pushing.active:
        sends["push"] = pushing.send

    def record(p: outbox.Pending, channel: str, said: str) -> None:
        with app.store.write() as c:
            outbox.channel_done(c, p.id, channel, said)
            if said != "ok":
                detail = {"channel": channel, "error": said, "alert": p.id}
                event_log.append(c, p.agent_id, p.agent, c.now_iso(), "alert-failed", detail)

    outcomes = deliver(claimed, sends, timeout, record)
    pushing.forget_gone()
    with app.store.write() as c:
        for p in claimed:
            outbox.finish(c, p.id, c.now_iso())
    return [Delivery(p, outcomes[p.id]) for p in claimed]


Record = Callable[[outbox.Pending, str, str], None]


def deliver(
    pending: Sequence[outbox.Pending],
    sends: dict[str, Send],
    timeout: float,
    record: Record | None = None,
) -> dict[int, dict[str, str]]:
    """Each alert through each channel it has not been through yet, all at once
    (system.outbound.as_they_answer), waited for together until `timeout` plus a second of
    grace; `record` hears each outcome in this thread as it arrives."""
    jobs = [(p, name, send) for p in pending for name, send in sends.items() if name not in p.done]
    outcome: dict[int, dict[str, str]] = {p.id: {} for p in pending}
    calls = [lambda p=p, send=send: send(p) or "ok" for p, _, send in jobs]
    for index, said in outbound.as_they_answer(calls, timeout + 1.0):
        p, name, _ = jobs[index]
        outcome[p.id][name] = said
        if record is not None:
            record(p, name, said)
    for p, name, _ in jobs:
        if name not in outcome[p.id]:
            outcome[p.id][name] = said = f"no answer within {timeout:g} s"
            if record is not None:
                record(p, name, said)
    return outcome


def test_alert(app: App) -> list[tuple[str, str]]:
    """`roost notify test`: one alert through every channel now, (channel, "ok" or what went
    wrong) each; the terminal channel is the caller's (it writes terminal_text itself)."""
    sends = channels(app.settings)
    probe = outbox.Pending(0, "", "roost", "test", "roost: test notification", "It works.", ())
    found = deliver([probe], sends, app.settings.notify.timeout)[0]
    return sorted(found.items())


def terminal_text(title: str, body: str, environ: dict[str, str]) -> str:
    """What to write to this process's terminal for an alert (wrapped when it runs in tmux)."""
    return core.osc(title, body, in_tmux=bool(environ.get("TMUX")))


# ---- the roost service's component (ops/service.py) ----------------------------------------


def _component_start(app: App) -> Callable[[], None]:
    """A worker thread of its own runs the passes (service.in_passes), woken by each batch of
    events the service hands on (and every WORKER_CHECK seconds): the service's event thread
    never waits for a delivery. Its first pass loads the phones' HTTP stack first, so that a
    phone's first push does not wait for its import."""
    warmed = threading.Event()

    def first_warm(mine: App) -> None:
        if not warmed.is_set():
            from roost.push import operations as push

            push.warm(mine)
            warmed.set()
        _pass(mine)

    return in_passes(app, "alerts", first_warm, WORKER_CHECK, _WAKE, wait=10)


def _pass(app: App) -> None:
    if run_pass(app):
        news()  # its `alert` events: readers of the stream hear of them at once


def _component_on_events(app: App, events: list[Event]) -> None:
    _WAKE.set()


_WAKE = threading.Event()
WORKER_CHECK = 5.0  # seconds: a pass at least this often (a delivery cut off, a late batch)


COMPONENT = Component(name="alerts", start=_component_start, on_events=_component_on_events)
