"""The hook log as evidence (issue 18): a status, like a session id, comes only from the lines of
the agent's current launch (its token in the store), whatever the log itself claims; a clock
step between roost and the agent delays nothing. Real tmux, the fake claude."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from roost.store.db import Store

from conftest import Env

pytestmark = pytest.mark.tmux


def spawn(world: Env, name: str, env: dict[str, str] | None = None) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), env=env)


def idle_by_hooks(world: Env, name: str) -> dict[str, Any]:
    return world.wait_for(
        lambda: (a := world.ls()[name])["status"] == "idle" and a["status_source"] == "hook" and a,
        what=f"{name} idle by its hooks",
    )


def log_of(world: Env, name: str) -> Path:
    return world.home / "agents" / world.ls()[name]["id"] / "hooks.log"


def forge(world: Env, name: str, event: str, payload: dict[str, Any]) -> None:
    """What a forger who cannot read the store appends: a launch line of its own, then an event
    with that launch's token (the log's last launch line used to say whose lines count)."""
    cwd = str((world.tmp / "work").resolve())
    with log_of(world, name).open("a") as fh:
        fh.write(f"{time.time():.3f}\tRoostLaunch\tFAKE\t{{}}\n")
        fh.write(
            f"{int(time.time())}\t{event}\tFAKE\t"
            f"{json.dumps({'cwd': cwd, 'hook_event_name': event, **payload})}\n"
        )


FORGED = [
    ("Notification", {"notification_type": "permission_prompt"}),  # waiting
    ("SessionEnd", {"reason": "other"}),  # exited
    ("StopFailure", {"last_assistant_message": "forged reason"}),
]  # error


def test_a_forged_launch_line_does_not_set_the_status(world: Env) -> None:
    spawn(world, "cl")
    idle_by_hooks(world, "cl")
    for event, payload in FORGED:
        forge(world, "cl", event, payload)
        shown = world.ls()["cl"]
        assert (shown["status"], shown["status_source"], event) == ("idle", "hook", event)
    assert "forged reason" not in world.roost("ls").stdout
    world.roost("send", "cl", "hello")  # not refused as waiting, exited or broken


def events(world: Env, name: str) -> list[dict[str, Any]]:
    return json.loads(world.roost("events", name, "--json").stdout)


def test_an_agent_whose_clock_is_an_hour_behind_reports_at_once(world: Env) -> None:
    """The agent's clock an hour behind roost's (so every hook line is stamped before its
    launch): its hooks still give its status and its lineage, the step is logged as a warning,
    and a send goes through."""
    shim = world.tmp / "behind"
    shim.mkdir()
    real = shutil.which("date")
    (shim / "date").write_text(
        '#!/bin/sh\n[ "$1" = "+%s" ] && exec expr "$(' + str(real) + ' +%s)" - 3600\n'
        f'exec {real} "$@"\n'
    )
    (shim / "date").chmod(0o755)
    spawn(world, "cl", env={"PATH": f"{shim}:{world.env['PATH']}"})
    idle_by_hooks(world, "cl")
    world.roost("send", "cl", "hello")
    kinds = [e["kind"] for e in events(world, "cl")]
    assert "hook-events-ignored" not in kinds and "session-ignored" not in kinds
    [step] = [e for e in events(world, "cl") if e["kind"] == "clock-step"]
    assert 3590 <= step["behind"] <= 3610
    assert Store.open(world.home / "roost.db").require("cl").transcript_path  # taken


def test_hooks_never_append_through_a_symlink_planted_at_the_log(world: Env) -> None:
    spawn(world, "cl")
    idle_by_hooks(world, "cl")
    log = log_of(world, "cl")
    victim = world.tmp / "victim.txt"
    victim.write_text("precious\n")
    log.unlink()
    log.symlink_to(victim)  # planted while the agent runs
    world.roost("send", "cl", "hello")
    world.wait_for(
        lambda: log.exists() and not log.is_symlink() and "\tStop\t" in log.read_text(),
        what="a new log, with the turn's Stop",
    )
    assert victim.read_text() == "precious\n"
    assert log.stat().st_mode & 0o777 == 0o600
    idle_by_hooks(world, "cl")
