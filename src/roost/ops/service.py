"""The roost service: one long-lived roost process inside roost's own tmux server, in a hidden
session of its own (core/service.py's SESSION), that pushes what changed instead of anyone
polling. Every CLI command works without it; it only makes things arrive sooner.

Interface (stable; extend, don't rename):

- `ensure_running(app) -> ServiceStatus`: the service, started on demand when it is not running
  (and wanted); returns its status (running, pid, pane, since, what it serves). Never raises for
  a service that will not start: the status says why (`note`), and the caller falls back to
  doing the work itself.
- `status(app)`, `stop(app)`, `start(app)` (= ensure_running, and it clears a `stop`).
- `run(app)`: the service's main (`roost service run`, the process in the hidden pane).
- Components: `COMPONENTS` lists "module:attribute" strings naming `Component`s, imported by the
  service's main only (so `roost ls` never loads them). A component has
  - `name`: unique, stable (its cursor in the store is keyed by it);
  - `start(app) -> stop`: called once in a thread of its own with an App of its own (its own
    store connection); it sets up (e.g. starts its own threads or a server) and returns a
    callable that stops it, which the service calls at shutdown, in reverse order;
  - `on_events(app, events)`: called on the service's event thread with each batch of new rows
    of the event log (store/events.py `after`: dicts with `seq`, `agent_id`, `agent`, `at`,
    `kind` and the details), in sequence order, at least once: the component's cursor
    (store/service.py) moves past a batch after the call returns (or raises: a failure is
    logged, never retried forever). A component's first run starts at the log's end.
  Either may be None. A component that writes events calls `news()` so the event thread wakes
  at once rather than at its next check (0.25 s).
- `on_died(app, pane)`: the service's pane died (tmux's pane-died hook, via ops/supervise.py):
  record it, and restart it after a backoff unless `roost service stop` asked for it.

State: none of its own outside the store (store/service.py: runs, intent, cursors; the event
log). Its death (even kill -9) harms no agent: they live in their own sessions, and every
component resumes from its cursor.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roost.core.pane import Pane
from roost.core.service import SESSION, ServiceStatus, restart_delay
from roost.ops.context import IN_SUPERVISOR, App
from roost.store import events as event_log
from roost.store import service as rows
from roost.tmux import service as session
from roost.tmux.client import Tmux
from roost.tmux.protocol import DuplicateSession, TmuxError

Event = dict[str, Any]
Stop = Callable[[], None]

# The components the service runs ("module:attribute"). Append yours.
COMPONENTS: list[str] = [
    "roost.ops.readers:COMPONENT",  # first: readers hear of a batch before the slower work on it
    "roost.ops.monitor:COMPONENT",
    "roost.mcp.component:COMPONENT",  # the shared MCP endpoint (branch mcphttp)
    "roost.ops.alerts:COMPONENT",  # notifications to the person (issue 21 part 4)
    "roost.ops.resume:COMPONENT",  # resume at a usage limit's reset (issue 23 part 2)
    "roost.ops.budget:COMPONENT",  # budgets at each turn's end (issue 23 part 5, branch usage)
    "roost.ops.held:COMPONENT",  # texts held behind an agent's question (issue 34)
    "roost.web.component:COMPONENT",  # roost web, when [web] enabled = true (issue 25)
    "roost.ops.hostchildren:COMPONENT",  # children on hosts: their turns' ends (issue 24 part 4)
]
START_TIMEOUT = 30.0  # seconds a start may take to register its run (a loaded machine)
LAUNCH_WAIT = 10.0  # seconds a launch waits for it (then its agent gets `roost mcp` instead)
CHECK = 0.25  # seconds between two looks at the log when no component said there is news
BATCH = 500  # events per on_events call


@dataclass(frozen=True)
class Component:
    name: str
    start: Callable[[App], Stop] | None = None
    on_events: Callable[[App, list[Event]], None] | None = None


_news = threading.Event()


def news() -> None:
    """Wake the service's event thread: something was just written to the event log."""
    _news.set()


# ---- status, start, stop (any roost command) ---------------------------------------------
def _real(app: App) -> Tmux | None:
    """The real tmux client; None under the fake (tests of ops), where no service runs."""
    return app.tmux if isinstance(app.tmux, Tmux) else None


def _pane(app: App) -> Pane | None:
    return next((p for p in app.tmux.list_panes() if p.session_name == SESSION), None)


