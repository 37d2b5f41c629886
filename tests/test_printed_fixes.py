"""Every command roost prints for a person to run is correct when pasted into a POSIX shell
(issue 18 item 14): quoted, with exact targets. Doctor's fix `tmux -L S kill-session -t $11`,
pasted into sh, became `-t 1`, and tmux's prefix match removed the home of agent `1x`."""

from __future__ import annotations

import subprocess

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def fixes(out: str) -> list[str]:
    return [
        line.split("fix: ", 1)[1] for line in out.splitlines() if line.lstrip().startswith("fix: ")
    ]


def run_in_sh(world: Env, command: str) -> None:
    subprocess.run(
        ["sh", "-c", command], env=world.env, capture_output=True, timeout=30, check=False
    )


def test_doctors_kill_session_fix_pasted_into_sh_removes_only_that_session(world: Env) -> None:
    world.roost("spawn", "1x", "--cwd", str(world.tmp / "work"))
    # foreign sessions until one has the id $11 ($1 and $11 are both expanded by a shell)
    while "$11" not in world.tmux("list-sessions", "-F", "#{session_id}").split():
        world.tmux("new-session", "-d", "-s", f"f{len(world.panes())}")
    foreign = [
        s for s in world.tmux("list-sessions", "-F", "#{session_name}").split() if s.startswith("f")
    ]
    out = world.roost("doctor", check=False).stdout
    commands = [f for f in fixes(out) if f.startswith("tmux ")]
    assert len(commands) == len(foreign), out
    for command in commands:
        run_in_sh(world, command)
    sessions = world.tmux("list-sessions", "-F", "#{session_name}").split()
    assert "1x" in sessions  # agent 1x's home
    assert not set(foreign) & set(sessions), sessions
    assert world.ls()["1x"]["state"] == "running"


@pytest.mark.parametrize("socket", ["plain", "with space", "dollar$1", "quote's", "semi;colon"])
def test_every_drift_fix_is_one_exact_argv_in_sh(socket: str) -> None:
    """Pure: each printed tmux fix splits, as sh would, into exactly the argv meant."""
    from roost.core.pane import Pane
    from roost.core.reconcile import drift

    stray = Pane(
        session_id="$11",
        session_name="stray",
        window_id="@7",
        window_index=1,
        window_name="w",
        pane_id="%9",
        pid=1,
        dead=False,
        dead_status=None,
        agent_id="",
        is_keeper=False,
        is_home=False,
    )
    tagged = Pane(
        session_id="$1",
        session_name="h",
        window_id="@2",
        window_index=1,
        window_name="x",
        pane_id="%3",
        pid=2,
        dead=False,
        dead_status=None,
        agent_id="0f0e0d0c-0000-4000-8000-000000000001",
        is_keeper=False,
        is_home=True,
    )
    found = drift([], [stray, tagged], socket)
    commands = [f.advice for f in found if f.advice.startswith("tmux")]
    assert len(commands) == 3  # the stray session, the tagged window, the keeperless home
    for command in commands:
        argv = as_sh_reads(command)
        assert argv[:3] == ["tmux", "-L", socket], command
        assert argv[-2:] in (["-t", "$11"], ["-t", "$1"], ["-t", "@2"]), command


def as_sh_reads(command: str) -> list[str]:
    """The words `sh` makes of a pasted line (a trailing `# note` is a comment)."""
    proc = subprocess.run(
        ["sh", "-c", 'words() { printf "%s\\0" "$@"; }; words ' + command],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return proc.stdout.split("\0")[:-1]


def test_a_refused_homes_fix_pasted_into_sh_fixes_that_home(world: Env) -> None:
    """A ROOST_HOME whose path a shell would split or expand: the printed chmod still fixes it."""
    home = world.tmp / "my roost $1"
    home.mkdir()
    home.chmod(0o777)
    env = {"ROOST_HOME": str(home)}
    refused = world.roost("ls", check=False, env=env)
    assert refused.returncode == 2 and "chmod" in refused.stderr, refused.stderr
    fix = refused.stderr.split("fix: ", 1)[1].strip()
    run_in_sh(world, fix)
    assert world.roost("ls", check=False, env=env).returncode == 0
