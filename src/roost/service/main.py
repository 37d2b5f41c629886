"""The roost service's main (`roost service run`, the process in its hidden pane): the
composition root of the runtime. It takes the home's lock, records its run, reaps what an
earlier one left, starts each component (roost/service/components.py) in a thread of its own,
and hands them the event log's new rows, config.toml's and tmux.conf's edits, until TERM, INT
or HUP. The control half (status, ensure_running, start, stop, on_died) is ops/service.py:
any roost command uses it without loading the components.

One per ROOST_HOME: `run/service.lock` (an flock, which the kernel releases when the process
dies, even by kill -9) is held for its life; a second run refuses before it changes anything,
and one started while the holder stops waits for it (HANDOVER).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence

from roost.core.errors import RoostError
from roost.core.events import EventKind
from roost.core.service import FAILED, OFF, SERVING, STARTING
from roost.ops import reap
from roost.ops.context import UNREAD, App, being_written, file_stamp, reread_settings
from roost.ops.service import Component, Serving, Stop, news, say, wait_for_news
from roost.service.components import COMPONENTS
from roost.store import events as event_log
from roost.store import service as rows
from roost.system import locks
from roost.tmux.client import USER_CONFIG

CHECK = 0.25  # seconds between two looks at the log when no component said there is news
BATCH = 500  # events per on_events call
LOCK = "service.lock"  # in run/: held by the one service of this ROOST_HOME
# seconds a new run waits for the lock of a service that is stopping (its run is closed, its
# components are stopping): tmux's server died, or `stop` then `start` in a row
HANDOVER = 20.0


def run(app: App, opener: Callable[[], App], comps: Sequence[Component] = COMPONENTS) -> int:
    """Run the components until TERM, INT or HUP; `opener` gives each thread an App of its own
    (SQLite connections stay in their thread). Exit status 0 after a clean stop. RoostError,
    before anything is started or written, when another service holds this home's lock."""
    held = _claim(app)
    try:
        return _run(app, opener, comps)
    finally:
        os.close(held)  # the kernel would release it at exit anyway (kill -9 too)


def _claim(app: App) -> int:
    """The service's lock; waited for while its holder is a service that is stopping (its run
    closed), refused at once while the holder's run is open."""
    path = app.paths.run / LOCK
    deadline = app.clock.monotonic() + HANDOVER
    while (held := locks.claim(path)) is None:
        pid = locks.claimant(path)
        if _runs_now(app, pid) or app.clock.monotonic() >= deadline:
            raise RoostError(
                f"another roost service runs for this home{f' (pid {pid})' if pid else ''}; "
                "not starting a second (roost service status tells what it serves)"
            )
        app.clock.sleep(0.1)
    return held


def _runs_now(app: App, pid: int | None) -> bool:
    run = rows.last_run(app.store.conn)
    return run is not None and run[5] is None and run[1] == pid


def _run(app: App, opener: Callable[[], App], comps: Sequence[Component]) -> int:
    pid = os.getpid()
    at = _stamp(app)
    previous = rows.last_run(app.store.conn)
    with app.store.write() as c:
        rows.end_stale_runs(c, at)
        run_id = rows.begin_run(
            c, pid, os.environ.get("TMUX_PANE", ""), at, [x.name for x in comps]
        )
        first = {x.name: STARTING if x.start is not None else SERVING for x in comps}
        rows.begin_parts(c, run_id, first, at)
    with _logged("reaping what an earlier run left"):  # before any component serves
        reap.at_start(app, previous)
    started: Started = queue.SimpleQueue()
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
                target=_start_one, args=(comp, opener, stops, started), name=comp.name, daemon=True
            ).start()
    seen: tuple[object, object] = (UNREAD, UNREAD)  # config.toml's, tmux.conf's
    try:
        while not stopping.is_set():
            _record_starts(app, run_id, started)
            seen = _settings(app, comps, seen)
            dispatch(app, comps, run_id)
            wait_for_news(CHECK)
    finally:
        # the run is over before its components stop (intent before effect): a launch meanwhile
        # starts the next service, which waits for this one's lock, rather than wiring its
        # agent to an endpoint that is closing
        with app.store.write() as c:
            rows.end_run(c, pid, _stamp(app), 0)
        for name, stop_one in reversed(stops):
            with _logged(f"stopping {name}"):
                stop_one()
        with _logged("reaping on the way out"):  # the tmux server gone: nothing starts it again
            reap.at_exit(app)
    return 0


