"""The roost service: one long-lived roost process inside roost's own tmux server, in a hidden
session of its own (core/service.py's SESSION), that pushes what changed instead of anyone
polling: the runtime. Every command that starts or changes agents makes sure it runs first
(`runtime`); one that cannot start it still works on what it can, and says so once.

Interface (stable; extend, don't rename):

- `ensure_running(app) -> ServiceStatus`: the service, started on demand when it is not running
  (and wanted); returns its status (running, pid, pane, since, what it serves). Never raises for
  a service that will not start: the status says why (`note`), and the caller falls back to
  doing the work itself.
- `status(app, probe=False)`, `stop(app)`, `start(app)` (= ensure_running, and it clears a
  `stop`; it waits for the components' starts).
- `run`: the service's main lives in the room above (roost/service/main.py, `roost service
  run`), which imports the components (roost/service/components.py); this module is the
  control half every command uses, and what a component is:
- `Component`:
  - `name`: unique, stable (its cursor in the store is keyed by it);
  - `start(app) -> stop`: called once in a thread of its own with an App of its own (its own
    store connection); it sets up (e.g. starts its own threads or a server) and returns a
    callable that stops it, which the service calls at shutdown, in reverse order; or a
    `Serving` (that stop, and where it serves: status shows it); or None when it has nothing
    to serve here (status says `off`). A start that raises is `failed`, with its error;
  - `on_events(app, events)`: called on the service's event thread with each batch of new rows
    of the event log (store/events.py `after`: core/events.Event records), in sequence
    order, at least once: the component's cursor (store/service.py) moves past a batch after
    the call returns (or raises: a failure is logged, never retried forever). A component's
    first run starts at the log's end;
  - `on_status(app, changes)`: the same batches' status changes, typed
    (store/events.StatusChange): a component that reacts to the status pipeline (budgets at a
    turn's end, held messages) subscribes here rather than filtering events by their kind;
  - `on_settings(app)`: config.toml changed and reads valid.
  Any may be None. A component that writes events calls `news()` so the event thread wakes
  at once rather than at its next check (0.25 s).
- `on_died(app, pane)`: the service's pane died (tmux's pane-died hook, via ops/supervise.py):
  record it, and restart it after a backoff unless `roost service stop` asked for it.

State: none of its own outside the store (store/service.py: runs, each component's state in
the newest run, intent, cursors; the event log) but its lock. Its death (even kill -9) harms
no agent: they live in their own sessions, and every component resumes from its cursor.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from roost.core.events import Event
from roost.core.pane import Pane
from roost.core.service import (
    FAILED,
    SERVING,
    SESSION,
    STARTING,
    Part,
    ServiceStatus,
    restart_delay,
)
from roost.ops.context import IN_SUPERVISOR, App
from roost.store import service as rows
from roost.store.events import StatusChange
from roost.system import servicesock
from roost.tmux import service as session
from roost.tmux.client import Tmux
from roost.tmux.protocol import DuplicateSession, TmuxError

Stop = Callable[[], None]

START_TIMEOUT = 30.0  # seconds a start may take to register its run (a loaded machine)
LAUNCH_WAIT = 10.0  # seconds a launch waits for it (then its agent gets `roost mcp` instead)
SETTLE = 15.0  # seconds `roost service start` waits for the components' starts


@dataclass(frozen=True)
class Serving:
    """What a component's start may return: its stop, and where it serves (status shows it)."""

    stop: Stop
    address: str | None = None


@dataclass(frozen=True)
class Component:
    name: str
    start: Callable[[App], Stop | Serving | None] | None = None
    on_events: Callable[[App, list[Event]], None] | None = None
    # The status changes among each batch (store/events.StatusChange), parsed once: what a
    # component that reacts to the status pipeline subscribes to. The event log is the one
    # record of a change whichever process stored it (ops/root.py: the in-transaction ones).
    on_status: Callable[[App, Sequence[StatusChange]], None] | None = None
    # config.toml changed while the service runs and reads valid (issue 36 point 5): called on
    # the event thread with its App, whose settings are the new ones
    on_settings: Callable[[App], None] | None = None


_news = threading.Event()


def news() -> None:
    """Wake the service's event thread: something was just written to the event log."""
    _news.set()


def wait_for_news(timeout: float) -> None:
    """The service's event thread: until news() or `timeout` s, whichever comes first."""
    _news.wait(timeout)
    _news.clear()


# ---- status, start, stop (any roost command) ---------------------------------------------
def _real(app: App) -> Tmux | None:
    """The real tmux client; None under the fake (tests of ops), where no service runs."""
    return app.tmux if isinstance(app.tmux, Tmux) else None


