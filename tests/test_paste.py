"""Issue 18.2 and 19 on a real tmux with the fake agent CLIs: what roost pastes into an agent is
text, never keys (a message, a notice or a first prompt cannot end the bracketed paste early and
type what follows), and roost's own interrupted paste is recognised as roost's."""

from __future__ import annotations

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

# One pass that removes "ESC [ 2 0 1 ~" rebuilds the marker from the pieces around it; CR after
# it would be an Enter, ESC [ Z a Shift-Tab (claude's permission mode), ^C an interrupt.
HOSTILE = "first part\x1b[20\x1b[201~1~\rsecond part \x1b[Z\x03injected"


def received(world: Env) -> list[str]:
    folder = world.tmp / "received"
    return [p.read_text() for p in sorted(folder.glob("*.txt"))] if folder.is_dir() else []


def spawn(world: Env, name: str, *args: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"), *args,
                env={"FAKE_AGENT_RECEIVED_DIR": str(world.tmp / "received")})


def one_message(world: Env, name: str) -> str:
    """The one message the agent received, once it has had time to receive a second."""
    world.wait_for(lambda: received(world), what="a message received")
    world.wait_status(name, "idle")  # a second prompt would be submitted before it is idle
    got = received(world)
    assert len(got) == 1, got  # not split in two by an early end of the paste
    assert "\x1b" not in got[0] and "\x03" not in got[0]
    assert got[0].startswith("first part") and got[0].endswith("injected")
    return got[0]


def test_an_end_of_paste_marker_rebuilt_from_pieces_cannot_split_a_send(world: Env) -> None:
    spawn(world, "pb1")
    world.wait_status("pb1", "idle")
    sent = world.roost("send", "pb1", input=HOSTILE, check=False)
    assert sent.returncode == 0, sent.stderr
    one_message(world, "pb1")


def test_a_first_prompt_typed_in_cannot_end_its_paste_early(world: Env) -> None:
    spawn(world, "ai", "--provider", "aider", "--prompt", HOSTILE)
    one_message(world, "ai")
