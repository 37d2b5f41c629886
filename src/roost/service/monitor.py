"""The service's monitor (a component it runs: service/components.py): learns from tmux what
changed, without polling, and runs the status pipeline (ops/observe.py, core's steps) for
what changed only.

- One control-mode client (tmux/control.py) on the service's own hidden session, waiting on
  the channel that tmux's hooks signal when a window shows output, rings a bell or has a pane
  respawned, and subscribed to the counter they raise too (core/panewatch.py); windows,
  sessions and clients that come or go are notifications of their own. Nothing is asked of
  tmux while nothing changes.
- On news: one look (`list-panes -a` of the agents' panes, after clearing the activity flags
  the last look saw), compared with the last: the changed panes' status pipeline runs, with a
  capture of those panes' screens where their status needs one; the changes are recorded with
  their events (store/events.py), and the service's event thread is woken (`news`). While a
  look saw a window's flag up, another follows (it re-arms that window's hook). Looks are
  budgeted: three at once after a quiet spell, then one a second.
- Bells: tmux's alert-bell hook counts them per window (`@roost_bell`); each new one is a `bell`
  event of its agent. Exits: tmux's pane-died hook (`roost _supervise`, as without the service)
  also pokes this client at once (core/panewatch.py's POKE), so a death is judged within
  milliseconds; a look's `pane_dead` stays the fallback.
- Hook logs: every HOOKS seconds, a stat() of each live Claude agent's hook log and each live
  Codex or Gemini agent's CLI event log (their notify program, their hooks); one that grew
  runs the pipeline for that agent (a Stop or a Notification changes nothing on the screen),
  and a CLI event log's new lines are `hook` events.
- Statuses that change with time alone (a start's grace running out, a pattern-less screen
  still for QUIET seconds: core/status.py settles_at): each such pane is refreshed when that
  moment comes (Settling), since no event will say so.
- A full refresh at start (what changed while no service ran) and every FULL seconds as a
  safety net.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Collection, Mapping

from roost.core import observation, panewatch
from roost.core.pane import agent_panes
from roost.core.service import SESSION
from roost.ops import learn, observe
from roost.ops.context import App
from roost.ops.service import Component, Stop, news, say
from roost.providers import hooks, traits
from roost.store import service as rows
from roost.store import status as listing
from roost.tmux.client import Tmux
from roost.tmux.control import ControlClient
from roost.tmux.protocol import TmuxError

FULL = 120.0  # seconds between two safety-net refreshes of every agent
HOOKS = 0.3  # seconds between two looks at the hook logs' sizes (a stat each: microseconds)
RECONNECT = 1.0  # seconds before a lost control client is attached again
RATE, BURST = 1.0, 3.0  # looks a second, and in a burst after a quiet spell (Budget)


def start(app: App) -> Stop:
    stopping = threading.Event()
    holder: list[ControlClient] = []
    thread = threading.Thread(
        target=_guarded, args=(app.environ, stopping, holder), name="monitor", daemon=True
    )
    thread.start()

    def stop() -> None:
        stopping.set()
        for client in holder:
            client.close()
        thread.join(5)

    return stop


def _guarded(
    environ: dict[str, str], stopping: threading.Event, holder: list[ControlClient]
) -> None:
    from roost.ops.root import open_app

    app = open_app(dict(environ))  # this thread's own store connection
    try:
        watch(app, stopping, holder)
    finally:
        app.close()


def watch(app: App, stopping: threading.Event, holder: list[ControlClient]) -> None:
    """Attach, subscribe, act on each report; attach again when the client is lost."""
    tmux = app.tmux
    if not isinstance(tmux, Tmux):
        return
    setup: list[str] = []
    for words in panewatch.SETUP:
        setup += [*words, ";"]
    tmux.run(*setup[:-1])
    logs = HookLogs(app)  # across reattachments: no line recorded twice, none lost between
    while not stopping.is_set():
        client = ControlClient(tmux, SESSION)
        holder[:] = [client]
        reports: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read, args=(client, reports), daemon=True).start()
        _follow(app, tmux, client, reports, stopping, logs)
        client.close()
        stopping.wait(RECONNECT)


DIED = "died"  # on the report queue: tmux's pane-died hook poked
LOOK = "look"  # on the report queue: news (a hook's signal or count, a window came or went)


def _read(client: ControlClient, reports: queue.Queue[str | None]) -> None:
    """tmux's lines to the queue: subscribe and wait for news once attached, pass on news and
    pokes, None at the end. Each wake-up waits again at once: a signal needs a hook to run
    again, which needs a look's clear, so this never spins."""
    for line in client.lines():
        kind, _, _ = panewatch.notification(line)
        if kind == "session-changed":
            client.send("refresh-client", "-B", panewatch.SUBSCRIPTION)
            _wait(client)
        elif line == panewatch.WOKEN:
            reports.put(LOOK)
            _wait(client)
        elif kind == "subscription-changed" or kind in panewatch.NOTIFICATIONS:
            reports.put(LOOK)
        elif kind == panewatch.POKE:
            reports.put(DIED)
        elif kind == "exit":
            break
    reports.put(None)