def _settings(
    app: App, comps: Sequence[Component], seen: tuple[object, object]
) -> tuple[object, object]:
    """Read config.toml and tmux.conf again when either changed (a broken one keeps the last
    good settings and is said once), and tell the components that react to new settings."""
    was_config, was_tmux = seen
    config = reread_settings(
        app, was_config, "config", lambda problem: _file_read(app, CONFIG, problem)
    )
    if config != was_config and was_config is not UNREAD:
        for comp in comps:
            if comp.on_settings is not None:
                with _logged(f"{comp.name} on new settings"):
                    comp.on_settings(app)
    tmux_conf = file_stamp(str(app.paths.home / USER_CONFIG))
    if being_written(app, tmux_conf):
        tmux_conf = was_tmux  # read at a later pass, once still
    elif tmux_conf != was_tmux and was_tmux is not UNREAD:
        problems = app.tmux.apply_user_config()
        _file_read(app, USER_CONFIG, "; ".join(problems) if problems else None)
    return config, tmux_conf


CONFIG = "config.toml"


def _file_read(app: App, name: str, problem: str | None) -> None:
    """An edit of config.toml or tmux.conf, as the service read it: `config-refused` (its
    problem; the alerts say so on every channel) or `config-applied`. The file's name stands
    for the agent (no roost id looks like it): the events and the alert edge are roost's own."""
    kind: EventKind = "config-applied" if problem is None else "config-refused"
    detail = {} if problem is None else {"reason": problem}
    with app.store.write() as c:
        event_log.append(c, name, name, c.now_iso(), kind, detail)


# What each component's start came to: (name, state, address, error), for the event thread to
# record (the store connection it writes with is that thread's).
Started = queue.SimpleQueue[tuple[str, str, str | None, str | None]]


def _start_one(
    comp: Component, opener: Callable[[], App], stops: list[tuple[str, Stop]], started: Started
) -> None:
    assert comp.start is not None
    try:
        got = comp.start(opener())
    except Exception as exc:  # noqa: BLE001 - one component must not stop the others
        why = _failure(f"starting {comp.name}", exc)
        started.put((comp.name, FAILED, None, why))
    else:
        if got is None:
            started.put((comp.name, OFF, None, None))
        else:
            serving = got if isinstance(got, Serving) else Serving(got)
            stops.append((comp.name, serving.stop))
            started.put((comp.name, SERVING, serving.address, None))
    news()


def _record_starts(app: App, run_id: int, started: Started) -> None:
    while True:
        try:
            name, state, address, error = started.get_nowait()
        except queue.Empty:
            return
        with app.store.write() as c:
            rows.set_part(c, run_id, name, state, _stamp(app), address, error)


def dispatch(app: App, comps: Sequence[Component], run_id: int | None = None) -> int:
    """Hand each component with `on_events` the events after its cursor, in order, and one
    with `on_status` their status changes; how many were handed in all. A failure is said, and
    recorded as the component's last error in run `run_id`."""
    handed = 0
    last = event_log.last_id(app.store.conn)
    for comp in comps:
        if comp.on_events is None and comp.on_status is None:
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
            try:
                if comp.on_events is not None:
                    comp.on_events(app, batch)
                changes = event_log.status_changes(batch) if comp.on_status else []
                if changes and comp.on_status is not None:
                    comp.on_status(app, changes)
            except Exception as exc:  # noqa: BLE001 - logged, never retried forever
                why = _failure(f"{comp.name} on events {batch[0].seq}..{batch[-1].seq}", exc)
                if run_id is not None:
                    with app.store.write() as c:
                        rows.part_failed(c, run_id, comp.name, why, _stamp(app))
            seq = batch[-1].seq
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
        _failure(what, exc)


def _failure(what: str, exc: Exception) -> str:
    """Say a component's failure in the service's pane; the error, as status shows it."""
    why = f"{type(exc).__name__}: {exc}"
    say(f"{what} failed: {why}")
    return why