def _pane(app: App) -> Pane | None:
    return next((p for p in app.tmux.list_panes() if p.session_name == SESSION), None)


def status(app: App, probe: bool = False) -> ServiceStatus:
    """Running when the newest run is open and its process lives (only the lock's holder can
    open one): its pane's, or one started by hand. It serves what its components' starts
    recorded; with `probe` (`roost service status`), what is looked at now too: the readers'
    socket is the service's own and answers, the endpoint's file still names its URL."""
    if _real(app) is None:
        return ServiceStatus(False, note="no service under this tmux client")
    pane = _pane(app)
    run = rows.last_run(app.store.conn)
    if run is not None and run[5] is None and _lives(app, run[1], pane):
        return _running(app, run, probe)
    if pane is None:
        return ServiceStatus(False, note="not started")
    if pane.dead:
        return ServiceStatus(False, pane_id=pane.pane_id, note=f"exited ({pane.dead_status})")
    return ServiceStatus(False, pid=pane.pid, pane_id=pane.pane_id, note="starting")


def _lives(app: App, pid: int, pane: Pane | None) -> bool:
    """Whether the run's process lives: its pane's (the usual case, no more asked), else a
    `roost service run` of this user (started by hand; never a program that reused the pid)."""
    if pane is not None and not pane.dead and pane.pid == pid:
        return True
    found = app.procs.runs_service(pid)
    return app.procs.exists(pid) if found is None else found


def _running(app: App, run: rows.Run, probe: bool) -> ServiceStatus:
    parts = tuple(Part(*row) for row in rows.parts(app.store.conn, run[0]))
    if probe:
        parts = tuple(_looked_at(app, part, run[1]) for part in parts)
    # a run by a roost from before parts were recorded: the names it was started with
    serves = tuple(p.name for p in parts if p.state == SERVING) if parts else tuple(run[4])
    endpoint = next((p.address for p in parts if p.name == "mcp" and p.state == SERVING), None)
    return ServiceStatus(
        True, run[1], run[2] or None, run[3], serves, endpoint=endpoint, parts=parts
    )


def _looked_at(app: App, part: Part, pid: int) -> Part:
    """A serving part as it is now: the readers' socket still the service's own (a symlink or
    another's socket in its place is not), the endpoint still the one its file names."""
    if part.state != SERVING or part.address is None:
        return part
    if part.name == "readers" and not servicesock.served_by(part.address, pid):
        return _lost(part, f"{part.address} is no longer its socket")
    if part.name == "mcp":
        from roost.ops import mcpendpoint

        if mcpendpoint.recorded(app.paths.home) != part.address:
            return _lost(part, f"{mcpendpoint.endpoint_file(app.paths.home)} no longer names it")
        if mcpendpoint.server(app.paths.home) != pid:  # its server released it (it failed)
            return _lost(part, f"{part.address} is no longer served by the service")
    return part


def _lost(part: Part, why: str) -> Part:
    return Part(part.name, FAILED, part.address, why, None)


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
        elif (why := _held_off(app)) is not None:
            return ServiceStatus(False, note=why)
        _launch(app, tmux)
        deadline = app.clock.monotonic() + timeout
        while not found.running and app.clock.monotonic() < deadline:
            app.clock.sleep(0.05)
            found = status(app)
        return found
    except TmuxError as exc:
        return ServiceStatus(False, note=f"{CANNOT_START}: {exc}")


CANNOT_START = "it cannot start"


def _held_off(app: App) -> str | None:
    """Why nothing may start the service by itself now (the person said so), or None."""
    if not rows.wanted(app.store.conn):
        return "stopped (roost service start starts it)"
    if app.environ.get(NO_AUTOSTART) == "0":
        return f"{NO_AUTOSTART}=0 (roost service start starts it)"
    return None


def runtime(app: App, force: bool = False) -> None:
    """Before a command starts or changes agents (issue 36: the service is the runtime): the
    service started in the background if it is not running and the person has not said
    otherwise (`roost service stop`, ROOST_SERVICE_AUTOSTART=0: then tmux is not even asked;
    `force`, `roost restore`: a stop cleared, started anyway); each launch waits for it
    itself. When tmux refuses its start the command goes on without it and says so once
    (`without`). A tmux that fails the look fails the command as it would have, with its one
    line: the command needs that tmux too."""
    tmux = _real(app)
    if tmux is None or (not force and app.environ.get(NO_AUTOSTART) == "0"):
        return
    if status(app).running:
        return
    if force:
        with app.store.write() as c:
            rows.set_wanted(c, True)
    elif _held_off(app) is not None:
        return
    try:
        _launch(app, tmux)
    except TmuxError as exc:
        without(f"{CANNOT_START}: {exc}")


