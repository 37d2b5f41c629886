"""The real Claude Code CLI, offline, in a private tmux: what roost relies on, proven without roost.

Claude Code (pinned in tests/real_claude.py) is installed from npm once into a cache and talks to
tests/anthropic_stub.py on 127.0.0.1. Its HOME is a temp dir whose ~/.claude.json skips every
first-run dialog; hooks come from a `--settings` file and log their JSON payloads.

What is checked, because roost's providers, status detection and send depend on it:
- `--session-id <uuid>` starts a session at an idle prompt; hooks carry session_id and
  transcript_path; the transcript appears at the first message, under
  ~/.claude/projects/<cwd with non-alphanumerics as '-'>/<uuid>.jsonl.
- a pasted prompt plus a separate Enter is submitted; busy shows "esc to interrupt" and a
  spinner line; the reply lands on screen, in the transcript and in the Stop hook.
- `/exit` ends it (SessionEnd), `--resume <uuid>` in the same cwd continues the same file.
- `--resume <unknown>` and reusing a `--session-id` fail with known messages.
- a tool needing permission shows a dialog, and a Notification hook (permission_prompt) follows.
- the user's real ~/.claude/settings.json is never written.

Run alone with `pytest -m real_claude -s` to see the screens it keeps.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from anthropic_stub import REPLY_PREFIX, running_stub
from real_claude import (
    BUSY_CUE,
    EXIT_CUE,
    PERMISSION_CUE,
    SPINNER_RE,
    ClaudeWorld,
    input_box,
    install_claude,
    is_ready,
    project_key,
    read_transcript,
    transcript_texts,
    wait_for,
)

COMMON_HOOK_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name"}


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    if shutil.which("tmux") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("the real_claude tests need tmux and npm (.ci/run installs them)")
        pytest.skip("needs tmux and npm")
    return install_claude()


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


@pytest.fixture
def cc(tmp_path_factory: pytest.TempPathFactory, claude_bin: Path) -> Iterator[ClaudeWorld]:
    real_settings = Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    before = _stat(real_settings)
    base = tmp_path_factory.mktemp("cc")
    with running_stub() as stub:
        world = ClaudeWorld(base, stub, claude_bin)
        try:
            yield world
        finally:
            world.close()
            for name, text in world.screens.items():
                print(f"\n===== screen: {name} =====\n{text.rstrip()}")
            print("\n===== hooks =====")
            for payload in world.hooks():
                print(json.dumps(payload))
    assert _stat(real_settings) == before, "the real ~/.claude/settings.json was written"
    assert not (world.home / ".claude" / "settings.json").exists(), (
        "--settings must not be copied into the user's settings.json"
    )


@pytest.mark.real_claude
@pytest.mark.timeout(180)
def test_session_start_send_exit_resume(cc: ClaudeWorld) -> None:
    sid = str(uuid.uuid4())
    transcript = cc.transcript(sid)
    assert transcript.parent.name == project_key(cc.work)

    # -- start: idle prompt, SessionStart hook, no transcript yet --------------------------------
    pane = cc.start("--session-id", sid)
    cc.wait_ready(pane)
    cc.keep("idle after start", pane)
    start = cc.wait_hooks("SessionStart")[0]
    assert start.keys() >= COMMON_HOOK_FIELDS
    assert start["hook_event_name"] == "SessionStart"
    assert start["source"] == "startup"
    assert start["session_id"] == sid
    assert start["transcript_path"] == str(transcript)
    assert start["cwd"] == str(cc.work)
    assert not transcript.exists(), "2.1.332 writes the transcript at the first message"

    # -- a prompt while the stub holds the reply: busy on screen ---------------------------------
    cc.stub.set_delay(30)
    cc.submit(pane, "first prompt")
    # Busy starts at once (the spinner reads "(running UserPromptSubmit hook · 0s)" while the
    # hook runs); the request reaches the API after the hooks.
    cc.wait(pane, lambda s: BUSY_CUE in s and SPINNER_RE.search(s), "the busy state")
    prompt = cc.wait_hooks("UserPromptSubmit")[0]
    assert prompt["prompt"] == "first prompt" and prompt["session_id"] == sid
    wait_for(lambda: cc.stub.messages("main"), 20, "the turn to reach the stub")
    wait_for(transcript.exists, 10, "the transcript file after the first prompt")
    busy = cc.wait(pane, lambda s: BUSY_CUE in s and "hook" not in s, "busy, past the hooks")
    cc.keep("busy (stub holding the reply)", pane)
    assert SPINNER_RE.search(busy)
    assert "❯ first prompt" in busy  # the prompt moved into the conversation
    assert input_box(busy) == ""  # the prompt box stays drawn, empty, while busy
    assert not is_ready(busy)
    cc.stub.set_delay(0)
    cc.stub.release()

    # -- the reply: on screen, back to idle, Stop hook, transcript --------------------------------
    cc.wait_screen(pane, f"● {REPLY_PREFIX}first prompt")
    cc.wait_ready(pane)
    cc.keep("idle after reply", pane)
    stop = cc.wait_hooks("Stop")[0]
    assert stop.keys() >= COMMON_HOOK_FIELDS
    assert stop["session_id"] == sid and stop["transcript_path"] == str(transcript)
    assert (
        stop.get("last_assistant_message", f"{REPLY_PREFIX}first prompt")
        == f"{REPLY_PREFIX}first prompt"
    )
    # The assistant entry can land in the file a little after the Stop hook and the screen.
    wait_for(
        lambda: (
            f"{REPLY_PREFIX}first prompt"
            in transcript_texts(read_transcript(transcript), "assistant")
        ),
        10,
        "the reply in the transcript",
    )
    entries = read_transcript(transcript)
    assert "first prompt" in transcript_texts(entries, "user")
    assert {e.get("sessionId") for e in entries if "sessionId" in e} == {sid}
    assert cc.stub.user_texts() == ["first prompt"]

    # -- /exit: the process ends and tells how to resume -------------------------------------------
    cc.submit(pane, "/exit")
    gone = cc.wait_dead(pane)
    cc.keep("after /exit", pane)
    assert EXIT_CUE in gone and f"--resume {sid}" in gone
    end = cc.wait_hooks("SessionEnd")[0]
    assert end["session_id"] == sid and end["reason"] == "prompt_input_exit"

    # -- reusing the id for a new session is refused, an unknown id cannot be resumed -----------
    # (Run without a tty: on a tty the "already in use" line is sometimes wiped from the pane.)
    refused = cc.run_plain("--session-id", sid)
    assert refused.returncode == 1
    assert f"Error: Session ID {sid} is already in use." in refused.stderr
    unknown = str(uuid.uuid4())
    missing = cc.run_plain("--resume", unknown)
    assert missing.returncode == 1
    assert f"No conversation found with session ID: {unknown}" in missing.stderr
    # On a tty it exits at once too; the message may or may not survive on the pane, and
    # tmux may not know the exit status (see PrivateTmux.dead_status).
    bad = cc.start("--resume", unknown, hooks=False)
    cc.wait_dead(bad)
    assert cc.tmux.dead_status(bad) in (1, None)
    cc.keep("resume unknown id (tty)", bad)

    # -- resume in the same cwd continues the same transcript file --------------------------------
    size_before = transcript.stat().st_size
    pane2 = cc.start("--resume", sid)
    resumed = cc.wait_ready(pane2)
    cc.keep("idle after --resume", pane2)
    assert f"{REPLY_PREFIX}first prompt" in resumed  # the old conversation is shown again
    start2 = cc.wait_hooks("SessionStart", 2)[1]
    assert start2["source"] == "resume" and start2["session_id"] == sid
    assert start2["transcript_path"] == str(transcript)
    cc.submit(pane2, "second prompt")
    cc.wait_screen(pane2, f"● {REPLY_PREFIX}second prompt")
    cc.wait_ready(pane2)
    stop2 = cc.wait_hooks("Stop", 2)[1]
    assert stop2["session_id"] == sid
    assert (
        stop2.get("last_assistant_message", f"{REPLY_PREFIX}second prompt")
        == f"{REPLY_PREFIX}second prompt"
    )
    wait_for(
        lambda: (
            f"{REPLY_PREFIX}second prompt"
            in transcript_texts(read_transcript(transcript), "assistant")
        ),
        10,
        "second reply",
    )
    assert transcript.stat().st_size > size_before
    texts = transcript_texts(read_transcript(transcript), "user")
    assert texts.index("first prompt") < texts.index("second prompt")
    assert sorted(p.name for p in transcript.parent.glob("*.jsonl")) == [f"{sid}.jsonl"]
    # The resumed request carried the whole conversation to the API.
    last = cc.stub.messages("main")[-1].body["messages"]
    sent = json.dumps(last)
    assert "first prompt" in sent and f"{REPLY_PREFIX}first prompt" in sent

    # -- Ctrl-C twice at the idle prompt exits too -------------------------------------------------
    cc.tmux.keys(pane2, "C-c")
    cc.wait_screen(pane2, "Press Ctrl-C again to exit")
    cc.keep("after one C-c", pane2)
    assert f"--resume {sid}" in second_ctrl_c(cc, pane2)
    assert cc.wait_hooks("SessionEnd", 2)[1]["reason"] == "prompt_input_exit"

    # -- what fired, in order ----------------------------------------------------------------
    events = [h["hook_event_name"] for h in cc.hooks()]
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
    ]
    assert all(h["session_id"] == sid and h.keys() >= COMMON_HOOK_FIELDS for h in cc.hooks())
    # Nothing but conversation turns reached the stub (nonessential traffic is off).
    assert cc.stub.unknown == []
    assert [r.kind for r in cc.stub.requests] == ["main", "main"]


@pytest.mark.real_claude
@pytest.mark.timeout(180)
def test_permission_dialog_waits_and_notifies(cc: ClaudeWorld) -> None:
    sid = str(uuid.uuid4())
    pane = cc.start("--session-id", sid, "--permission-mode", "default")
    cc.wait_ready(pane)
    cc.keep("idle (--permission-mode default)", pane)

    # A file-writing Bash call needs permission in the default mode ("echo hi" alone would not:
    # read-only commands are allowed without asking).
    marker = cc.work / "made-by-tool.txt"
    cc.stub.queue_tool_use(
        "Bash", {"command": f"echo roost > {marker.name}", "description": "Write a marker file"}
    )
    cc.submit(pane, "please write the file")
    dialog = cc.wait_screen(pane, PERMISSION_CUE)
    cc.keep("permission dialog", pane)
    assert "Bash command" in dialog and f"echo roost > {marker.name}" in dialog
    assert "❯ 1. Yes" in dialog and "Esc to cancel" in dialog
    assert input_box(dialog) is None and not is_ready(dialog)
    assert not marker.exists()

    # The hook for it comes ~6 s after the dialog.
    note = cc.wait_hooks("Notification", timeout=20)[0]
    assert note.keys() >= COMMON_HOOK_FIELDS and note["session_id"] == sid
    assert note["notification_type"] == "permission_prompt"

    # Enter takes the preselected "1. Yes": the tool runs, its result goes back, a reply follows.
    cc.tmux.keys(pane, "Enter")
    cc.wait_screen(pane, f"{REPLY_PREFIX}tool result:")
    cc.wait_ready(pane)
    cc.keep("idle after the tool ran", pane)
    assert marker.read_text().strip() == "roost"
    assert cc.wait_hooks("Stop")[0]["session_id"] == sid
    assert [h["hook_event_name"] for h in cc.hooks()] == [
        "SessionStart",
        "UserPromptSubmit",
        "Notification",
        "Stop",
    ]


# -- the stub on its own (no Claude Code needed) --------------------------------------------------


def _post(
    url: str, body: dict[str, Any], path: str = "/v1/messages?beta=true"
) -> tuple[int, str, str]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json", "x-api-key": "dummy"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


USER_TURN: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 100,
    "tools": [{"name": "Bash"}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>ignore me</system-reminder>"},
                {"type": "text", "text": "hello stub"},
            ],
        }
    ],
}


def test_stub_streams_a_deterministic_reply() -> None:
    with running_stub() as stub:
        status, ctype, text = _post(stub.url, {**USER_TURN, "stream": True})
    assert status == 200 and ctype.startswith("text/event-stream")
    events = _sse(text)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(names)
    reply = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert reply == f"{REPLY_PREFIX}hello stub"
    delta = dict(events)["message_delta"]
    assert delta["delta"]["stop_reason"] == "end_turn" and delta["usage"]["output_tokens"] > 0
    assert [r.kind for r in stub.requests] == ["main"]
    assert stub.requests[0].query == {"beta": ["true"]}
    assert stub.user_texts() == ["hello stub"]


def test_stub_json_reply_count_tokens_structured_and_unknown() -> None:
    with running_stub() as stub:
        status, _, text = _post(stub.url, {**USER_TURN, "stream": False})
        assert status == 200
        message = json.loads(text)
        assert message["content"] == [{"type": "text", "text": f"{REPLY_PREFIX}hello stub"}]
        assert message["stop_reason"] == "end_turn"
        status, _, text = _post(stub.url, USER_TURN, "/v1/messages/count_tokens?beta=true")
        assert status == 200 and json.loads(text)["input_tokens"] > 0
        titled = {
            "model": "haiku",
            "max_tokens": 10,
            "messages": USER_TURN["messages"],
            "output_config": {
                "format": {
                    "type": "json_schema",
                    "schema": {
                        "type": "object",
                        "properties": {"title": {"type": "string"}},
                        "required": ["title"],
                    },
                }
            },
        }
        status, _, text = _post(stub.url, titled)
        assert json.loads(json.loads(text)["content"][0]["text"]) == {"title": "stub title"}
        status, _, text = _post(stub.url, {}, "/v1/nothing-here")
        assert status == 404 and json.loads(text)["error"]["type"] == "not_found_error"
        assert [r.path for r in stub.unknown] == ["/v1/nothing-here"]
        assert [r.kind for r in stub.messages()] == ["main", "side"]


def test_stub_delay_release_and_scripted_tool_use() -> None:
    import threading
    import time

    with running_stub() as stub:
        stub.set_delay(30)
        done: list[float] = []
        started = time.monotonic()

        def post_and_note_when_answered() -> None:
            _post(stub.url, USER_TURN)
            done.append(time.monotonic())

        worker = threading.Thread(target=post_and_note_when_answered)
        worker.start()
        wait_for(lambda: stub.messages(), 5, "the request")
        time.sleep(0.3)
        assert not done  # held
        stub.set_delay(0)
        stub.release()
        worker.join(5)
        assert done and done[0] - started < 5

        stub.queue_tool_use("Bash", {"command": "true"})
        _, _, text = _post(stub.url, {**USER_TURN, "stream": True})
        events = _sse(text)
        start = dict(events)["content_block_start"]["content_block"]
        assert start["type"] == "tool_use" and start["name"] == "Bash"
        assert dict(events)["message_delta"]["delta"]["stop_reason"] == "tool_use"
        follow = {
            **USER_TURN,
            "messages": [
                *USER_TURN["messages"],
                {"role": "assistant", "content": [start]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ran fine"}],
                },
            ],
        }
        _, _, text = _post(stub.url, {**follow, "stream": False})
        assert json.loads(text)["content"][0]["text"] == f"{REPLY_PREFIX}tool result: ran fine"


@pytest.mark.real_claude
@pytest.mark.timeout(120)
def test_roosts_draft_detection_reads_the_real_prompt_box(cc: ClaudeWorld) -> None:
    """What roost's draft check relies on (issue 14), on the real CLI: the empty `❯` box reads
    as no draft, typed text as a draft; Claude Code keeps a draft and appends pasted text to it
    (so a send on top of it would submit both as one prompt), and shows a long paste as a
    placeholder (so the screen is no faithful copy of a draft: roost refuses, never moves it)."""
    from roost.core import status
    from roost.providers import traits

    line = traits.INPUT_LINES["claude"]

    def draft(screen: str) -> str | None:
        return status.draft(screen, line.markers, line.window, line.placeholders)

    pane = cc.start()
    assert draft(cc.wait_ready(pane)) is None
    cc.tmux.keys(pane, "-l", "draft-words")
    typed = cc.wait(pane, lambda s: draft(s) == "draft-words", "the typed draft")
    cc.keep("a draft", pane)
    assert input_box(typed) == "draft-words"
    cc.tmux.paste(pane, "real message", enter_after=None)
    cc.wait(pane, lambda s: draft(s) == "draft-wordsreal message", "the paste appended")
    cc.tmux.paste(pane, "\n".join(f"line {i}" for i in range(30)), enter_after=None)
    long = cc.wait(pane, lambda s: "[Pasted text #1" in (draft(s) or ""), "a collapsed paste")
    cc.keep("a collapsed paste", pane)
    assert "line 29" not in long


@pytest.mark.real_claude
@pytest.mark.timeout(60)
def test_claude_refuses_to_skip_permissions_as_root(cc: ClaudeWorld) -> None:
    """The refusal tests/fake_agent.py reproduces with FAKE_AGENT_AS_ROOT (run as root)."""
    if os.geteuid() != 0:
        pytest.skip("Claude Code refuses the flag only under root")
    refused = cc.run_plain("--dangerously-skip-permissions", "-p", "hi")
    assert refused.returncode == 1
    assert (
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for "
        "security reasons" in refused.stdout + refused.stderr
    )


def second_ctrl_c(cc: ClaudeWorld, pane: str) -> str:
    """The second Ctrl-C; the pane's last screen once its program exited. Claude Code 2.1.332
    takes a second press only within 800 ms of the first: on a loaded machine that can pass
    before the key arrives (CI: the CLI stayed up, taking it for a first), so while the CLI
    asks for it again, it is pressed again at once."""
    deadline = time.monotonic() + 30
    cc.tmux.keys(pane, "C-c")
    while time.monotonic() < deadline:
        if cc.tmux.pane_dead(pane):
            return cc.screen(pane)
        if "Press Ctrl-C again to exit" in cc.screen(pane):
            cc.tmux.keys(pane, "C-c")
            wait_for_or_none(lambda: cc.tmux.pane_dead(pane), 0.5)
        else:
            time.sleep(0.05)
    return cc.wait_dead(pane, 1)


def wait_for_or_none(predicate: Callable[[], object], timeout: float) -> object:
    """The predicate's first truthy value within `timeout` seconds, else None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := predicate():
            return value
        time.sleep(0.1)
    return predicate() or None