def _wait(client: ControlClient) -> None:
    """The client waits on the news channel; its next command runs only after a signal."""
    for words in panewatch.WAIT:
        client.send(*words)


def _follow(
    app: App,
    tmux: Tmux,
    client: ControlClient,
    reports: queue.Queue[str | None],
    stopping: threading.Event,
    logs: HookLogs,
) -> None:
    before: dict[str, panewatch.PaneState] | None = None
    last = panewatch.Look({}, frozenset(), frozenset(), frozenset(), False)
    full_at = app.clock.monotonic() + FULL
    looks = Budget(app.clock.monotonic())
    settling = Settling()
    news = False  # news not looked at yet
    while not stopping.is_set():
        # A look is due for news, for sessions to arm, for flags to clear (which re-arms their
        # windows' hook), as the budget allows: a change after a quiet spell, and the next
        # one a moment later (a prompt typed, then its Enter), are looked at at once; a window
        # streaming output costs a look a second.
        due = news or bool(last.unarmed or last.flagged or last.loud)
        wait = min(HOOKS, looks.wait(app.clock.monotonic())) if due else HOOKS
        try:
            item = reports.get(timeout=wait)
        except queue.Empty:
            item = ""  # nothing from tmux: the hook logs, the safety net, a look when due
        if item is None:
            return  # the client is gone: attach again
        if item == DIED:
            before = _died(app, before, settling)
        news = news or item == LOOK
        if (news or last.unarmed or last.flagged or last.loud) and looks.take(
            app.clock.monotonic()
        ):
            look = _look(tmux, last)
            news = look is None  # a failed look: its news waits for the next
            if look is not None:
                if look.attached != last.attached:
                    _hear_attached(tmux, client, look.attached)
                last = look
                before = _compare(app, before, look.panes, logs, settling)
        grown = logs.grown() | set(settling.due(app.clock.now().timestamp()))
        if grown:
            _refresh(app, grown, settling)
        if app.clock.monotonic() >= full_at:
            _refresh(app, None, settling)  # the safety net
            logs.look_up()  # an agent stored after its pane was first reported
            full_at = app.clock.monotonic() + FULL


class Budget:
    """How many looks may be taken now: BURST after a quiet spell, then RATE a second (a token
    bucket).

    >>> b = Budget(0.0)
    >>> [b.take(0.0) for _ in range(4)], b.wait(0.0)
    ([True, True, True, False], 1.0)
    >>> b.take(1.0), b.take(1.0), b.wait(1.5)
    (True, False, 0.5)
    """

    def __init__(self, now: float) -> None:
        self.tokens, self.at = BURST, now

    def _fill(self, now: float) -> None:
        self.tokens, self.at = min(BURST, self.tokens + (now - self.at) * RATE), now

    def take(self, now: float) -> bool:
        """Take one look if there is one."""
        self._fill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def wait(self, now: float) -> float:
        """Seconds until a look may be taken."""
        self._fill(now)
        return max(0.0, (1 - self.tokens) / RATE)


def _hear_attached(tmux: Tmux, client: ControlClient, on: bool) -> None:
    """Subscribe to the attached sessions' panes while there are any (their activity runs no
    hook); unsubscribe when there are none (a name alone removes a subscription). The client
    is waiting on the news channel: signalled first, so the change is made now (the wake-up
    costs one look more)."""
    spec = f"{panewatch.ATTACHED}::{panewatch.ATTACHED_FORMAT}" if on else panewatch.ATTACHED
    client.send("refresh-client", "-B", spec)
    try:
        tmux.run("wait-for", "-S", panewatch.CHANNEL)
    except (TmuxError, OSError) as exc:
        say(f"monitor: news channel not signalled: {exc}")


