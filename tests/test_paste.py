"""Issue 18.2 and 19 on a real tmux with the fake agent CLIs: what roost pastes into an agent is
text, never keys (a message, a notice or a first prompt cannot end the bracketed paste early and
type what follows), and roost's own interrupted paste is recognised as roost's."""

from __future__ import annotations

import signal
import subprocess
import sys

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
    world.roost(
        "spawn",
        name,
        "--cwd",
        str(world.tmp / "work"),
        *args,
        env={"FAKE_AGENT_RECEIVED_DIR": str(world.tmp / "received")},
    )


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


# ---- roost's own interrupted paste (issues 18.8, 19.3) ---------------------------------------
def cut_before_enter(world: Env, sig: str) -> None:
    """Make the next Enter roost presses the moment its process is signalled (KILL: a kill -9
    between paste and Enter; INT: Ctrl-C there): a tmux on PATH that signals its caller instead
    of pressing Enter, once."""
    import shutil

    folder = world.tmp / "cutbin"
    folder.mkdir(exist_ok=True)
    flag = world.tmp / "cut-next-enter"
    flag.write_text("")
    real = shutil.which("tmux")
    wrapper = folder / "tmux"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{flag}" ] && [ "$(eval echo \\${{$#}})" = Enter ]; then\n'
        f'  case "$*" in *send-keys*)\n'
        f'    rm -f "{flag}"; kill -{sig} "$PPID"; sleep 2; exit 1;; esac\n'
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    world.env["PATH"] = f"{folder}:{world.env['PATH']}"


def test_a_send_killed_between_paste_and_enter_is_finished_by_the_next(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    cut_before_enter(world, "KILL")
    killed = world.roost("send", "cl", "first message", check=False)
    assert killed.returncode == -9
    world.wait_screen(world.pane_of("cl"), "❯ first message")  # left typed, not submitted

    sent = world.roost("send", "cl", "second message", check=False)
    assert sent.returncode == 0, sent.stderr
    assert (
        'first submitted "first message", the message roost\'s interrupted send left on '
        "cl's input line" in sent.stderr
    )
    world.wait_for(lambda: len(received(world)) == 2, what="both messages")
    assert received(world) == ["first message", "second message"]  # each once, in order


def test_ctrl_c_between_paste_and_enter_says_what_was_left_where(world: Env) -> None:
    spawn(world, "cl")
    world.wait_status("cl", "idle")
    cut_before_enter(world, "INT")
    # as a shell runs a foreground command: Ctrl-C's default action (a parent that ignores
    # SIGINT would hand the ignoring down)
    stopped = subprocess.run(
        [sys.executable, "-m", "roost", "send", "cl", "first message"],
        env=world.env,
        cwd=world.tmp,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert stopped.returncode == 130
    assert (
        "interrupted between paste and Enter: the message is typed on cl's input line, "
        "not submitted" in stopped.stderr
    )
    assert "roost send cl submits it first" in stopped.stderr
    world.wait_screen(world.pane_of("cl"), "❯ first message")
    world.roost("send", "cl", "second message")
    world.wait_for(lambda: len(received(world)) == 2, what="both messages")
    assert received(world) == ["first message", "second message"]


def test_a_notice_cut_off_before_its_enter_is_delivered_once_by_the_next_delivery(
    world: Env,
) -> None:
    """Issue 18.8: `roost _notify` killed between paste and Enter no longer wedges the parent:
    the next delivery finishes it, and the notice is not sent again."""
    from test_notify_e2e import create_kid, prompts

    # The kid's prompt on its command line: on the service's MCP endpoint it would be typed in,
    # and this test's first paste would be that one, not `roost _notify`'s.
    world.roost("service", "stop")
    world.roost("spawn", "lead", "--detached")
    lead_id = world.ls()["lead"]["id"]
    cut_before_enter(world, "KILL")  # the kid's Stop starts `roost _notify`: it dies here
    assert create_kid(world, lead_id, "work 1")["prompt_delivered"] is True
    world.wait_for(
        lambda: not (world.tmp / "cut-next-enter").exists(),
        timeout=30,
        what="the notice's delivery cut off",
    )
    world.wait_screen(world.pane_of("lead"), "❯ [roost] kid finished its turn")
    world.roost("_notify")  # what the next child's event runs
    told = [p for p in prompts(world, "lead") if p.startswith("[roost]")]
    assert told == ["[roost] kid finished its turn: done working"]
    world.roost("_notify")
    assert len([p for p in prompts(world, "lead") if p.startswith("[roost]")]) == 1
