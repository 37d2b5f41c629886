"""The TUI over a real host (issue 24 part 3): a real sshd and a remote roost (tests/sshd.py),
the TUI headless (Textual's pilot), its Enter's ssh line run in a real terminal."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys

import pytest
from sshd import Fleet, terminal
from test_tui import settle

from roost.hosts import operations as hosts
from roost.tui import rows
from roost.tui.app import RoostApp
from roost.tui.live import LiveSource

from conftest import Env


def titles(app: RoostApp) -> list[str]:
    return [rows.host_title(r) for r in app.rows if r.key.startswith(rows.HOST_KEY)]


def execed_by_attach(local: Env, target: str) -> list[str]:
    """The arguments `roost attach TARGET` runs ssh with, from a terminal (it refuses without
    one): an `ssh` first on PATH that writes them down and exits."""
    shim = local.tmp / "shim"
    shim.mkdir()
    said = local.tmp / "ssh-argv.json"
    (shim / "ssh").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(said)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    (shim / "ssh").chmod(0o755)
    env = {**local.env, "PATH": f"{shim}:{os.environ['PATH']}"}
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-m", "roost", "attach", target],
            env=env,
            stdin=follower,
            timeout=30,
            check=True,
        )
    finally:
        os.close(leader)
        os.close(follower)
    return list(json.loads(said.read_text()))


@pytest.mark.tmux
def test_a_host_s_agents_show_enter_attaches_over_ssh_and_a_dead_host_is_one_line(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    h1 = fleet.add("h1")
    local = fleet.local
    local.roost("spawn", "here", "--cwd", str(local.tmp / "work"))
    local.roost("spawn", "h1:api", "--cwd", str(h1.world.tmp / "work"))
    local.roost("send", "h1:api", "seen from the tui")
    for key, value in local.env.items():
        monkeypatch.setenv(key, value)
    attached: list[list[str]] = []
    on = terminal(local)

    async def run() -> None:
        app = RoostApp(
            source=LiveSource(), attacher=attached.append, refresh_every=0.5, hosts_every=1.0
        )
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot, app, lambda: any(r.remote for r in app.rows), timeout=30)
            assert titles(app) == ["local (1)", "h1 (1)"]
            assert [(r.host, r.label) for r in app.rows if r.remote or r.item] == [
                (None, "here"),
                ("h1", "api"),
            ]
            index = next(i for i, r in enumerate(app.rows) if r.remote)
            app.query_one("#agents").move_cursor(row=index)  # type: ignore[attr-defined]
            await pilot.press("enter")
            await settle(pilot, app, lambda: attached, timeout=30)

            # the very line `roost attach h1:api` runs (hosts/operations.attach_argv), ssh -tt
            reach = hosts.reach()
            assert attached == [hosts.attach_argv(reach, hosts.get(reach, "h1"), ["attach", "api"])]
            argv = attached[0]
            assert argv[:3] == ["ssh", "-F", str(fleet.ssh_config)] and "-tt" in argv
            assert argv[argv.index("--") + 1] == "h1" and argv[-1].endswith(" attach api")
            assert execed_by_attach(local, "h1:api") == argv[1:]

            # run in a terminal: the host's agent shows; its C-q ends the ssh
            on("new-session", "-d", "-s", "t", "-x", "120", "-y", "30", *argv)
            try:
                local.wait_for(
                    lambda: "seen from the tui" in on("capture-pane", "-p", "-t", "t"),
                    what="the remote screen",
                )
                clients = "#{?client_control_mode,,#{client_session}}"
                assert h1.world.tmux("list-clients", "-F", clients).split() == ["api"]
                on("send-keys", "-t", "t", "C-q")
                local.wait_for(lambda: "t" not in on("list-sessions", "-F", "#S").split())
                assert not h1.world.tmux("list-clients", "-F", clients).split()
            finally:
                on("kill-server")

            # the host goes away: one line saying why; this machine's rows still refresh
            h1.stop()
            local.roost("spawn", "later", "--cwd", str(local.tmp / "work"))
            await settle(
                pilot,
                app,
                lambda: (
                    "unreachable" in " ".join(titles(app))
                    and any(r.label == "later" for r in app.rows)
                ),
                timeout=30,
            )
            assert titles(app)[0] == "local (2)"
            (dead,) = [r for r in app.rows if r.host == "h1"]
            assert dead.unreachable and "Connection refused" in dead.unreachable, dead

    asyncio.run(run())
