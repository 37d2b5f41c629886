"""The context every operation gets: paths, store, tmux layer, config, and the caller's env."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from roost.system import config as cfg
from roost.system import handover
from roost.store.db import Store
from roost.tmux.client import Tmux


@dataclass
class App:
    paths: cfg.Paths
    store: Store
    tmux: Tmux
    environ: dict[str, str]
    settings: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.store.close()


def open_app(environ: dict[str, str] | None = None) -> App:
    env = dict(os.environ if environ is None else environ)
    paths = cfg.paths()
    cfg.ensure_private_tree(paths)
    handover.sweep(paths.run)  # secrets a killed roost left behind
    settings = cfg.load_config(paths)
    store = Store.open(paths.db)
    tmux_bin = str(settings.get("tmux", {}).get("bin", "tmux"))
    tmux = Tmux(cfg.socket_name(), binary=tmux_bin, environ=env)
    # tmux runs this (through run-shell, so quoted) when a pane dies; no user text is in it
    tmux.supervisor = f"{shlex.quote(sys.executable)} -m roost _supervise"
    tmux.supervisor_env = {"ROOST_HOME": str(paths.home), "ROOST_TMUX_SOCKET": tmux.socket,
                           **({"TMUX_TMPDIR": env["TMUX_TMPDIR"]} if env.get("TMUX_TMPDIR") else {})}
    return App(paths=paths, store=store, tmux=tmux, environ=env, settings=settings)
