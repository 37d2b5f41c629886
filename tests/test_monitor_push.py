"""What the service's monitor (service/monitor.py) hears at once, on a real tmux (issue 21, branch
svc2): a pane's death is pushed to its control client by the pane-died hook, not left to the
subscription's next 1 s check; and a Claude hook event that changes nothing on the screen (a
Notification) reaches `roost watch --json` without waiting for the safety net; so does a
still screen's return to idle."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from test_stream import seen, watching

from roost.core.service import SESSION
from roost.providers import hooks
from roost.tmux.client import Tmux
from roost.tmux.control import ControlClient

from conftest import Env

# Well under the monitor's safety net (service/monitor.py FULL, 120 s): a line that comes within it
# was pushed; generous for a loaded machine.
PUSHED = 15.0


def test_a_pane_death_pokes_the_services_control_client(world: Env) -> None:
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.roost("service", "start")
    ear = ControlClient(Tmux(world.socket, environ=world.env), SESSION)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(ear.lines()), daemon=True)
    reader.start()
    try:
        world.wait_for(lambda: any(x.startswith("%session-changed") for x in lines), what="attach")
        world.type(world.pane_of("cx"), "crash 3")
        world.wait_for(
            lambda: any(x.startswith("%window-renamed") for x in lines),
            timeout=PUSHED,
            what="the pane-died hook's poke",
        )
    finally:
        ear.close()
        reader.join(timeout=10)


def fire_hook(world: Env, name: str, event: str, payload: dict[str, Any]) -> None:
    """Run the agent's hook for `event` as Claude Code runs it: its settings file's command, the
    payload on stdin, the CLI's own environment (its launch token)."""
    agent = world.ls()[name]
    folder = Path(hooks.agent_dir(str(world.home), agent["id"]))
    settings = json.loads((folder / "claude-settings.json").read_text())
    command = settings["hooks"][event][0]["hooks"][0]["command"]
    raw = Path(f"/proc/{agent['pid']}/environ").read_bytes().split(b"\0")
    env = dict(kv.decode().split("=", 1) for kv in raw if b"=" in kv)
    subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), env=env)


def test_a_hook_event_with_no_screen_change_reaches_watch(world: Env) -> None:
    world.roost("spawn", "cl", "--provider", "claude", "--cwd", str(world.tmp / "work"))
    world.wait_status("cl", "idle")
    world.roost("service", "start")
    with watching(world, "--interval", "60") as watch:
        world.wait_for(lambda: watch.lines, what="watch's first look")
        screen = world.screen(world.pane_of("cl"))
        fire_hook(
            world,
            "cl",
            "Notification",
            {
                "hook_event_name": "Notification",
                "notification_type": "permission_prompt",
                "message": "Claude needs your permission to use Bash",
            },
        )
        world.wait_for(lambda: seen(watch, "cl", "waiting"), timeout=PUSHED, what="waiting")
        assert world.screen(world.pane_of("cl")) == screen  # the hook log alone said it


def heard_panes(world: Env) -> dict[str, str]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        return dict(db.execute("SELECT pane_id, changed_at FROM service_panes"))


def test_the_services_own_output_is_no_change_for_the_tuis(world: Env) -> None:
    """What the service prints in its own pane (a library's log line at an agent's first MCP
    call, one of its own messages) is not news: a write for it would make every open TUI take a
    snapshot. Caught on CI: an idle TUI looked again when the MCP session manager logged."""
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.roost("service", "start")
    own = world.tmux("list-panes", "-t", f"={SESSION}", "-F", "#{pane_id} #{pane_tty}").split()
    agent = world.pane_of("cx")
    world.type(agent, "work 1")  # the monitor has reported before: the next report is a diff
    world.wait_for(lambda: agent in heard_panes(world), what="the agent's first change heard")
    before = heard_panes(world)
    with open(own[1], "w") as tty:  # as if the service printed a line
        tty.write("a line in the service's pane\r\n")
    world.type(agent, "work 1")  # after it: a report that holds this change holds that one
    world.wait_for(
        lambda: heard_panes(world)[agent] > before[agent], what="the agent's next change heard"
    )
    assert heard_panes(world).get(own[0]) == before.get(own[0])


def test_a_still_screen_reads_idle_when_its_quiet_is_over(world: Env) -> None:
    """A pattern-less screen is working while it moves and idle QUIET seconds after (core
    status): no event says so, so the monitor refreshes that pane when its QUIET is over, not at
    its safety net (service/monitor.py FULL, minutes away)."""
    from roost.core.status import QUIET

    echo = "while read x; do echo got $x; done"
    work = str(world.tmp / "work")
    world.roost("spawn", "sh1", "--provider", "command", "--cwd", work, "--", "sh", "-c", echo)
    world.wait_status("sh1", "idle")
    world.start_service(hearing="sh1")
    with watching(world, "--interval", "60") as watch:
        world.wait_for(lambda: watch.lines, what="watch's first look")
        world.type(world.pane_of("sh1"), "hello")
        working = world.wait_for(lambda: seen(watch, "sh1", "working"), PUSHED, "working")
        world.wait_for(
            lambda: seen(watch, "sh1", "idle", after=working["seq"]), QUIET + PUSHED, "idle"
        )