def _look(tmux: Tmux, last: panewatch.Look) -> panewatch.Look | None:
    """Clear the flags and arm the sessions the last look saw, list the agents' panes (one
    tmux call); None when tmux failed."""
    try:
        return panewatch.parse(
            tmux.run(*panewatch.look_argv(last.flagged, last.unarmed, last.loud))
        )
    except (TmuxError, OSError) as exc:
        if not (last.flagged or last.unarmed or last.loud):
            say(f"monitor: look failed: {exc}")
            return None
    # A session the last look named is gone (tmux drops the rest of a command list after a
    # failed command): list alone; the next look clears and arms what this one sees.
    try:
        return panewatch.parse(tmux.run(*panewatch.look_argv([], [])))
    except (TmuxError, OSError) as exc:
        say(f"monitor: look failed: {exc}")
        return None


def _compare(
    app: App,
    before: dict[str, panewatch.PaneState] | None,
    now: dict[str, panewatch.PaneState],
    logs: HookLogs,
    settling: Settling,
) -> dict[str, panewatch.PaneState]:
    """Act on what changed since the last look; the new last look."""
    changes = panewatch.diff(before, now)
    if before is None:  # (re)attached: whatever changed while nobody listened, every agent
        _listening(app, sorted(now))
        _refresh(app, None, settling)
    elif changes:
        _heard(app, changes)
        _bells(app, changes.bells)
        _refresh(app, None if changes.gone else changes.changed, settling)
    if panewatch.came_or_went(before, now):
        logs.look_up()  # agents came or went: which hook logs to watch
    return now


def _died(
    app: App, known: dict[str, panewatch.PaneState] | None, settling: Settling
) -> dict[str, panewatch.PaneState] | None:
    """A pane died (the hook's poke): the status pipeline for the panes that died since the
    last report, now rather than at the subscription's next check; what the monitor knows."""
    try:
        dead = [p.pane_id for p in app.tmux.list_panes() if p.dead]
    except (TmuxError, OSError) as exc:
        say(f"monitor: list-panes failed: {exc}")
        return known
    fresh = panewatch.newly_dead(known, dead)
    if fresh:
        _refresh(app, fresh, settling)
    return None if known is None else panewatch.with_dead(known, fresh)


class HookLogs:
    """The logs by which live agents' CLIs report events, by their agent's pane, with the size
    each had at the last look: one stat() each per look, no read while nothing grew. Claude's
    hook log (providers/hooks.py), whose lines the status pipeline reads; the CLI event log of
    Codex (its notify program) and Gemini (its hooks), whose new lines are also recorded as
    `hook` events here (their status comes from the screen, which may show nothing new)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.sizes: dict[str, tuple[str, int]] = {}  # path -> (pane id, size)
        self.recorded: dict[str, str] = {}  # path of a CLI event log -> its agent's id
        self.since = _run_start(app)  # a CLI event log's lines from before: not this run's news

    def look_up(self) -> None:
        """Which logs to watch: the live reporting agents' now (a store read and one
        list-panes)."""
        try:
            seen = observation.join(
                listing.records(self.app.store.conn, details=False), self.app.tmux.list_panes()
            )
        except (TmuxError, OSError) as exc:
            say(f"monitor: hook logs not looked up: {exc}")
            return
        home = str(self.app.paths.home)
        watched: dict[str, str] = {}
        self.recorded = {}
        for o in seen:
            reports = traits.of(o.agent.provider).hooks
            path = hooks.watched_log(home, o.agent.id, o.agent.provider, reports)
            if o.alive and o.pane is not None and path is not None:
                watched[path] = o.pane.pane_id
                if not reports:
                    self.recorded[path] = o.agent.id
        # A log new to the watch counts as grown at the next look: a line written between the
        # refresh that saw its agent come and this look up is not missed.
        self.sizes = {
            path: (pane, self.sizes.get(path, (pane, UNSEEN))[1]) for path, pane in watched.items()
        }

    def grown(self) -> frozenset[str]:
        """The panes whose agent's log changed size since the last look; the new lines of a
        CLI event log are recorded."""
        found = set()
        for path, (pane, size) in self.sizes.items():
            now = _size(path)
            if now != size:
                self.sizes[path] = (pane, now)
                found.add(pane)
                if path in self.recorded:
                    self._record(self.recorded[path], path, max(size, 0))
        return frozenset(found)

    def _record(self, agent_id: str, path: str, offset: int) -> None:
        """A `hook` event for each line of the agent's current launch past `offset`."""
        agent = self.app.store.get_by_id(agent_id)
        if agent is None:
            return
        lines, _ = hooks.read_since(path, offset, learn.launch_token(self.app, agent_id))
        lines = [line for line in lines if line[0] >= self.since]
        for _, event, payload in lines:
            self.app.store.log(agent, "hook", event=event, **hooks.brief(payload))
        if lines:
            news()


