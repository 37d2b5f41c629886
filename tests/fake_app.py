"""An App on the in-memory tmux (roost.tmux.fake): the shared set-up of the fast operation tests.

An agent's "process tree" is its fake pane; stopping it ends the pane as SIGTERM would.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from roost.core.clock import ManualClock
from roost.ops.context import App
from roost.store.db import Store
from roost.system import config as cfg
from roost.system import procs
from roost.tmux.fake import FakePane, FakeTmux

PROMPT = "ready>"  # what the fake agents' screens show when they wait for input


def fake_tmux() -> FakeTmux:
    tmux = FakeTmux()
    tmux.on_start = lambda pane: tmux.set_screen(pane.id, PROMPT)  # drawn at once
    return tmux


def fake_app(tmp_path: Path, fake: FakeTmux, clock: ManualClock,
             monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]) -> App:
    paths = cfg.Paths(tmp_path / "home")
    cfg.ensure_private_dir(paths.home)

    def snapshot(pid: int | None, agent_id: str, roost_home: str = "") -> list[FakePane]:
        return [p for p in fake.panes.values() if p.pid == pid and not p.dead]

    def kill_tree(tree: list[FakePane]) -> list[int]:
        for pane in tree:
            fake.exit(pane.id, 128 + 15)
        return []

    monkeypatch.setattr(procs, "snapshot", snapshot)
    monkeypatch.setattr(procs, "kill_tree", kill_tree)
    return App(paths=paths, store=Store.open(paths.db), tmux=fake,
               environ={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
               settings=settings, clock=clock)
