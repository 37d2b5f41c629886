"""Roost's tmux server as a person meets it, on a real tmux: its settings for agent CLIs, the
user's own tmux.conf, one key out of an agent nested or not, and views that never shrink agents."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

LONG_NAME = "a-rather-long-agent-name-for-the-status-line"


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args)


def option(world: Env, *args: str) -> str:
    return world.tmux("show-options", "-v", *args).strip()


def terminal(world: Env, socket: str, argv: list[str]) -> str:
    """A stand-in for the user's terminal: a detached 120x30 session on a server of its own,
    whose pane runs `argv`. Returns its socket."""
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "30",
            *argv,
        ],
        env=world.env,
        check=True,
        timeout=30,
    )
    return socket


def on(world: Env, socket: str, *args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", *args],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout


def clients(world: Env, socket: str) -> list[str]:
    return on(
        world, socket, "list-clients", "-F", "#{?client_control_mode,,#{client_session}}"
    ).split()


def window_size(world: Env, name: str) -> str:
    """The agent's window size, as WIDTHxHEIGHT."""
    window = next(p["window_id"] for p in world.panes() if p["window"] == name)
    return world.tmux(
        "display-message", "-p", "-t", window, "#{window_width}x#{window_height}"
    ).strip()


def test_the_server_fits_agent_clis_and_takes_the_users_own_settings(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "tmux.conf").write_text("set -g @mine yes\nset -g status-right-length 55\n")
    spawn(world, LONG_NAME)
    assert int(option(world, "-s", "escape-time")) <= 10
    assert option(world, "-s", "focus-events") == "on"
    assert option(world, "-s", "extended-keys") == "on"
    assert int(option(world, "-g", "history-limit")) >= 10_000
    assert option(world, "-g", "prefix") == "C-a"
    assert "detach-client" in world.tmux("list-keys", "-T", "root", "C-q")
    assert option(world, "-g", "@mine") == "yes"  # the user's file, after roost's settings
    assert option(world, "-g", "status-right-length") == "55"
    # a second spawn applies roost's settings again, and the user's after them
    spawn(world, "second")
    assert option(world, "-g", "status-right-length") == "55"
    # the status line shows the agent's full name, its state, and the way out
    window = next(p["window_id"] for p in world.panes() if p["window"] == LONG_NAME)
    world.tmux("select-window", "-t", window)
    term = terminal(
        world,
        f"{world.socket}-term",
        [
            "env",
            "-u",
            "TMUX",
            "tmux",
            "-L",
            world.socket,
            "-f",
            "/dev/null",
            "attach",
            "-t",
            LONG_NAME,
        ],
    )
    try:
        status = str(
            world.wait_for(
                lambda: (
                    (s := on(world, term, "capture-pane", "-p", "-t", "t").rstrip().splitlines())
                    and LONG_NAME in s[-1]
                    and s[-1]
                ),
                what="the status line",
            )
        )
        assert f"{LONG_NAME} (running)" in status and "C-q detach" in status, status
        assert "prefix C-a" in status
    finally:
        on(world, term, "kill-server")


def test_a_broken_user_tmux_conf_does_not_break_spawning(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "tmux.conf").write_text("set -g no-such-option 1\n")
    spawn(world, "alpha")
    assert world.ls()["alpha"]["state"] == "running"


@pytest.mark.parametrize("nested", [False, True])
def test_one_key_leaves_an_agent_nested_or_not_and_never_the_outer_session(
    world: Env, nested: bool
) -> None:
    spawn(world, "alpha")
    attach = [sys.executable, "-m", "roost", "attach", "alpha"]
    outer = f"{world.socket}-outer"
    term = f"{world.socket}-term"
    try:
        if nested:  # the user's own tmux (prefix C-b) runs roost attach in its pane
            on(
                world,
                outer,
                "new-session",
                "-d",
                "-s",
                "mine",
                "-x",
                "120",
                "-y",
                "30",
                "sh",
                "-c",
                " ".join(attach) + "; exec cat",
            )  # the user's pane outlives the attach
            terminal(
                world,
                term,
                [
                    "env",
                    "-u",
                    "TMUX",
                    "tmux",
                    "-L",
                    outer,
                    "-f",
                    "/dev/null",
                    "attach",
                    "-t",
                    "mine",
                ],
            )
            world.wait_for(lambda: clients(world, outer) == ["mine"], what="the user's client")
        else:
            terminal(world, term, attach)
        world.wait_for(lambda: clients(world, world.socket) == ["alpha"], what="roost's client")
        on(world, term, "send-keys", "-t", "t", "C-q")
        world.wait_for(lambda: clients(world, world.socket) == [], what="roost's client to go")
        if nested:
            assert clients(world, outer) == ["mine"]  # the outer session is still attached
        assert world.ls()["alpha"]["state"] == "running"
    finally:
        on(world, term, "kill-server")
        on(world, outer, "kill-server")


def test_a_view_that_does_not_fit_is_removed_and_new_agents_keep_their_size(world: Env) -> None:
    import os
    from unittest import mock

    from roost.core.errors import RoostError
    from roost.ops import tabview
    from roost.ops.root import open_app

    for i in range(5):
        spawn(world, f"a{i}")
    view_server = f"{world.socket}-view"
    try:
        with mock.patch.dict(os.environ, world.env, clear=True):
            app = open_app()
            try:  # five tiles in 4x2 fit no layout: tmux says "no space for new pane"
                with pytest.raises(RoostError, match=r"do not fit in 4x2 .no space for new pane"):
                    tabview.open_tab(app, "main", width=4, height=2)
            finally:
                app.close()
        assert "view-main" not in on(world, view_server, "list-sessions", "-F", "#{session_name}")
        assert clients(world, world.socket) == []  # no tile client holds a home
        spawn(world, "late")
        assert window_size(world, "late") == "200x50"
    finally:
        on(world, view_server, "kill-server")


def test_a_new_agent_is_not_shrunk_by_a_narrow_client_elsewhere(world: Env) -> None:
    spawn(world, "alpha")
    term = terminal(
        world,
        f"{world.socket}-term",
        [
            "env",
            "-u",
            "TMUX",
            "tmux",
            "-L",
            world.socket,
            "-f",
            "/dev/null",
            "attach",
            "-t",
            "alpha",
        ],
    )
    try:
        on(world, term, "resize-window", "-t", "t", "-x", "10", "-y", "5")
        world.wait_for(lambda: clients(world, world.socket) == ["alpha"], what="a client")
        spawn(world, "beta")
        assert window_size(world, "beta") == "200x50"
    finally:
        on(world, term, "kill-server")


def test_attach_help_says_how_to_leave(world: Env) -> None:
    out = world.roost_inprocess("attach", "--help").stdout
    assert "C-q" in out and "prefix C-a" in out and "tmux.conf" in out