UNSEEN = -2  # a log's size before the watch first looked at it


def _run_start(app: App) -> float:
    """When this service's run began, in whole seconds as cli_hook.sh stamps its lines: a line
    written while the service started (before the monitor first looked at its log) is news; a
    line a run before this one recorded is not (a restart repeats none)."""
    from datetime import datetime

    run = rows.last_run(app.store.conn)
    started = datetime.fromisoformat(run[3]).timestamp() if run is not None else 0.0
    return float(int(started))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1  # not written yet


def _refresh(app: App, only: Collection[str] | None, settling: Settling) -> None:
    """The status pipeline for the panes that changed (all with None); the event thread is
    woken; when each pane's status may change with time alone, noted. A failure is logged, and
    the next report tries again."""
    now = app.clock.now().timestamp()
    try:
        seen = observe.refresh(app, only)  # every agent, judged or as stored
        settling.note(observe.settling(seen, now), only)
    except (TmuxError, OSError) as exc:
        say(f"monitor: refresh failed: {exc}")
    news()


class Settling:
    """The panes whose status may change with time alone (a start's grace, a still screen), by
    when: each is refreshed then, as no event will say so."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def note(self, found: Mapping[str, float], judged: Collection[str] | None) -> None:
        """What a refresh found for the panes it judged (all with None); the others keep
        their moment, as their stored status is older than this refresh.

        >>> s = Settling()
        >>> s.note({"%1": 5.0, "%2": 6.0}, None); s.note({"%2": 9.0, "%3": 7.0}, ["%3"])
        >>> sorted(s.at.items())
        [('%1', 5.0), ('%2', 6.0), ('%3', 7.0)]
        >>> s.note({}, ["%1"]); s.due(6.5), sorted(s.at)
        (['%2'], ['%3'])
        """
        if judged is None:
            self.at = dict(found)
            return
        kept = {p: at for p, at in self.at.items() if p not in judged}
        self.at = kept | {p: at for p, at in found.items() if p in judged}

    def due(self, now: float) -> list[str]:
        """The panes due now, no longer noted (their refresh notes them again if need be)."""
        found = sorted(p for p, at in self.at.items() if at <= now)
        for pane in found:
            del self.at[pane]
        return found


def _heard(app: App, changes: panewatch.Changes) -> None:
    """Note which panes changed (what a TUI's previews recapture, and its cue to look)."""
    at = app.clock.now().isoformat(timespec="milliseconds")
    with app.store.write() as c:
        rows.heard(c, sorted(changes.changed), at)
        rows.forget_panes(c, sorted(changes.gone))


def _listening(app: App, panes: list[str]) -> None:
    """The first report since attaching: every pane counts as heard now (a TUI's previews
    recapture what moved while nobody listened, and anyone can tell the monitor listens)."""
    at = app.clock.now().isoformat(timespec="milliseconds")
    with app.store.write() as c:
        rows.heard(c, panes, at)


def _bells(app: App, rung: Mapping[str, int]) -> None:
    """A `bell` event for each agent whose window rang."""
    if not rung:
        return
    by_pane = {p.pane_id: a for a, p in agent_panes(app.tmux.list_panes()).items()}
    for pane_id, count in rung.items():
        agent = app.store.get_by_id(by_pane[pane_id]) if pane_id in by_pane else None
        if agent is not None:
            app.store.log(agent, "bell", count=count)


COMPONENT = Component(name="monitor", start=start)
