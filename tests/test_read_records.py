"""`roost read NAME -n N` reads every CLI's last N messages from its own record (issue 35):
claude's transcript, codex's rollout, gemini's chat file, aider's chat history, each through
system/untrusted.py. Before, codex, gemini and aider agents printed their whole screen whatever
N was, and a claude agent whose hooks had not named its transcript printed nothing. Only a
`command`, which keeps no record, shows its screen, and says so."""

from __future__ import annotations

import json
import uuid

import pytest
from test_import_hostile import one_agent, write

from conftest import Env

pytestmark = pytest.mark.tmux

PROMPTS = ("first task", "second task", "third task")
LAST_TWO = [
    {"role": "user", "text": "third task"},
    {"role": "assistant", "text": "echo: third task"},
]


@pytest.mark.parametrize("provider", ["claude", "codex", "gemini", "aider"])
def test_read_n_gives_exactly_the_last_messages_of_the_clis_record(
    world: Env, provider: str
) -> None:
    world.roost("spawn", "ag", "--provider", provider, "--cwd", str(world.tmp / "work"))
    world.wait_status("ag", "idle", 30)
    for text in PROMPTS:
        said = world.roost("send", "ag", text, "--wait", timeout=120).stdout
        assert said == f"echo: {text}\n", said
    found = json.loads(world.roost("read", "ag", "-n", "2", "--json").stdout)
    assert found == {"name": "ag", "source": "transcript", "messages": LAST_TWO}, found
    shown = world.roost("read", "ag", "-n", "2")
    assert shown.stdout == "user: third task\nassistant: echo: third task\n", shown.stdout
    assert shown.stderr == ""
    three = json.loads(world.roost("read", "ag", "-n", "3", "--json").stdout)["messages"]
    assert three == [{"role": "assistant", "text": "echo: second task"}, *LAST_TWO]


TOOL_RESULT = [{"type": "tool_result", "content": "no words of anyone's"}]


def _transcript_line(kind: str, text: str) -> str:
    content = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}})


def test_a_claude_agent_whose_hooks_never_named_its_transcript_is_read_from_it(
    world: Env,
) -> None:
    """An agent imported from an export without its transcript's path, hibernated: its
    transcript is where Claude Code keeps its session's. Before, `read` said it had none."""
    sid = str(uuid.uuid4())
    folder = world.user_home / ".claude" / "projects" / "-srv-w"
    folder.mkdir(parents=True)
    lines = [
        _transcript_line("user", "an old question"),
        _transcript_line("assistant", "an old answer"),
        "{not json",  # skipped, as every reader of it does
        json.dumps({"type": "user", "message": {"role": "user", "content": TOOL_RESULT}}),
        _transcript_line("user", "third task"),
        _transcript_line("assistant", "echo: third task"),
    ]
    (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")
    world.roost("import", write(world, one_agent(provider_session_id=sid)))
    found = json.loads(world.roost("read", "guest", "-n", "2", "--json").stdout)
    assert found == {"name": "guest", "source": "transcript", "messages": LAST_TWO}, found
    assert world.ls()["guest"]["state"] != "running"  # read woke nothing


def test_a_command_keeps_no_record_so_its_screen_is_shown_and_said_so(world: Env) -> None:
    world.roost(
        "spawn", "sh", "--provider", "command", "--cwd", str(world.tmp / "work"),
        "--", "sh", "-c", "echo screen-words; sleep 300",
    )  # fmt: skip
    world.wait_for(lambda: "screen-words" in world.roost("capture", "sh").stdout, 30)
    found = json.loads(world.roost("read", "sh", "-n", "2", "--json").stdout)
    assert found["source"] == "screen" and "screen-words" in found["screen"], found
    assert found["note"] == (
        "sh: its CLI keeps no record of its conversation; the tail of its screen instead"
    )
    shown = world.roost("read", "sh", "-n", "2")
    assert "screen-words" in shown.stdout
    assert shown.stderr.splitlines() == [f"roost: {found['note']}"]


def test_a_record_with_no_message_yet_says_so_instead_of_a_screen(world: Env) -> None:
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle", 30)
    found = json.loads(world.roost("read", "cx", "--json").stdout)
    assert found == {
        "name": "cx",
        "source": "none",
        "note": "cx: its CLI's record of its conversation holds no message yet",
    }
    shown = world.roost("read", "cx", check=False)
    assert shown.returncode == 1 and shown.stdout == ""
    assert shown.stderr == "roost: cx: its CLI's record of its conversation holds no message yet\n"
