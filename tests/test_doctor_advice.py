"""`roost doctor` after the things that go wrong in a terminal (issue 11): a lost tmux server
wants one restore, a leftover `roost open` view is found, a broken config is named with its fix,
and nothing restore hibernated on purpose is an alarm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def doctor(world: Env) -> tuple[int, str, dict[str, Any]]:
    text = world.roost("doctor", check=False)
    report = json.loads(world.roost("doctor", "--json", check=False).stdout)
    return text.returncode, text.stdout, report


def test_after_a_server_loss_doctor_advises_one_restore_then_is_happy(world: Env) -> None:
    work = str(world.tmp / "work")
    for name in ("alpha", "beta"):
        world.roost("spawn", name, "--cwd", work)
    world.roost("spawn", "gamma", "--cwd", work, "--detached")  # parked: running until restore
    world.roost("spawn", "delta", "--cwd", work)
    world.roost("bury", "delta")
    world.tmux("kill-server")
    # the agents die with their panes (SIGHUP); until then they would be orphans, not the point
    world.wait_for(
        lambda: next(c for c in doctor(world)[2]["checks"] if c["name"] == "orphans")["ok"],
        what="agents gone",
    )
    code, out, report = doctor(world)
    assert code == 1
    # the tiles; parked gamma and buried delta are hibernated (a restore leaves them so)
    assert "roost's tmux server: is not running: 2 agents should be running (alpha, beta)" in out
    assert "fix: roost restore" in out
    assert "roost wake" not in out  # one fix for them all
    assert [c["name"] for c in report["checks"] if not c["ok"]] == ["drift", "roost's tmux server"]

    world.roost("restore")
    states = {name: a["state"] for name, a in world.ls().items()}
    assert states == {
        "alpha": "running",
        "beta": "running",
        "gamma": "hibernated",
        "delta": "hibernated",
    }
    code, out, report = doctor(world)
    assert code == 0 and report["ok"], out  # parked and buried agents that sleep: no alarm
    assert "2 running in tmux" in out


def test_doctor_finds_a_leftover_view_server_with_the_fix(world: Env) -> None:
    from roost.ops import tabview
    from roost.ops.root import open_app

    for name in ("alpha", "beta"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    view = f"{world.socket}-view"
    try:
        with mock.patch.dict(os.environ, world.env, clear=True):
            app = open_app()
            try:
                tabview.open_tab(app, "main")  # built, never attached: as a killed `roost open`
            finally:
                app.close()
        code, out, _report = doctor(world)
        assert code == 1
        assert f"BAD  view server: {view} holds 1 view nobody looks at (view-main)" in out
        fix = f"tmux -L {view} kill-server"
        assert f"fix: {fix}" in out
        subprocess.run(fix.split(), env=world.env, check=True, capture_output=True)
        code, out, _report = doctor(world)
        assert code == 0 and "view server" not in out, out
    finally:
        subprocess.run(["tmux", "-L", view, "kill-server"], env=world.env, capture_output=True)


def test_a_broken_config_is_reported_with_its_fix(world: Env) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    config = world.home / "config.toml"
    config.write_text("[restore\n")
    code, out, report = doctor(world)
    assert code == 1
    bad = next(c for c in report["checks"] if c["name"] == "config")
    assert not bad["ok"] and str(config) in bad["detail"]
    assert f"fix: edit {config} (see README: Config)" in out


def test_doctor_warns_that_ci_true_makes_gemini_headless(tmp_path: Path) -> None:
    """Gemini CLI 0.61.0 runs headless under CI=true or GITHUB_ACTIONS=true: every gemini agent
    would exit at once. doctor says so, with the fix; without either variable it says nothing."""
    from pathlib import Path

    from roost.core.settings import Settings
    from roost.ops.doctor import Report, provider_checks

    bin_dir = Path(__file__).parent / "bin"
    base = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "FAKE_AGENT_PYTHON": sys.executable,
    }

    def gemini_lines(environ: dict[str, str]) -> list[str]:
        report = Report()
        provider_checks(report, Settings(), environ, None)
        return [
            f"{c.detail} | {c.advice}"
            for c in report.checks
            if c.name == "gemini" and c.warning and "headless" in c.detail
        ]

    for key in ("CI", "GITHUB_ACTIONS"):
        warned = gemini_lines({**base, key: "true"})
        assert len(warned) == 1 and "env -u CI -u GITHUB_ACTIONS" in warned[0], warned
    assert gemini_lines(base) == []
    assert gemini_lines({**base, "CI": "false"}) == []
