"""The context every operation gets: paths, store, tmux layer, clock, config, caller's env."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from roost.core.clock import Clock
from roost.store.db import Store
from roost.system import config as cfg
from roost.system import handover
from roost.system.clock import SystemClock
from roost.system.locate import tmux_binary
from roost.tmux.client import USER_CONFIG, Tmux
from roost.tmux.protocol import TmuxClient

# How a roost started by tmux says so: the keeper (keeper.sh) exports the first, the pane-died
# hook's command line (make_tmux) sets the second. Their wakes start an agent with the
# environment of its last start, not with their own (the tmux server's, which holds no secret).
IN_KEEPER, IN_SUPERVISOR = "ROOST_IN_KEEPER", "ROOST_IN_SUPERVISOR"


def started_by_tmux(environ: Mapping[str, str]) -> bool:
    """Whether this roost runs in a keeper or in the supervisor, not in a user's shell."""
    return bool(environ.get(IN_KEEPER) or environ.get(IN_SUPERVISOR))


@dataclass
class App:
    paths: cfg.Paths
    store: Store
    tmux: TmuxClient
    environ: dict[str, str]
    settings: dict[str, Any] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)

    def close(self) -> None:
        self.store.close()


def make_tmux(paths: cfg.Paths, settings: Mapping[str, Any], environ: Mapping[str, str]) -> Tmux:
    """The one way roost builds its tmux client: the configured binary, roost's socket, and the
    pane-died hook that runs `roost _supervise`."""
    socket = cfg.socket_name()
    tmpdir = {"TMUX_TMPDIR": environ["TMUX_TMPDIR"]} if environ.get("TMUX_TMPDIR") else {}
    return Tmux(socket, binary=tmux_binary(settings), environ=environ,
                user_config=str(paths.home / USER_CONFIG),
                # tmux runs this (through run-shell, so quoted) when a pane dies; no user text.
                # It marks itself: its wakes start agents with their own saved environment.
                # -P: never import from the working directory (the home's, a user's project).
                supervisor=f"{IN_SUPERVISOR}=1 exec {shlex.quote(sys.executable)} -P "
                           "-m roost _supervise",
                supervisor_env={"ROOST_HOME": str(paths.home), "ROOST_TMUX_SOCKET": socket,
                                **tmpdir})


def open_app(environ: dict[str, str] | None = None, reading: bool = False) -> App:
    """`reading`: the command only reads (Store.open's): a read-only or full filesystem still
    serves it."""
    env = dict(os.environ if environ is None else environ)
    paths = cfg.paths()
    cfg.ensure_private_tree(paths)
    with contextlib.suppress(OSError):  # a read-only filesystem: nothing to sweep there
        handover.sweep(paths.run)  # secrets a killed roost left behind
    settings = cfg.load_config(paths)
    store = Store.open(paths.db, reading=reading)
    return App(paths=paths, store=store, tmux=make_tmux(paths, settings, env), environ=env,
               settings=settings)