def status(app: App) -> ServiceStatus:
    """Running when its pane lives and runs the process that registered the newest run."""
    if _real(app) is None:
        return ServiceStatus(False, note="no service under this tmux client")
    pane = _pane(app)
    run = rows.last_run(app.store.conn)
    if pane is None:
        return ServiceStatus(False, note="not started")
    if pane.dead:
        return ServiceStatus(False, pane_id=pane.pane_id, note=f"exited ({pane.dead_status})")
    if run is None or run[1] != pane.pid or run[5] is not None:
        return ServiceStatus(False, pid=pane.pid, pane_id=pane.pane_id, note="starting")
    return ServiceStatus(True, pid=run[1], pane_id=run[2], since=run[3], serves=tuple(run[4]))


def alive(app: App) -> bool:
    """Whether the service's newest run is open and its process exists: a cheap look (no
    tmux call) for readers that look often (the TUI); status() is the careful one."""
    run = rows.last_run(app.store.conn)
    if run is None or run[5] is not None:
        return False
    return app.procs.exists(run[1])


# "0": nothing starts the service by itself (a launch, watch, the TUI); `roost service start`
# and `roost restore` still do. For a shell, a script or a CI job that wants no process left
# behind; every command works without the service.
NO_AUTOSTART = "ROOST_SERVICE_AUTOSTART"


def ensure_running(app: App, timeout: float = START_TIMEOUT, force: bool = False) -> ServiceStatus:
    """The service's status, after starting it if it was not running (see the module's doc).
    A service the user stopped (`roost service stop`) stays stopped unless `force` (`roost
    service start`, `roost restore`). `timeout` 0: launch it and do not wait for it."""
    tmux = _real(app)
    if tmux is None:
        return status(app)
    try:
        found = status(app)
        if found.running:
            return found
        if force:
            with app.store.write() as c:
                rows.set_wanted(c, True)
        elif not rows.wanted(app.store.conn):
            return ServiceStatus(False, note="stopped (roost service start starts it)")
        elif app.environ.get(NO_AUTOSTART) == "0":
            return ServiceStatus(False, note=f"{NO_AUTOSTART}=0 (roost service start starts it)")
        _launch(app, tmux)
        deadline = app.clock.monotonic() + timeout
        while not found.running and app.clock.monotonic() < deadline:
            app.clock.sleep(0.05)
            found = status(app)
        return found
    except TmuxError as exc:
        return ServiceStatus(False, note=str(exc))


def start(app: App) -> ServiceStatus:
    return ensure_running(app, force=True)


def _launch(app: App, tmux: Tmux) -> None:
    """Make the session, or start its dead pane again; one being made by another roost is
    left to it."""
    pane = _pane(app)
    if pane is not None:
        if pane.dead:
            session.respawn(tmux, pane.pane_id)
        return
    try:
        session.create(tmux, argv(), _environment(app))
    except DuplicateSession:
        pass  # another roost made it meanwhile: status() waits for its run


def argv() -> list[str]:
    """`roost service run` with this interpreter (-P: never import from the working folder)."""
    return [sys.executable, "-P", "-m", "roost", "service", "run"]


def _environment(app: App) -> dict[str, str]:
    """What the service needs to find the same roost: its home, socket and tmux folder. It is
    started by tmux, as the supervisor is: its wakes (a notice, a resume at a limit's reset, the
    web's buttons) start an agent with the environment of its last start, not the service's."""
    env = {
        "ROOST_HOME": str(app.paths.home),
        "ROOST_TMUX_SOCKET": app.tmux.socket,
        IN_SUPERVISOR: "1",
    }
    # TZ: a limit's reset read in the launcher's zone, and `roost ls` answered for it (its
    # ident); ROOST_SSH_COMMAND: hosts' children
    for key in ("TMUX_TMPDIR", "PATH", "TZ", "ROOST_SSH_COMMAND"):
        if app.environ.get(key):
            env[key] = app.environ[key]
    return env


def stop(app: App, timeout: float = 5.0) -> ServiceStatus:
    """Stop the service and keep it stopped until a start: TERM first (its components stop
    cleanly and its run is closed), then its session goes."""
    tmux = _real(app)
    with app.store.write() as c:
        rows.set_wanted(c, False)
    if tmux is None:
        return status(app)
    pane = _pane(app)
    if pane is not None and not pane.dead and pane.pid:
        app.procs.terminate(pane.pid)
        deadline = app.clock.monotonic() + timeout
        while app.clock.monotonic() < deadline and (p := _pane(app)) is not None and not p.dead:
            app.clock.sleep(0.05)
    session.kill(tmux)
    return status(app)


