"""The service's one format subscription (core/panewatch.py) as a real tmux evaluates it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from roost.core import panewatch
from roost.core.service import SESSION

pytestmark = pytest.mark.tmux


def test_the_subscription_names_agents_panes_only(tmp_path: Path) -> None:
    """An agent's window (tagged @roost_id), not its home's keeper, an untagged window, or the
    service's own session: tmux evaluates the format over each pane it names once a second."""
    env = {"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path)}
    tmux = [shutil.which("tmux") or "tmux", "-L", "panewatch", "-f", "/dev/null"]

    def run(*args: str) -> str:
        return subprocess.run(
            [*tmux, *args], env=env, capture_output=True, text=True, check=True, timeout=30
        ).stdout

    try:
        run("new-session", "-d", "-s", "home", "sleep", "100")  # the keeper
        agent = run(
            "new-window",
            "-t",
            "home:",
            "-P",
            "-F",
            "#{pane_id}",
            "sleep",
            "100",
            ";",
            "set-option",
            "-w",
            "@roost_id",
            "a1",
        ).strip()
        run("new-window", "-t", "home:", "sleep", "100")  # nothing of roost's
        run("new-session", "-d", "-s", SESSION, "sleep", "100")
        run("set-option", "-w", "-t", f"={SESSION}:", "@roost_id", "not-an-agent")
        value = run("display-message", "-p", panewatch.FORMAT)
        assert list(panewatch.parse(value)) == [agent]
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True, check=False)
