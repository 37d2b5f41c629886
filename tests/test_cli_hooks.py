"""Codex's notify program and Gemini's hooks reach the roost service as Claude's hooks do (issue
21, branch svc3): roost gives each codex a `notify` program and each gemini hooks in its system
settings file (roost/cli_hook.sh), which append to the agent's CLI event log; the service's
monitor stat()s that log, records each new line as a `hook` event and looks at the agent at
once. On a real tmux with the stand-ins, which run them as the CLIs do (tests/fake_agent.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_stream import Watch, watching

from roost.providers import gemini, hooks

from conftest import Env

PUSHED = 15.0  # well under the monitor's 30 s safety net; generous for a loaded machine


def hook_event(watch: Watch, name: str, event: str, kind: str) -> dict[str, Any] | None:
    return next(
        (
            d
            for d in watch.events()
            if d["kind"] == "hook"
            and d["name"] == name
            and d.get("event") == event
            and d.get("type") == kind
        ),
        None,
    )


def test_a_codex_turn_end_reaches_watch_as_a_hook_event(world: Env) -> None:
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.roost("service", "start")
    with watching(world, "--interval", "60") as watch:
        world.wait_for(lambda: watch.lines, what="watch's first look")
        world.type(world.pane_of("cx"), "hello there")  # codex runs its notify at the turn's end
        world.wait_for(
            lambda: hook_event(watch, "cx", "CodexNotify", "agent-turn-complete"),
            timeout=PUSHED,
            what="codex's turn end as a hook event",
        )
    agent = world.ls()["cx"]
    log = Path(hooks.cli_log_path(str(world.home), agent["id"]))
    assert log.stat().st_mode & 0o777 == 0o600


def test_the_users_own_codex_notify_program_still_runs(world: Env) -> None:
    """roost's notify program takes the place of the one in the user's ~/.codex/config.toml
    (codex runs one): it runs the user's after its own, with the same JSON as last argument,
    each word as written (one holds a space and a `$(...)`, never run by a shell)."""
    import sys

    out = world.tmp / "user-notify.jsonl"
    program = [sys.executable, str(Path(__file__).parent / "bin" / "argv-to-file"), str(out)]
    words = [*program, "a word with $(touch pwned) in it"]
    codex_home = world.user_home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(f"notify = {json.dumps(words)}\n")
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle")
    world.type(world.pane_of("cx"), "hello there")  # codex runs its notify at the turn's end
    line = world.wait_for(
        lambda: out.exists() and out.read_text().endswith("\n") and out.read_text(),
        timeout=PUSHED,
        what="the user's notify program",
    )
    argv = json.loads(line.splitlines()[0])
    assert argv[0] == "a word with $(touch pwned) in it"
    assert json.loads(argv[1])["type"] == "agent-turn-complete"
    assert not (world.tmp / "work" / "pwned").exists()
    agent = world.ls()["cx"]
    assert Path(hooks.cli_log_path(str(world.home), agent["id"])).read_text()  # and roost's own


def test_a_gemini_notification_reaches_watch_as_a_hook_event(
    world: Env, private_home: Path
) -> None:
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    world.wait_status("gm", "idle")
    world.roost("service", "start")
    with watching(world, "--interval", "60") as watch:
        world.wait_for(lambda: watch.lines, what="watch's first look")
        world.type(world.pane_of("gm"), "ask")  # a permission dialog: gemini's Notification hook
        world.wait_for(
            lambda: hook_event(watch, "gm", "Notification", "ToolPermission"),
            timeout=PUSHED,
            what="gemini's notification as a hook event",
        )


def test_gemini_hooks_keep_the_administrators_and_drop_an_inherited_agents() -> None:
    ours = hooks.gemini_hooks("/home/u/.roost", "b" * 8)
    inherited = hooks.gemini_hooks("/home/u/.roost", "a" * 8)
    admin: list[object] = [{"hooks": [{"type": "command", "command": "audit"}]}]
    merged = gemini.with_roost_hooks(
        {**inherited, "AfterAgent": admin + inherited["AfterAgent"]}, ours
    )
    assert merged["AfterAgent"] == admin + ours["AfterAgent"]
    assert "a" * 8 not in json.dumps(merged)
    assert set(merged) == set(hooks.GEMINI_EVENTS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(None, None, id="no-config"),
        pytest.param('notify = ["notify-send", "a b"]\n', ["notify-send", "a b"], id="an-array"),
        # a newline cannot be carried
        pytest.param('notify = ["prog", "two\\nlines"]\n', None, id="a-newline"),
        pytest.param("notify = []\n", None, id="empty"),
        pytest.param('notify = "prog"\n', None, id="a-string"),  # codex wants an array
        pytest.param("notify = [\n", None, id="broken"),  # codex's to report
    ],
)
def test_which_user_notify_programs_roost_passes_on(
    tmp_path: Path, text: str | None, expected: list[str] | None
) -> None:
    from roost.providers.codex import user_notify

    if text is not None:
        (tmp_path / "config.toml").write_text(text)
    assert user_notify({"CODEX_HOME": str(tmp_path)}) == expected
