"""The README's front door: `./install.sh` on a machine with no agent CLI installs roost, says
what is missing, and shows roost at work (a first agent in its home), exiting 0."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(600), pytest.mark.minutes]


def test_install_sh_installs_and_shows_a_first_agent_without_any_agent_cli(tmp_path: Path) -> None:
    home, tmux_tmp = tmp_path / "home", tmp_path / "tmux"
    home.mkdir()
    tmux_tmp.mkdir(mode=0o700)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "ROOST_HOME": str(tmp_path / "roost"),
        "ROOST_TMUX_SOCKET": f"in{os.getpid()}",
        "TMUX_TMPDIR": str(tmux_tmp),
        "ROOST_VENV": str(tmp_path / "venv"),
        "ROOST_BIN_DIR": str(tmp_path / "bin"),
    }
    roost = tmp_path / "bin" / "roost"
    try:
        done = subprocess.run(
            ["sh", str(ROOT / "install.sh")],
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
            check=False,
        )
        out = done.stdout + done.stderr
        assert done.returncode == 0, out
        assert "no agent CLI is installed" in out and "--provider command" in out
        assert "roost attach first" in out
        [agent] = json.loads(
            subprocess.run(
                [str(roost), "ls", "--json"], env=env, text=True, capture_output=True, check=True
            ).stdout
        )
        assert (agent["name"], agent["provider"], agent["state"]) == ("first", "command", "running")
    finally:
        subprocess.run(
            ["tmux", "-L", env["ROOST_TMUX_SOCKET"], "kill-server"],
            env=env,
            capture_output=True,
            check=False,
        )
