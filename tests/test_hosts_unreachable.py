"""A host that cannot be reached is one line and a documented exit code (issue 35): every
command a host's roost runs for this one (`roost send dead:x hi`, `roost --host dead ls`, a
watch, an attach) said so with ssh's own code, 255, which roost documents nowhere. Now:
`roost: host NAME unreachable: REASON` on stderr and exit 8, roost's own code for it. And
`roost attach HOST:AGENT` with no terminal refuses before any ssh (exit 2)."""

from __future__ import annotations

import shlex
import sys

import pytest
from sshd import Fleet, free_port, terminal

pytestmark = pytest.mark.tmux

FORWARDED = [
    ("send", "dead:x", "hi"),
    ("send", "dead:x", "hi", "--wait"),
    ("--host", "dead", "ls"),
    ("--host=dead", "ls", "--json"),
    ("--host", "dead", "watch", "--json"),
    ("reply", "dead:x"),
    ("read", "dead:x", "-n", "2"),
    ("capture", "dead:x"),
    ("kill", "dead:x"),
    ("wake", "dead:x"),
    ("spawn", "dead:x", "--provider", "command", "--", "sleep", "1"),
]


def dead_host(fleet: Fleet) -> None:
    """Host `dead`: an ssh alias for a port nothing listens on (refused at once)."""
    with fleet.ssh_config.open("a") as f:
        f.write(f"\nHost dead\n  HostName 127.0.0.1\n  Port {free_port()}\n  User root\n")
    fleet.local.roost("host", "add", "dead", "dead")


@pytest.mark.parametrize("args", FORWARDED, ids=[" ".join(a) for a in FORWARDED])
def test_every_forwarded_command_says_host_unreachable_and_exits_8(
    fleet: Fleet, args: tuple[str, ...]
) -> None:
    dead_host(fleet)
    proc = fleet.local.roost(*args, check=False, timeout=60)
    assert proc.returncode == 8, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("roost: host dead unreachable: "), line
    assert "Connection refused" in line, line


def test_an_attach_in_a_terminal_to_a_host_it_cannot_reach_exits_8_saying_so(fleet: Fleet) -> None:
    """`roost attach dead:x` runs `ssh -tt` on the person's terminal (a pane of a test tmux):
    ssh's failure comes back as roost's line and code, not ssh's 255."""
    dead_host(fleet)
    on = terminal(fleet.local)
    line = shlex.join([sys.executable, "-m", "roost", "attach", "dead:x"])
    script = f"{line}; echo EXIT=$?; sleep 300"
    on("new-session", "-d", "-s", "t", "-x", "200", "-y", "30", "-c", str(fleet.local.tmp),
       "sh", "-c", script)  # fmt: skip

    def ended() -> str | None:
        screen = on("capture-pane", "-p", "-t", "t")
        return screen if "EXIT=" in screen else None

    try:
        shown = fleet.local.wait_for(ended, 60, "the attach's end")
    finally:
        on("kill-server")
    assert "EXIT=8" in shown, shown
    assert "roost: host dead unreachable: " in shown and "Connection refused" in shown, shown


def test_attach_to_a_host_without_a_terminal_refuses_before_any_ssh(fleet: Fleet) -> None:
    dead_host(fleet)
    proc = fleet.local.roost("attach", "dead:x", check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        "roost: roost attach needs a terminal, and its input is not one: nothing was woken "
        "(run it in a terminal; roost wake dead:x starts dead:x without one)"
    ]