# ---- working without it: said once a command ---------------------------------------------
class _Saying:
    """Where this command says that it works without the service, and whether it has."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tell: Callable[[str], None] | None = None
        self.said = False


_saying = _Saying()


def say_without(tell: Callable[[str], None] | None) -> None:
    """Where the command now beginning says, once, that it works without the service (the
    CLI: its stderr); None: nowhere (a long-lived process's launches, the service's own)."""
    with _saying.lock:
        _saying.tell, _saying.said = tell, False


def without(why: str) -> None:
    """Say that this command works without the service, and why: the first time only, however
    many of its launches (a restore's, in threads) find it missing."""
    with _saying.lock:
        tell, _saying.said = (None if _saying.said else _saying.tell), True
    if tell is not None:
        from roost.core import present

        tell(present.without_service(why))


def launched_without(app: App, found: ServiceStatus) -> None:
    """A launch found no endpoint of the service's to give its agent, which runs its own
    `roost mcp` instead (`found`: the service as the launch last saw it). Said once, unless
    nothing was to be expected: no real tmux, the person holds the service off."""
    if _real(app) is None:
        return
    if not found.running:
        if _held_off(app) is None:
            without(f"{found.note or 'not running'}; agents get their own roost mcp")
        return
    part = next((p for p in found.parts if p.name == "mcp"), None)
    if part is None:
        why = "its MCP endpoint off"
    elif part.state in (STARTING, SERVING):
        why = "its MCP endpoint not ready in time"
    else:
        why = f"its MCP endpoint {part.state}" + (f": {part.error}" if part.error else "")
    without(f"{why}; agents get their own roost mcp")


def before_serving(app: App, tell: Callable[[str], None]) -> None:
    """`runtime` for a server that starts and changes agents (`roost mcp`, `roost web`), said
    through `tell`; a tmux that fails this look fails none of its later calls, so it serves
    on. Its launches later are its clients', not this start's: they say nothing."""
    say_without(tell)
    try:
        runtime(app)
    except TmuxError:
        pass
    finally:
        say_without(None)


def start(app: App, timeout: float = SETTLE) -> ServiceStatus:
    """`roost service start`: ensure_running, a `stop` cleared, and what serves once each
    component's start has returned (or `timeout`), as looked at now."""
    found = ensure_running(app, force=True)
    deadline = app.clock.monotonic() + timeout
    while found.running and app.clock.monotonic() < deadline:
        if all(p.state != STARTING for p in found.parts):
            break
        app.clock.sleep(0.05)
        found = status(app)
    return status(app, probe=True) if found.running else found


def _launch(app: App, tmux: Tmux) -> None:
    """Make the session, or start its dead pane again; one being made or started again by
    another roost is left to it."""
    pane = _pane(app)
    if pane is not None:
        if pane.dead:
            with contextlib.suppress(TmuxError):  # started by another roost meanwhile
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
    cleanly and its run is closed), whether its pane's or one started by hand; then its
    session goes."""
    tmux = _real(app)
    with app.store.write() as c:
        rows.set_wanted(c, False)
    if tmux is None:
        return status(app)
    pane = _pane(app)
    found = status(app)
    targets = {found.pid} if found.running and found.pid else set()
    if pane is not None and not pane.dead and pane.pid:
        targets.add(pane.pid)
    for pid in targets:
        app.procs.terminate(pid)
    _wait_gone(app, targets, timeout)
    # one still busy (a long pass of a component) is killed: `stop` returns with no service
    # left, so a `start` after it never takes the going one for the running one (its death
    # harms nothing: every component resumes from its cursor)
    if any(app.procs.exists(p) for p in targets):
        for pid in targets:
            app.procs.kill(pid)
        _wait_gone(app, targets, 2.0)
    session.kill(tmux)
    return status(app)


def _wait_gone(app: App, pids: set[int], timeout: float) -> None:
    deadline = app.clock.monotonic() + timeout
    while app.clock.monotonic() < deadline and any(app.procs.exists(p) for p in pids):
        app.clock.sleep(0.05)


# ---- supervision (tmux's pane-died hook) ---------------------------------------------------
def on_died(app: App, pane: Pane) -> str:
    """The service's pane died: close its run, and restart it after the backoff (1, 2, 4 s...)
    unless it was stopped, or crashes in a loop. What happened, as a word."""
    tmux = _real(app)
    now = app.clock.now()
    earlier = [datetime.fromisoformat(at) for at in rows.deaths(app.store.conn)]
    run = rows.last_run(app.store.conn)
    with app.store.write() as c:
        # its own run only: one refused by the lock leaves the holder's open, and a pane started
        # again meanwhile runs the next run (which closed this one when it began)
        if run is not None and run[5] is None and pane.dead and pane.pid in (None, run[1]):
            rows.end_run(c, run[1], now.isoformat(timespec="milliseconds"), pane.dead_status)
    if tmux is None or not rows.wanted(app.store.conn):
        return "stopped"
    if status(app).running:
        return "left"  # another service holds the lock (one started by hand)
    delay = restart_delay(earlier, now)
    if delay is None:
        say(f"the service crashed {len(earlier) + 1} times in a row; left stopped")
        return "failed"
    app.clock.sleep(delay)
    again = _pane(app)
    if again is None or not again.dead or not rows.wanted(app.store.conn) or status(app).running:
        return "left"  # stopped, or started by someone else meanwhile
    try:
        session.respawn(tmux, again.pane_id)
    except TmuxError:
        return "left"  # started by a roost command between the look and the respawn
    return "restarted"


def in_thread(
    app: App,
    name: str,
    work: Callable[[App], None],
    ending: Callable[[], None],
    wait: float = 5.0,
) -> Stop:
    """A component's own thread: `work` runs there on a store connection of its own (SQLite
    connections stay in their thread; the service's is closed here) until `ending`, which the
    returned stop calls, makes it return (the stop waits for it up to `wait` seconds)."""
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
        thread.join(wait)

    return stop


def in_passes(
    app: App,
    name: str,
    one_pass: Callable[[App], object],
    every: float,
    wake: threading.Event | None = None,
    wait: float = 5.0,
) -> Stop:
    """A component whose work is a pass now and then, in its own thread (`in_thread`): a pass
    at once (what came while the service was down), then one whenever `wake` is set and at
    least every `every` seconds. Before each, config.toml is read again when it changed
    (context.reread_settings); a pass that fails is said, and the next one tries again."""
    from roost.ops.context import UNREAD, reread_settings

    stopping = threading.Event()
    woken = wake if wake is not None else threading.Event()

    def work(mine: App) -> None:
        seen: object = UNREAD
        while not stopping.is_set():
            woken.clear()
            try:
                seen = reread_settings(mine, seen, name)
                one_pass(mine)
            except Exception as exc:  # noqa: BLE001 - the service lives on; the next pass retries
                say(f"{name}: {type(exc).__name__}: {exc}")
            woken.wait(every)

    def ending() -> None:
        stopping.set()
        woken.set()

    return in_thread(app, name, work, ending, wait)


HOSTS_LOOK = 2.0  # seconds between two looks for the hosts a per-host component follows


def per_host(
    app: App,
    name: str,
    hosts_now: Callable[[App], list[str]],
    follow: Callable[[App, str, threading.Event], None],
) -> Stop:
    """A component that follows each host `hosts_now` names (asked every HOSTS_LOOK s) in a
    thread of its own with an App of its own (SQLite connections stay in their thread): the
    hosts' children (hosts/children) and the phones' pushes for hosts' agents (push/remote).
    `follow` returns when its host needs following no more; the next look starts it again."""
    from roost.ops.context import opener
    from roost.system import ssh

    open_mine = opener(app)
    app.close()
    stopping = threading.Event()
    followed: dict[str, threading.Thread] = {}

    def one(host: str) -> None:
        mine = open_mine()
        try:
            follow(mine, host, stopping)
        except Exception as exc:  # noqa: BLE001 - the service lives on; the next look retries
            say(f"{name} on {host}: {type(exc).__name__}: {exc}")
        finally:
            mine.close()

    def look() -> None:
        mine = open_mine()
        try:
            while not stopping.is_set():
                try:
                    found = hosts_now(mine)
                except Exception as exc:  # noqa: BLE001 - e.g. a busy store: the next look
                    say(f"{name}: {type(exc).__name__}: {exc}")
                    found = []
                for host in found:
                    if host not in followed or not followed[host].is_alive():
                        followed[host] = threading.Thread(
                            target=one, args=(host,), name=f"{name}-{host}", daemon=True
                        )
                        followed[host].start()
                stopping.wait(HOSTS_LOOK)
        finally:
            mine.close()

    looker = threading.Thread(target=look, name=name, daemon=True)
    looker.start()

    def stop() -> None:
        stopping.set()
        ssh.stop_streams()
        looker.join(timeout=5)
        for thread in followed.values():
            thread.join(timeout=5)
        # the hosts' masters end with the service after every component stopped (ops/reap)

    return stop


def say(text: str) -> None:
    sys.stderr.write(f"roost service: {text}\n")
    sys.stderr.flush()
