"""system/programs.py: what a program run on roost's terminal said is kept bounded."""

from __future__ import annotations

from roost.system import programs


def test_a_flood_on_stderr_keeps_only_its_end() -> None:
    """`roost --host H attach` keeps ssh's stderr for its reason; a ProxyCommand that floods
    it was read whole into memory."""
    flood = "head -c 300000 /dev/zero >&2; echo 'the reason' >&2; exit 3"
    code, said = programs.on_terminal_keeping_stderr(["sh", "-c", flood])
    assert code == 3
    assert len(said.encode()) == programs.STDERR_KEPT
    assert said.endswith("\0the reason\n")