# ---- supervision (tmux's pane-died hook) ---------------------------------------------------
def on_died(app: App, pane: Pane) -> str:
    """The service's pane died: close its run, and restart it after the backoff (1, 2, 4 s...)
    unless it was stopped, or crashes in a loop. What happened, as a word."""
    tmux = _real(app)
    now = app.clock.now()
    earlier = [datetime.fromisoformat(at) for at in rows.deaths(app.store.conn)]
    run = rows.last_run(app.store.conn)
    with app.store.write() as c:
        if run is not None and run[5] is None:
            rows.end_run(c, run[1], now.isoformat(timespec="milliseconds"), pane.dead_status)
    if tmux is None or not rows.wanted(app.store.conn):
        return "stopped"
    delay = restart_delay(earlier, now)
    if delay is None:
        say(f"the service crashed {len(earlier) + 1} times in a row; left stopped")
        return "failed"
    app.clock.sleep(delay)
    again = _pane(app)
    if again is None or not again.dead or not rows.wanted(app.store.conn):
        return "left"  # stopped, or started by someone else meanwhile
    session.respawn(tmux, again.pane_id)
    return "restarted"


# ---- the service's main (`roost service run`) ----------------------------------------------
def components() -> list[Component]:
    found = []
    for spec in COMPONENTS:
        module, _, attribute = spec.partition(":")
        found.append(getattr(importlib.import_module(module), attribute))
    return found


def run(app: App, opener: Callable[[], App]) -> int:
    """Run the components until TERM, INT or HUP; `opener` gives each thread an App of its own
    (SQLite connections stay in their thread). Exit status 0 after a clean stop."""
    comps = components()
    pid = os.getpid()
    with app.store.write() as c:
        rows.begin_run(
            c, pid, os.environ.get("TMUX_PANE", ""), _stamp(app), [x.name for x in comps]
        )
    stopping = threading.Event()

    def on_signal(*_: object) -> None:
        stopping.set()
        news()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    stops: list[tuple[str, Stop]] = []
    for comp in comps:
        if comp.start is not None:
            threading.Thread(
                target=_start_one, args=(comp, opener, stops), name=comp.name, daemon=True
            ).start()
    try:
        while not stopping.is_set():
            dispatch(app, comps)
            _news.wait(CHECK)
            _news.clear()
    finally:
        for name, stop_one in reversed(stops):
            with _logged(f"stopping {name}"):
                stop_one()
        with app.store.write() as c:
            rows.end_run(c, pid, _stamp(app), 0)
    return 0


def _start_one(comp: Component, opener: Callable[[], App], stops: list[tuple[str, Stop]]) -> None:
    assert comp.start is not None
    with _logged(f"starting {comp.name}"):
        stops.append((comp.name, comp.start(opener())))


def dispatch(app: App, comps: list[Component]) -> int:
    """Hand each component with `on_events` the events after its cursor, in order; how many
    were handed in all."""
    handed = 0
    last = event_log.last_id(app.store.conn)
    for comp in comps:
        if comp.on_events is None:
            continue
        seq = rows.cursor(app.store.conn, comp.name)
        if seq is None:  # its first run: from now on
            with app.store.write() as c:
                rows.set_cursor(c, comp.name, last)
            continue
        while seq < last:
            batch = event_log.after(app.store.conn, seq, BATCH)
            if not batch:
                break
            with _logged(f"{comp.name} on events {batch[0]['seq']}..{batch[-1]['seq']}"):
                comp.on_events(app, batch)
            seq = int(batch[-1]["seq"])
            with app.store.write() as c:
                rows.set_cursor(c, comp.name, seq)
            handed += len(batch)
    return handed


def _stamp(app: App) -> str:
    return app.clock.now().isoformat(timespec="milliseconds")


@contextlib.contextmanager
def _logged(what: str) -> Iterator[None]:
    """A component's failure is the service's log line (its pane), never its death."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - one component must not stop the others
        say(f"{what} failed: {type(exc).__name__}: {exc}")


def in_thread(app: App, name: str, work: Callable[[App], None], ending: Callable[[], None]) -> Stop:
    """A component's own thread: `work` runs there on a store connection of its own (SQLite
    connections stay in their thread; the service's is closed here) until `ending`, which the
    returned stop calls, makes it return."""
    app.close()

    def run() -> None:
        mine = app.with_own_store()
        try:
            work(mine)
        finally:
            mine.close()

    thread = threading.Thread(target=run, name=f"roost-{name}", daemon=True)
    thread.start()

    def stop() -> None:
        ending()
        thread.join(5)

    return stop


def say(text: str) -> None:
    sys.stderr.write(f"roost service: {text}\n")
    sys.stderr.flush()
