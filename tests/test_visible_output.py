"""Issue 35 part 2: nothing another machine or program wrote reaches a terminal raw. A host's
agent names, statuses, providers and folders (`ls --all`), a folder's name and a CLI's words
(`ls`) are shown with every control character made visible."""

from __future__ import annotations

import pytest

from roost.core import fleet, present

from conftest import Env

# Every C0 and C1 control and DEL, and the sequences a hostile string would carry: OSC 52 (the
# clipboard), a title, a clear screen, a cursor move that forges a row, a right-to-left override.
CONTROLS = "".join(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))
SEQUENCES = [
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b]0;owned\x1b\\",
    "\x1b[2J\x1b[H",
    "\r\x1b[1Aforged  idle",
    "\x9b31m",
    "\u202eexe.txt",
]


def _raw(text: str) -> list[str]:
    """The control characters `text` still holds (none may reach a terminal)."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]


@pytest.mark.parametrize("hostile", [CONTROLS, *SEQUENCES])
def test_ls_all_table_shows_a_hosts_strings_visibly(hostile: str) -> None:
    row = {
        "host": "h" + hostile,
        "name": "a" + hostile,
        "status": "idle" + hostile,
        "provider": "claude" + hostile,
        "pid": 7,
        "cwd": "/w" + hostile,
    }
    shown = fleet.table([row])
    assert _raw(shown) == []
    assert "\u202e" not in shown
    assert shown.count("\n") == 2  # the header and one row: no forged line
    assert _raw(fleet.unreachable_line("h" + hostile, "down" + hostile)) == []


def test_every_control_has_a_visible_form() -> None:
    shown = present.visible(CONTROLS)
    assert _raw(shown) == [] and shown.count("\\x") == len(CONTROLS)


@pytest.mark.tmux
def test_ls_shows_a_folders_control_characters_visibly(world: Env) -> None:
    hostile = world.tmp / "w\x1b]52;c;ZXZpbA==\x07x"
    hostile.mkdir()
    world.roost("spawn", "a", "--provider", "command", "--cwd", str(hostile), "--", "sleep", "600")
    shown = world.roost("ls").stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert "w\\x1b]52;c;ZXZpbA==\\x07x" in shown
    assert world.ls()["a"]["cwd"] == str(hostile)  # the JSON keeps the real name (escaped)
