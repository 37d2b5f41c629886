"""The context every operation gets: paths, store, tmux layer, config, caller's env, and the
world it acts in (clock and process table: the real ones unless a test injects its own)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.core.clock import Clock
from roost.core.processes import ProcessTable
from roost.core.settings import Settings
from roost.store.db import Store
from roost.system import config as cfg
from roost.system import handover
from roost.system.clock import SystemClock
from roost.system.locate import tmux_binary
from roost.system.procs import SystemProcesses
from roost.tmux.client import USER_CONFIG, Tmux
from roost.tmux.protocol import TmuxClient

if TYPE_CHECKING:
    from roost.core.observation import Observation
    from roost.store.db import Connection

# How a roost started by tmux says so: the keeper (keeper.sh) exports the first, the pane-died
# hook's command line (make_tmux) sets the second. Their wakes start an agent with the
# environment of its last start, not with their own (the tmux server's, which holds no secret).
IN_KEEPER, IN_SUPERVISOR = "ROOST_IN_KEEPER", "ROOST_IN_SUPERVISOR"


def started_by_tmux(environ: Mapping[str, str]) -> bool:
    """Whether this roost runs in a keeper or in the supervisor, not in a user's shell."""
    return bool(environ.get(IN_KEEPER) or environ.get(IN_SUPERVISOR))


@dataclass(frozen=True)
class OnStatus:
    """One reaction to the status changes the status pipeline stores (ops/observe.record): its
    one extension point. The reactions are assembled at the composition root (ops/root.py) and
    every App carries them, so observe imports none of them."""

    name: str
    # In the transaction that stores the changes, after them: the changes this writer stored
    # (never one another writer beat: its own writer reacted), their stamp, and what `read`
    # returned for them (None without one).
    recorded: Callable[[App, Connection, Sequence[Observation], str, Any], None]
    # Before that transaction: what `recorded` will need from files (a child's reply for its
    # parent's notice), read without holding the store's write lock.
    read: Callable[[App, Sequence[Observation]], Any] | None = None


@dataclass
class App:
    paths: cfg.Paths
    store: Store
    tmux: TmuxClient
    environ: dict[str, str]
    settings: Settings = field(default_factory=Settings)
    # The world (honcho's Env): operations read time, sleep and touch processes only here.
    clock: Clock = field(default_factory=SystemClock)
    procs: ProcessTable = field(default_factory=SystemProcesses)
    # What a recorded status change sets going (OnStatus): given, never defaulted, so an App
    # that forgot them cannot silently drop a parent's notice or a resume.
    on_status: tuple[OnStatus, ...] = field(kw_only=True)

    def __setattr__(self, name: str, value: Any) -> None:
        """One time for the operations and the store's stamps: the store takes the App's clock,
        also when a test swaps either."""
        super().__setattr__(name, value)
        if name in ("clock", "store") and {"clock", "store"} <= self.__dict__.keys():
            self.store.clock = self.clock

    def with_own_store(self) -> App:
        """This App on a store connection of its own (a worker thread's), in the same world:
        its clock, process table and tmux."""
        return dataclasses.replace(self, store=Store.open(self.paths.db, clock=self.clock))

    def close(self) -> None:
        self.store.close()


def make_tmux(paths: cfg.Paths, settings: Settings, environ: Mapping[str, str]) -> Tmux:
    """The one way roost builds its tmux client: the configured binary, roost's socket, and the
    pane-died hook that runs `roost _supervise`."""
    socket = cfg.socket_name()
    tmpdir = {"TMUX_TMPDIR": environ["TMUX_TMPDIR"]} if environ.get("TMUX_TMPDIR") else {}
    return Tmux(
        socket,
        binary=tmux_binary(settings.tmux.bin),
        environ=environ,
        user_config=str(paths.home / USER_CONFIG),
        # tmux runs this (through run-shell, so quoted) when a pane dies; no user text.
        # It marks itself: its wakes start agents with their own saved environment.
        # -P: never import from the working directory (the home's, a user's project).
        supervisor=f"{IN_SUPERVISOR}=1 {shlex.quote(sys.executable)} -P -m roost _supervise",
        supervisor_env={"ROOST_HOME": str(paths.home), "ROOST_TMUX_SOCKET": socket, **tmpdir},
    )


def open_app(
    environ: dict[str, str] | None = None,
    reading: bool = False,
    *,
    on_status: tuple[OnStatus, ...],
) -> App:
    """`reading`: the command only reads (Store.open's): a read-only or full filesystem still
    serves it. Commands and interfaces open theirs through the composition root
    (ops/root.open_app), which gives the status pipeline's reactions."""
    env = dict(os.environ if environ is None else environ)
    paths = cfg.paths()
    cfg.ensure_private_tree(paths)
    with contextlib.suppress(OSError):  # a read-only filesystem: nothing to sweep there
        handover.sweep(paths.run)  # secrets a killed roost left behind
    settings = cfg.load_config(paths)
    clock = SystemClock()
    store = Store.open(paths.db, reading=reading, clock=clock)
    return App(
        paths=paths,
        store=store,
        tmux=make_tmux(paths, settings, env),
        environ=env,
        settings=settings,
        clock=clock,
        procs=SystemProcesses(),
        on_status=on_status,
    )


def opener(app: App) -> Callable[[], App]:
    """How a worker thread of the service opens an App of its own (SQLite connections stay in
    their thread): this App's environment and reactions, the config read again."""
    environ, on_status = dict(app.environ), app.on_status
    return lambda: open_app(dict(environ), on_status=on_status)


UNREAD = ("unread",)  # what a service component saw of config.toml before its first pass


def file_stamp(path: str) -> object:
    """What tells an edited file from the one read before (None: there is none)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino


# A file written by truncating it, then writing, was read in between (empty: its defaults
# applied for a moment): a change is read once its file has been still this long.
SETTLE = 0.3  # seconds


def being_written(app: App, stamp: object) -> bool:
    """The file changed less than SETTLE seconds ago (by the App's clock; a stamp from its
    future, another clock's, counts as still)."""
    if not isinstance(stamp, tuple) or not isinstance(stamp[0], int):
        return False
    age = app.clock.now().timestamp() - stamp[0] / 1e9
    return 0 <= age < SETTLE


def reread_settings(
    app: App, seen: object, who: str, tell: Callable[[str | None], None] | None = None
) -> object:
    """The person may edit config.toml while the service runs: a component's pass reads it
    again when its stat changed since `seen` (a broken one keeps the last good settings and
    says why, once per change, not at every pass). `tell` hears each change read after the
    first: its problem, or None when it was applied. Returns what it saw."""
    from roost.core.errors import RoostError

    stamp = file_stamp(str(app.paths.config_file))  # None: no file, the defaults
    if stamp == seen or being_written(app, stamp):
        return seen
    try:
        app.settings = cfg.load_config(app.paths)
    except RoostError as exc:
        sys.stderr.write(f"roost service: {who}: keeping the last good config: {exc}\n")
        if tell is not None:
            tell(str(exc))
        return stamp
    if tell is not None and seen is not UNREAD:
        tell(None)
    return stamp
