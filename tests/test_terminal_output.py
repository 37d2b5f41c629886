"""Nothing another program or machine wrote reaches a terminal raw (issue 35, finding 2 and
"every output against control sequences"): system/terminal.py's guard on every full-CLI
command, and the tables of the fast paths (test_visible_output.py has their cells)."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time

import pytest

from roost.system import terminal

from conftest import Env

# Every C0 control but the line's own (LF) and TAB, DEL, every C1, and the sequences a hostile
# string would carry: OSC 52 (the clipboard), a title, CSI clear and cursor moves, a bidi flip.
HOSTILE = (
    "".join(chr(c) for c in range(0x20) if c not in (0x09, 0x0A))
    + "\x7f"
    + "".join(chr(c) for c in range(0x80, 0xA0))
    + "\x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x1b\\\x1b[2J\x1b[1A\u202eevil"
)
RAW = [chr(c).encode() for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)] + [
    b"\x7f",
    *(chr(c).encode() for c in range(0x80, 0xA0)),
    "\u202e".encode(),
]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_guard_shows_every_control_and_keeps_lines_and_tabs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, err = FakeTerminal(), FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    terminal.guard()
    terminal.guard()  # twice: one guard
    print(f"name\t{HOSTILE}")
    sys.stderr.write(f"roost: {HOSTILE}\n")
    for written in (out.getvalue(), err.getvalue()):
        controls = [ch for ch in HOSTILE if not ch.isprintable() and ch not in "\t\n"]
        assert not any(ch in written for ch in controls), repr(written)
        assert "\\x1b]52;c;ZXZpbA==\\x07" in written and "\\u202eevil" in written
    assert out.getvalue().startswith("name\t") and out.getvalue().count("\n") == 1
    terminal.raw(sys.stdout).write("\x1b]9;alert\x07")  # what is meant for the terminal
    assert out.getvalue().endswith("\x1b]9;alert\x07")


def test_a_file_or_pipe_gets_the_bytes_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    terminal.guard()
    print("\x1b[2J")
    assert out.getvalue() == "\x1b[2J\n"


def in_a_terminal(world: Env, *args: str) -> tuple[int, bytes]:
    """`roost ARGS` with a pseudo-terminal for stdout and stderr: what a person's terminal
    would be sent."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=world.env,
        cwd=world.tmp,
    )
    os.close(follower)
    got = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer is gone
            break
        if not chunk:
            break
        got += chunk
    os.close(leader)
    return proc.wait(30), got


@pytest.mark.tmux
def test_a_folder_named_with_escapes_reaches_no_terminal_raw(world: Env) -> None:
    """A folder's name is anybody's bytes (a cloned repository's, an archive's): an agent
    working in one is shown by every command with its controls as text."""
    folder = world.tmp / ("w" + HOSTILE.replace("/", "").replace("\x00", ""))
    folder.mkdir()
    world.roost("spawn", "a", "--provider", "command", "--cwd", str(folder), "--", "sleep", "300")
    world.wait_status("a", "idle", 30)
    for args in (
        ("ls",),
        ("ls", "--tree"),
        ("ls", "--all"),
        ("events",),
        ("doctor",),
        ("usage",),
        ("read", "a"),
        ("spawn", "a", "--provider", "command", "--cwd", str(folder), "--", "sleep", "1"),
    ):
        code, got = in_a_terminal(world, *args)
        sent = got.replace(b"\r\n", b"\n")  # the terminal's own line endings
        raw = [seq for seq in RAW if seq in sent]
        assert not raw, (args, code, raw, sent[:400])
    code, got = in_a_terminal(world, "ls")
    assert code == 0 and b"\\x1b]52;c;ZXZpbA==\\x07" in got, got
