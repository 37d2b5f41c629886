"""Issue 19, item 9: the words a new user reads. A tmux server loss is not "you stopped it",
name errors say the rule, a CLI's error line beats its usage text, a refused reload says each
reason once, doctor never suggests a wake that must fail, and a spawn logs no stray status."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roost.core import present, starts, status
from roost.core.model import INTENT_RUNNING, Agent
from roost.core.names import name_problem
from roost.core.pane import Pane
from roost.core.reconcile import drift

from conftest import Env


def _classify(**kw: object) -> tuple[str, str]:
    base = dict(
        alive=False,
        has_window=False,
        base_state="stopped",
        roost_stopped=False,
        hook=None,
        screen=None,
        activity=None,
        started_at=None,
        patterns=status.patterns_for({}),
        now=1000.0,
    )
    base.update(kw)
    found, source, _reason = status.classify(**base)  # type: ignore[arg-type]
    return found, source


def test_a_lost_window_is_not_called_stopped() -> None:
    assert _classify() == ("lost", "process")  # meant to run, its window gone: a server loss
    assert _classify(roost_stopped=True) == ("stopped", "process")  # the user stopped it
    assert _classify(spawning=True) == ("starting", "store")  # its window is being made


@pytest.mark.tmux
def test_after_a_server_loss_agents_read_lost_and_the_stopped_one_stopped(world: Env) -> None:
    for name in ("a", "b", "c"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    world.roost("kill", "b")
    world.roost("hibernate", "c")
    world.tmux("kill-server")
    agents = world.ls()
    assert {n: a["status"] for n, a in agents.items()} == {
        "a": "lost",
        "b": "stopped",
        "c": "hibernated",
    }
    row = next(line for line in world.roost("ls").stdout.splitlines() if line.startswith("a "))
    assert " lost " in row, row


@pytest.mark.parametrize("name", ["名前", "héllo", "a.b", "a b"])
def test_a_name_error_states_the_rule(name: str) -> None:
    problem = name_problem(name) or ""
    assert "ASCII letters, digits, '-' and '_'" in problem, problem
    bad = next(ch for ch in name if not (ch.isascii() and (ch.isalnum() or ch in "-_")))
    assert repr(bad) in problem, problem  # and which character broke it


CODEX_BAD_FLAG = """error: unexpected argument '--bogus' found

  tip: to pass '--bogus' as a value, use '-- --bogus'

Usage: codex [OPTIONS] [PROMPT]
       codex [OPTIONS] <COMMAND> [ARGS]

For more information, try '--help'.

Pane is dead (status 2, Tue Dec  1 21:50:00 2026)
"""


def test_a_dead_start_keeps_the_error_line_not_the_usage() -> None:
    words = starts.last_words(CODEX_BAD_FLAG)
    assert words.startswith("error: unexpected argument '--bogus' found"), words
    assert "Usage:" not in words and "--help" not in words, words
    assert starts.last_words("fake\n\nError: boom\n") == "fake / Error: boom"  # as before


def test_a_refused_reload_says_each_reason_once() -> None:
    why = "--dangerously-skip-permissions cannot be used with root/sudo privileges"
    failed = {f"a{i}": why for i in range(11)} | {"z": "other words"}
    text = present.reload_refused(failed)
    assert text.count(why) == 1 and text.count("other words") == 1, text
    assert "a0, a1, a10, a2" in text  # the agents it concerns, once each


def _agent(name: str, cwd: str) -> Agent:
    return Agent(
        id=f"id-{name}", name=name, provider="claude", cwd=cwd, home=name, intent=INTENT_RUNNING
    )


def _keeper(session: str) -> Pane:
    return Pane(
        session_id=f"${session}",
        session_name=session,
        window_id="@0",
        window_name="home",
        window_index=0,
        pane_id="%0",
        pid=1,
        dead=False,
        dead_status=None,
        agent_id="",
        is_keeper=True,
        is_home=True,
    )


def test_doctor_never_suggests_a_wake_whose_cwd_is_gone(tmp_path: Path) -> None:
    here = _agent("here", str(tmp_path))
    gone = _agent("gone", str(tmp_path / "deleted"))
    panes = [_keeper("here"), _keeper("gone")]
    found = {f.subject: f for f in drift([here, gone], panes, "roost", missing_cwds={gone.cwd})}
    assert found["here"].advice == "roost wake here"
    assert "working directory" in found["gone"].problem and gone.cwd in found["gone"].problem
    advice = found["gone"].advice  # the directory first: a wake alone must fail
    assert advice.startswith(f"mkdir -p {gone.cwd}") and "roost rm gone" in advice, advice


@pytest.mark.tmux
def test_doctor_on_a_real_tmux_names_the_missing_cwd(world: Env) -> None:
    work = world.tmp / "doomed"
    work.mkdir()
    world.roost("spawn", "a", "--cwd", str(work))
    world.tmux("kill-window", "-t", "=a:a")  # its window lost while it should run
    os.rmdir(work)
    out = world.roost("doctor", check=False).stdout
    line = next(x for x in out.splitlines() if x.startswith("BAD  a:"))
    fix = out.splitlines()[out.splitlines().index(line) + 1]
    assert str(work) in line and fix.strip().startswith("fix: mkdir -p"), out


@pytest.mark.tmux
def test_real_codex_refusing_a_flag_says_its_error_line(world: Env) -> None:
    """Codex 0.169.0 (clap) prints `error: unexpected argument …`, a tip, its usage and a
    `--help` pointer; the failed spawn's reason is the error, not the usage."""
    from real_codex import install_codex

    codex = install_codex()
    proc = world.roost(
        "spawn",
        "cx",
        "--provider",
        "codex",
        "--cwd",
        str(world.tmp / "work"),
        "--",
        "--bogus",
        env={"ROOST_CODEX_BIN": str(codex)},
        check=False,
    )
    assert proc.returncode != 0, proc.stdout
    assert "error: unexpected argument '--bogus' found" in proc.stderr, proc.stderr
    assert "Usage:" not in proc.stderr and "--help" not in proc.stderr, proc.stderr


@pytest.mark.tmux
def test_a_screenless_agent_is_called_what_it_is(world: Env) -> None:
    """`roost capture` (and the TUI's preview, which shows its words) of an agent without a
    window: hibernated, stopped by the user, or lost with the server."""
    for name in ("h", "s", "l"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    world.roost("hibernate", "h")
    world.roost("kill", "s")
    world.tmux("kill-window", "-t", "=s:s")
    world.tmux("kill-session", "-t", "=l")
    said = {n: world.roost("capture", n, check=False).stderr for n in ("h", "s", "l")}
    assert "hibernates" in said["h"] and "stopped" not in said["h"], said
    assert "you stopped it" in said["s"], said
    assert "lost" in said["l"] and "stopped" not in said["l"], said


@pytest.mark.tmux
def test_a_refused_reload_on_a_real_tmux_says_the_clis_reason_once(world: Env) -> None:
    root = {"FAKE_AGENT_AS_ROOT": "1"}  # the fake claude refuses to skip permissions, as claude
    names = ("r1", "r2", "r3")
    for name in names:
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"), env=root)
    for name in names:
        world.wait_status(name, "idle")
    refused = world.roost("reload", "--dangerous", check=False, env=root)
    why = "--dangerously-skip-permissions cannot be used with root/sudo privileges"
    assert refused.returncode == 1 and refused.stderr.count(why) == 1, refused.stderr
    assert "r1, r2, r3" in refused.stderr, refused.stderr
