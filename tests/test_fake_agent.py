"""Tests of the fake provider CLIs (tests/fake_agent.py) that the rest of the suite relies on.

Scripted behaviour runs the fake with stdin as a pipe (it reads keys from the pipe
the same way it reads a raw tty); terminal behaviour runs it in a private tmux server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import files_held

TESTS = Path(__file__).resolve().parent
FAKE = TESTS / "fake_agent.py"
BIN = TESTS / "bin"


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TMUX", "FAKE_", "ROOST_", "CODEX_"))
    }
    return {
        **base,
        "HOME": str(home),
        "PATH": f"{BIN}{os.pathsep}{base.get('PATH', '')}",
        "FAKE_AGENT_PYTHON": sys.executable,  # skip pyenv-style shims: faster starts
        "FAKE_AGENT_LOG": str(tmp_path / "starts.jsonl"),
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "my project.v2"  # space and dot: both become '-' in claude's dir name
    path.mkdir()
    return path


def run(
    flavor: str,
    *args: str,
    env: dict[str, str],
    cwd: Path,
    stdin: str = "/exit\n",
    timeout: float = 10,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / flavor), *args],
        input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False,
    )  # fmt: skip


def claude_transcript(env: dict[str, str], cwd: Path, sid: str) -> Path:
    return Path(
        env["HOME"], ".claude", "projects", re.sub(r"[^A-Za-z0-9]", "-", str(cwd)), f"{sid}.jsonl"
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def hook_settings(tmp_path: Path, events: list[str], **matchers: str) -> Path:
    """A settings file whose hooks append each payload as one line to events.jsonl."""
    sink = tmp_path / "events.jsonl"
    hooks = {
        event: [
            {
                **({"matcher": matchers[event]} if event in matchers else {}),
                "hooks": [{"type": "command", "command": f"cat >> '{sink}'; echo >> '{sink}'"}],
            }
        ]
        for event in events
    }
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": hooks}))
    return path


def wait_until(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# --------------------------------------------------------------------------- wrappers & argv


def test_wrappers_work_by_absolute_relative_and_symlinked_path(
    env: dict[str, str], tmp_path: Path
) -> None:
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "claude").symlink_to(BIN / "claude")
    for argv0, cwd in [
        (str(BIN / "codex"), tmp_path),
        ("bin/codex", TESTS),
        (str(link_dir / "claude"), tmp_path),
    ]:
        proc = subprocess.run(
            [argv0, "--bogus"],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=10,
            check=False,
        )
        assert proc.returncode in (1, 2), proc.stderr
        assert "--bogus" in proc.stderr


@pytest.mark.parametrize(
    ("flavor", "message", "code"),
    [
        ("claude", "error: unknown option '--bogus'", 1),
        ("codex", "error: unexpected argument '--bogus' found", 2),
        ("gemini", "Unknown argument: bogus", 1),
        ("aider", "aider: error: unrecognized arguments: --bogus", 2),
    ],
)
def test_unknown_option_is_rejected_in_each_clis_words(
    flavor: str, message: str, code: int, env: dict[str, str], project: Path
) -> None:
    proc = run(flavor, "--bogus", env=env, cwd=project)
    assert (proc.returncode, proc.stderr.strip()) == (code, message)


def test_start_log_records_argv_env_and_failures(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    sid = str(uuid.uuid4())
    env |= {
        "ROOST_AGENT_ID": "a1",
        "MY_VAR": "x",
        "UNRELATED": "y",
        "FAKE_AGENT_EXIT_ON_START": "7",
    }
    assert run("claude", "--session-id", sid, "--model", "m", env=env, cwd=project).returncode == 7
    assert run("claude", "--session-id", "nope", env=env, cwd=project).returncode == 1
    first, second = read_jsonl(tmp_path / "starts.jsonl")
    assert first["flavor"] == "claude" and first["argv"] == ["--session-id", sid, "--model", "m"]
    assert first["session_id"] == sid and first["error"] is None and first["cwd"] == str(project)
    assert first["env"]["ROOST_AGENT_ID"] == "a1" and first["env"]["MY_VAR"] == "x"
    assert "UNRELATED" not in first["env"] and "HOME" not in first["env"]
    assert isinstance(first["pid"], int)
    assert second["session_id"] is None and "Invalid session ID" in second["error"]
    # crashed at start: nothing was written
    assert not claude_transcript(env, project, sid).exists()


# --------------------------------------------------------------------------- claude sessions


def test_new_session_writes_transcript_under_mangled_cwd(
    env: dict[str, str], project: Path
) -> None:
    sid = str(uuid.uuid4())
    proc = run("claude", "--session-id", sid, env=env, cwd=project, stdin="hello there\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert f"fake-claude session {sid}" in proc.stdout
    assert "● echo: hello there" in proc.stdout
    path = claude_transcript(env, project, sid)
    assert "-my-project-v2" in path.parent.name
    user, assistant, _exit = read_jsonl(path)
    assert user["type"] == "user" and user["sessionId"] == sid and user["cwd"] == str(project)
    assert user["message"] == {"role": "user", "content": "hello there"}
    assert assistant["message"] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "echo: hello there"}],
    }


def test_minted_session_id_and_positional_prompt(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    proc = run("claude", "first words", env=env, cwd=project)
    assert "● echo: first words" in proc.stdout
    sid = read_jsonl(tmp_path / "starts.jsonl")[0]["session_id"]
    assert uuid.UUID(sid).version == 4
    assert (
        read_jsonl(claude_transcript(env, project, sid))[0]["message"]["content"] == "first words"
    )


def test_session_id_rules(env: dict[str, str], project: Path, tmp_path: Path) -> None:
    sid = str(uuid.uuid4())
    assert run("claude", "--session-id", sid, env=env, cwd=project).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # in use anywhere under ~/.claude/projects, not only in this cwd
    proc = run("claude", "--session-id", sid, env=env, cwd=elsewhere)
    assert (proc.returncode, proc.stderr.strip()) == (
        1,
        f"Error: Session ID {sid} is already in use.",
    )
    proc = run("claude", "--session-id", "not-a-uuid", env=env, cwd=project)
    assert (proc.returncode, proc.stderr.strip()) == (
        1,
        "Error: Invalid session ID. Must be a valid UUID.",
    )


def test_lazy_transcript_appears_on_first_message(env: dict[str, str], project: Path) -> None:
    sid = str(uuid.uuid4())
    env["FAKE_AGENT_LAZY_TRANSCRIPT"] = "1"
    run(
        "claude", "--session-id", sid, env=env, cwd=project, stdin=""
    )  # EOF: quit without a message
    assert not claude_transcript(env, project, sid).exists()
    assert (
        run("claude", "--session-id", sid, env=env, cwd=project, stdin="hi\n/exit\n").returncode
        == 0
    )
    assert claude_transcript(env, project, sid).exists()


def test_resume_only_in_the_original_cwd(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    sid = str(uuid.uuid4())
    run("claude", "--session-id", sid, env=env, cwd=project, stdin="one\n/exit\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run("claude", "--resume", sid, env=env, cwd=elsewhere)
    assert (proc.returncode, proc.stderr.strip()) == (
        1,
        f"No conversation found with session ID: {sid}",
    )
    missing = str(uuid.uuid4())
    proc = run("claude", "--resume", missing, env=env, cwd=project)
    assert (proc.returncode, proc.stderr.strip()) == (
        1,
        f"No conversation found with session ID: {missing}",
    )

    settings = hook_settings(tmp_path, ["SessionStart"])
    proc = run(
        "claude",
        "--resume",
        sid,
        "--settings",
        str(settings),
        env=env,
        cwd=project,
        stdin="two\n/exit\n",
    )
    assert proc.returncode == 0, proc.stderr
    texts = [
        e["message"]["content"]
        for e in read_jsonl(claude_transcript(env, project, sid))
        if e["type"] == "user"
    ]
    assert texts == ["one", "/exit", "two", "/exit"]
    (start,) = read_jsonl(tmp_path / "events.jsonl")
    assert (start["source"], start["session_id"]) == ("resume", sid)


def test_fork_session_copies_transcript_under_new_id(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    sid = str(uuid.uuid4())
    run("claude", "--session-id", sid, env=env, cwd=project, stdin="original\n/exit\n")
    proc = run(
        "claude", "--resume", sid, "--fork-session", env=env, cwd=project, stdin="forked\n/exit\n"
    )
    assert proc.returncode == 0, proc.stderr
    new_id = read_jsonl(tmp_path / "starts.jsonl")[-1]["session_id"]
    assert new_id != sid
    entries = read_jsonl(claude_transcript(env, project, new_id))
    assert {e["sessionId"] for e in entries} == {new_id}
    assert [e["message"]["content"] for e in entries if e["type"] == "user"][:3] == [
        "original",
        "/exit",
        "forked",
    ]
    assert "forked" not in claude_transcript(env, project, sid).read_text()
    # --session-id alongside --resume needs --fork-session
    proc = run("claude", "--resume", sid, "--session-id", str(uuid.uuid4()), env=env, cwd=project)
    assert proc.returncode == 1 and "--fork-session" in proc.stderr


# --------------------------------------------------------------------------- hooks


def test_hook_payloads_for_a_whole_session(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    sid = str(uuid.uuid4())
    transcript = claude_transcript(env, project, sid)
    names = ["SessionStart", "UserPromptSubmit", "Stop", "Notification", "SessionEnd"]
    settings = json.loads(hook_settings(tmp_path, names).read_text())
    # a second UserPromptSubmit hook proves the transcript is written before hooks fire
    count_users = f"grep -c '\"type\": \"user\"' '{transcript}' >> '{tmp_path}/counts'"
    settings["hooks"]["UserPromptSubmit"].append(
        {"hooks": [{"type": "command", "command": count_users}]}
    )
    proc = run(
        "claude",
        "--session-id",
        sid,
        "--settings",
        json.dumps(settings),  # inline JSON form
        env=env,
        cwd=project,
        stdin="hello\nask\n2\n/exit\n",
    )
    assert proc.returncode == 0, proc.stderr
    events = read_jsonl(tmp_path / "events.jsonl")
    assert [e["hook_event_name"] for e in events] == [
        "SessionStart", "UserPromptSubmit", "Stop",
        "UserPromptSubmit", "Notification", "Stop",
        "SessionEnd",  # /exit, like every slash command of Claude Code, fires no prompt hooks
    ]  # fmt: skip
    for e in events:
        assert (
            e["session_id"] == sid
            and e["transcript_path"] == str(transcript)
            and e["cwd"] == str(project)
        )
    assert events[0]["source"] == "startup"
    assert events[1]["prompt"] == "hello"
    assert events[2]["last_assistant_message"] == "echo: hello"
    assert events[4]["notification_type"] == "permission_prompt" and events[4]["message"]
    assert events[5]["last_assistant_message"] == "denied"
    assert events[6]["reason"] == "exit"
    assert (tmp_path / "counts").read_text().split() == ["1", "2"]


def test_hook_matchers_and_bypass_permissions(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    settings = hook_settings(
        tmp_path, ["SessionStart", "Notification", "SessionEnd"], SessionStart="resume|clear"
    )
    proc = run(
        "claude", "--settings", str(settings), "--dangerously-skip-permissions",
        env=env, cwd=project, stdin="ask\n/clear\n\x04",
    )  # fmt: skip
    assert "● approved" in proc.stdout and "Do you want to proceed?" not in proc.stdout
    events = read_jsonl(tmp_path / "events.jsonl")
    assert [(e["hook_event_name"], e.get("source") or e.get("reason")) for e in events] == [
        ("SessionEnd", "clear"), ("SessionStart", "clear"), ("SessionEnd", "other"),
    ]  # fmt: skip
    assert events[0]["session_id"] != events[1]["session_id"] == events[2]["session_id"]
    assert claude_transcript(env, project, events[1]["session_id"]).exists()


def test_bad_settings_fail_at_start_and_slow_hooks_are_cut_off(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    proc = run("claude", "--settings", '{"hooks": {"Stop": {"oops": 1}}}', env=env, cwd=project)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: Invalid settings")
    proc = run("claude", "--settings", str(tmp_path / "missing.json"), env=env, cwd=project)
    assert proc.returncode == 1 and proc.stderr.startswith("Error: Invalid settings")

    env["FAKE_AGENT_HOOK_TIMEOUT"] = "0.3"
    pid_file = tmp_path / "hook.pid"
    slow_hook = {"type": "command", "command": f"sleep 30 & echo $! > '{pid_file}'; wait"}
    slow = {"hooks": {"Stop": [{"hooks": [slow_hook]}]}}
    started = time.monotonic()
    proc = run("claude", "--settings", json.dumps(slow), env=env, cwd=project, stdin="hi\n/exit\n")
    assert proc.returncode == 0 and "● echo: hi" in proc.stdout
    assert time.monotonic() - started < 5
    hook_child = int(pid_file.read_text())
    wait_until(lambda: gone(hook_child), what="the timed-out hook's child to be killed")


def test_continue_picks_the_latest_transcript_here(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    proc = run("claude", "--continue", env=env, cwd=project)
    assert (proc.returncode, proc.stderr.strip()) == (1, "No conversation found to continue")
    for sid in (str(uuid.uuid4()), latest := str(uuid.uuid4())):
        run("claude", "--session-id", sid, env=env, cwd=project)
        time.sleep(0.01)
    assert run("claude", "-c", env=env, cwd=project).returncode == 0
    assert read_jsonl(tmp_path / "starts.jsonl")[-1]["session_id"] == latest


def test_crash_exits_without_session_end(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    settings = hook_settings(tmp_path, ["SessionEnd"])
    proc = run("claude", "--settings", str(settings), env=env, cwd=project, stdin="crash 42\n")
    assert proc.returncode == 42
    assert not (tmp_path / "events.jsonl").exists()


def test_sigterm_fires_session_end_and_exits_143(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    settings = hook_settings(tmp_path, ["SessionStart", "SessionEnd"])
    proc = subprocess.Popen(
        [str(BIN / "claude"), "--settings", str(settings)], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, env=env, cwd=project,
    )  # fmt: skip
    try:
        events = tmp_path / "events.jsonl"
        # the whole SessionStart line, not just the file: a signal mid-write would mix lines
        wait_until(
            lambda: events.exists() and events.read_text().endswith("\n"), what="SessionStart"
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 143
    finally:
        proc.kill()
    assert [e.get("reason") for e in read_jsonl(tmp_path / "events.jsonl")] == [None, "other"]


# --------------------------------------------------------------------------- message commands


def test_received_text_survives_paste_verbatim(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    received = tmp_path / "received"
    env["FAKE_AGENT_RECEIVED_DIR"] = str(received)
    text = "line one\n\n  indented ❯ line\ttab\n" + "x" * 300
    # tmux's paste-buffer sends line breaks as CR; either way they must not submit
    pasted = "\x1b[200~" + text.replace("\n", "\r") + "\x1b[201~"
    proc = run("claude", env=env, cwd=project, stdin=f"short\n{pasted}\r/exit\n")
    assert (received / "1.txt").read_text() == "short"
    assert (received / "2.txt").read_text() == text
    assert f"[{len(text)} chars, 4 lines, sha256 " in proc.stdout
    assert proc.stdout.count("● echo:") == 2


def test_work_queues_typeahead_and_ask_answers(env: dict[str, str], project: Path) -> None:
    proc = run("claude", env=env, cwd=project, stdin="work 0.2\nlater\nask\n1\nask\n2\n/exit\n")
    out = proc.stdout
    assert (
        out.index("✻ Working… (esc to interrupt)")
        < out.index("● done working")
        < out.index("● echo: later")
    )
    assert "● approved" in out and "● denied" in out


def test_orphan_processes_escape_the_tree(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    orphan_file = tmp_path / "orphans"
    env |= {"FAKE_AGENT_ORPHAN_FILE": str(orphan_file), "ROOST_TAG": "t1"}
    proc = subprocess.Popen(
        [str(BIN / "claude")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=project,
        text=True,
    )
    pids: list[int] = []
    try:
        assert proc.stdin is not None
        proc.stdin.write("orphan\n")
        proc.stdin.flush()
        pids = wait_until(
            lambda: (
                [int(p) for p in orphan_file.read_text().split()] if orphan_file.exists() else []
            )
        )
        agent_pid = read_jsonl(tmp_path / "starts.jsonl")[0]["pid"]
        detached, nohup = pids
        assert os.getsid(detached) == detached  # own session
        assert ppid(detached) != agent_pid  # reparented already
        assert ppid(nohup) == agent_pid
        # nohup sets SIGHUP to ignored after it starts: the pid may be written before that
        assert wait_until(lambda: hup_ignored(nohup), what="nohup ignoring SIGHUP")
        for pid in pids:
            assert "ROOST_TAG=t1" in environ(pid).split("\0")  # tagged env survives, for cleanup
        proc.stdin.write("/exit\n")
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        for pid in pids:
            os.kill(pid, 0)  # both outlive the agent
    finally:
        proc.kill()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def gone(pid: int) -> bool:
    """Dead or a zombie (a container's init may be slow to reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def hup_ignored(pid: int) -> bool:
    sigign = next(
        line
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("SigIgn")
    )
    return bool(int(sigign.split()[1], 16) & (1 << (signal.SIGHUP - 1)))


def environ(pid: int) -> str:
    return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")


# --------------------------------------------------------------------------- other flavors


def test_codex_rollout_resume_and_notify(
    env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    notify_log = tmp_path / "notify.log"
    notify = f'notify=["sh", "-c", "printf %s \\"$1\\" >> {notify_log}", "sh"]'
    proc = run(
        "codex",
        "--dangerously-bypass-approvals-and-sandbox",
        "-c",
        notify,
        "hi",
        env=env,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stderr
    (rollout,) = Path(env["HOME"], ".codex", "sessions").glob("*/*/*/rollout-*.jsonl")
    meta = read_jsonl(rollout)[0]
    sid = meta["payload"]["id"]
    assert meta["type"] == "session_meta" and rollout.name.endswith(f"-{sid}.jsonl")
    assert re.fullmatch(r"rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-.*", rollout.name)
    assert meta["payload"]["cwd"] == str(project) and meta["payload"]["originator"] == "codex-tui"
    assert json.loads(notify_log.read_text())["last-assistant-message"] == "echo: hi"

    assert run("codex", "resume", sid, "again", env=env, cwd=project).returncode == 0
    assert "again" in rollout.read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for where, wanted in [(elsewhere, sid), (project, str(uuid.uuid4()))]:
        proc = run("codex", "resume", wanted, env=env, cwd=where)
        assert (proc.returncode, proc.stderr.strip()) == (
            1,
            f"No saved session found with ID {wanted}",
        )
    proc = run("codex", "--session-id", sid, env=env, cwd=project)
    assert proc.returncode == 2


def test_codex_home_is_honoured(env: dict[str, str], project: Path, tmp_path: Path) -> None:
    env["CODEX_HOME"] = str(tmp_path / "ch")
    run("codex", "--no-daemon", env=env, cwd=project)
    assert not (tmp_path / "ch" / "sessions").exists()  # no rollout before the first message
    run("codex", "--no-daemon", "hi", env=env, cwd=project)
    assert list((tmp_path / "ch" / "sessions").glob("*/*/*/rollout-*.jsonl"))


def gemini_chats(env: dict[str, str], cwd: Path) -> Path:
    """Gemini CLI 0.61's chat folder for a cwd: its slug from ~/.gemini/projects.json."""
    projects = json.loads(Path(env["HOME"], ".gemini", "projects.json").read_text())["projects"]
    return Path(env["HOME"], ".gemini", "tmp", projects[str(cwd)], "chats")


def gemini_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_gemini_session_file_resume_and_one_shot(env: dict[str, str], project: Path) -> None:
    proc = run("gemini", "--yolo", "-i", "hello", env=env, cwd=project)
    assert "✦ echo: hello" in proc.stdout
    (path,) = gemini_chats(env, project).glob("session-*.jsonl")
    head, *entries = gemini_lines(path)
    sid = head["sessionId"]
    assert re.fullmatch(rf"session-\d{{4}}-\d\d-\d\dT\d\d-\d\d-{sid[:8]}\.jsonl", path.name)
    assert head["projectHash"] == hashlib.sha256(str(project).encode()).hexdigest()
    assert [(e["type"], e["content"]) for e in entries if "type" in e][:2] == [
        ("user", [{"text": "hello"}]),
        ("gemini", "echo: hello"),
    ]

    for ref in (sid, "latest", "1"):
        assert run("gemini", "-r", ref, env=env, cwd=project, stdin="more\n/exit\n").returncode == 0
    users = [e["content"][0]["text"] for e in gemini_lines(path) if e.get("type") == "user"]
    assert users.count("more") == 3  # the same file goes on
    missing = str(uuid.uuid4())
    proc = run("gemini", "--resume", missing, env=env, cwd=project)
    assert (proc.returncode, proc.stderr.strip()) == (
        42,
        f'Error resuming session: Invalid session identifier "{missing}".',
    )
    proc = run("gemini", "--session-id", sid, env=env, cwd=project)
    assert proc.returncode == 42 and f'Session ID "{sid}" already exists' in proc.stderr
    # a positional prompt is one-shot: answer and exit without reading stdin
    proc = run("gemini", "once", env=env, cwd=project, stdin="")
    assert proc.returncode == 0 and "✦ echo: once" in proc.stdout


def test_gemini_chooses_no_id_when_given_one_and_keeps_no_empty_session(
    env: dict[str, str], project: Path
) -> None:
    sid = str(uuid.uuid4())
    assert run("gemini", "--session-id", sid, env=env, cwd=project).returncode == 0
    assert not list(gemini_chats(env, project).glob("*"))  # no message: no file left
    assert (
        run("gemini", "--session-id", sid, env=env, cwd=project, stdin="hi\n/exit\n").returncode
        == 0
    )
    (path,) = gemini_chats(env, project).glob(f"session-*-{sid[:8]}.jsonl")
    assert gemini_lines(path)[0]["sessionId"] == sid
    other = project.parent / "other" / project.name  # a second cwd with the same name
    other.mkdir(parents=True)
    run("gemini", "-i", "there", env=env, cwd=other)
    assert gemini_chats(env, other) != gemini_chats(env, project)


def test_aider_chat_history_and_restore(env: dict[str, str], project: Path) -> None:
    args = ("--chat-history-file", "hist.md", "--yes-always")
    proc = run("aider", *args, env=env, cwd=project, stdin="first\nsecond\n/exit\n")
    assert "\n> " in proc.stdout or proc.stdout.count("> ") >= 3
    history = (project / "hist.md").read_text()
    assert "#### first  \n" in history and "echo: second" in history
    proc = run("aider", *args, "--restore-chat-history", env=env, cwd=project)
    assert "Restored 5 messages" in proc.stdout  # first, reply, second, reply, /exit
    proc = run(
        "aider", "--chat-history-file", "new.md", "--restore-chat-history", env=env, cwd=project
    )
    assert proc.returncode == 0 and "Restored" not in proc.stdout


# --------------------------------------------------------------------------- inside tmux


class Tmux:
    """A private tmux server (own socket, no config) for one test."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.socket = f"fake-agent-{uuid.uuid4().hex[:8]}"
        self.env = {**env, "TMUX_TMPDIR": str(tmp_path)}
        self.socket_path = tmp_path / f"tmux-{os.getuid()}" / self.socket

    def __call__(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True, text=True, env=self.env, timeout=10, check=False,
        )  # fmt: skip
        if proc.returncode:
            raise RuntimeError(f"tmux {args}: {proc.stderr}")
        return proc.stdout

    def start(self, cwd: Path, *argv: str) -> str:
        """Start a pane running argv; dead panes stay so their exit status can be read."""
        return self(
            "start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
            "new-session", "-d", "-P", "-F", "#{pane_id}", "-x", "120", "-y", "40", "-c", str(cwd), "--", *argv,
        ).strip()  # fmt: skip

    def screen(self, pane: str) -> str:
        return self("capture-pane", "-p", "-t", pane)

    def wait_screen(self, pane: str, pattern: str, timeout: float = 5.0) -> str:
        def matching_screen() -> str | None:
            screen = self.screen(pane)
            return screen if re.search(pattern, screen, re.M) else None

        screen: str = wait_until(matching_screen, timeout, f"{pattern!r} on screen")
        return screen

    def dead_status(self, pane: str) -> int | None:
        out = self("display-message", "-p", "-t", pane, "#{pane_dead}:#{pane_dead_status}:#{pid}")
        dead, status, server = out.strip().split(":")
        if dead == "1" and not status:
            # tmux 3.3a sometimes misses a pane's SIGCHLD (see roost.tmux.list_pane_rows):
            # nudge the server to reap it, and ask again next time
            os.kill(int(server), signal.SIGCHLD)
            return None
        return int(status) if dead == "1" else None

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=10,
            check=False,
        )
        self.socket_path.unlink(missing_ok=True)


@pytest.fixture
def tmux(tmp_path: Path, env: dict[str, str]) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    server = Tmux(tmp_path, env)
    yield server
    server.kill()


@pytest.mark.tmux
def test_tmux_typing_paste_and_enter(tmux: Tmux, project: Path, tmp_path: Path) -> None:
    received = tmp_path / "received"
    tmux.env["FAKE_AGENT_RECEIVED_DIR"] = str(received)
    sid = str(uuid.uuid4())
    pane = tmux.start(project, str(BIN / "claude"), "--session-id", sid)
    tmux.wait_screen(pane, rf"^fake-claude session {sid}\n❯ ?$")
    tmux("send-keys", "-t", pane, "-l", "helx")
    tmux("send-keys", "-t", pane, "BSpace", "l", "o", "Enter")
    tmux.wait_screen(pane, r"^● echo: hello\n❯ ?$")

    text = "first line\nsecond line\n\nlast ❯ line"
    tmux("set-buffer", "-b", "p", text)
    tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", pane)
    tmux.wait_screen(pane, r"^last ❯ line$")
    time.sleep(0.2)
    assert not (received / "2.txt").exists()  # the newlines in the paste did not submit
    tmux("send-keys", "-t", pane, "Enter")
    tmux.wait_screen(pane, r"^● echo: first line⏎second line")
    assert (received / "2.txt").read_text() == text
    assert read_jsonl(claude_transcript(tmux.env, project, sid))[2]["message"]["content"] == text


@pytest.mark.tmux
def test_tmux_busy_and_permission_cues(tmux: Tmux, project: Path, tmp_path: Path) -> None:
    settings = hook_settings(tmp_path, ["Notification"])
    pane = tmux.start(project, str(BIN / "claude"), "--settings", str(settings))
    tmux.wait_screen(pane, r"^❯ ?$")
    tmux("send-keys", "-t", pane, "work 0.6", "Enter")
    tmux.wait_screen(pane, r"^✻ Working… \(esc to interrupt\)$")
    screen = tmux.wait_screen(pane, r"^● done working\n❯ ?$")
    assert "esc to interrupt" not in screen  # the spinner line went away

    tmux("send-keys", "-t", pane, "work 30", "Enter")
    tmux.wait_screen(pane, r"esc to interrupt")
    tmux("send-keys", "-t", pane, "Escape")
    tmux.wait_screen(pane, r"^● interrupted\n❯ ?$")

    tmux("send-keys", "-t", pane, "ask", "Enter")
    tmux.wait_screen(pane, r"^Do you want to proceed\?\n❯ 1\. Yes\n  2\. No\nEsc to cancel")
    wait_until((tmp_path / "events.jsonl").exists, what="Notification hook")
    tmux("send-keys", "-t", pane, "1")
    screen = tmux.wait_screen(pane, r"^● approved\n❯ ?$")
    assert "Do you want to proceed?" not in screen


@pytest.mark.tmux
def test_tmux_ctrl_c_twice_exits_zero(tmux: Tmux, project: Path) -> None:
    pane = tmux.start(project, str(BIN / "codex"), "--no-daemon")
    tmux.wait_screen(pane, r"^› ?$")
    tmux("send-keys", "-t", pane, "C-c")
    tmux.wait_screen(pane, r"Press Ctrl-C again to exit")
    assert tmux.dead_status(pane) is None
    tmux("send-keys", "-t", pane, "C-c")
    assert (
        wait_until(lambda: tmux.dead_status(pane) is not None, what="exit")
        and tmux.dead_status(pane) == 0
    )


@pytest.mark.tmux
def test_tmux_kill_pane_fires_session_end(tmux: Tmux, project: Path, tmp_path: Path) -> None:
    settings = hook_settings(tmp_path, ["SessionEnd"])
    pane = tmux.start(project, str(BIN / "claude"), "--settings", str(settings))
    tmux.wait_screen(pane, r"^❯ ?$")
    tmux("kill-pane", "-t", pane)  # SIGHUP
    (end,) = wait_until(
        lambda: (
            read_jsonl(tmp_path / "events.jsonl") if (tmp_path / "events.jsonl").exists() else None
        )
    )
    assert end["reason"] == "other"


@pytest.mark.tmux
@pytest.mark.parametrize(("drop", "expected"), [("", "● echo: early"), ("1", "❯ late")])
def test_tmux_input_before_ready(tmux: Tmux, project: Path, drop: str, expected: str) -> None:
    tmux.env |= {"FAKE_AGENT_START_DELAY": "0.5", "FAKE_AGENT_DROP_EARLY_INPUT": drop}
    pane = tmux.start(project, str(BIN / "claude"))
    tmux.wait_screen(pane, r"^fake-claude session")
    tmux("send-keys", "-t", pane, "early", "Enter")
    tmux.wait_screen(pane, r"^❯")
    tmux("send-keys", "-t", pane, "-l", "late")
    screen = tmux.wait_screen(pane, re.escape(expected))
    assert ("echo: early" in screen) == (not drop)


# --------------------------------------------------------------------------- codex 0.169.0's ways


def codex_server_pid(env: dict[str, str]) -> int | None:
    pidfile = Path(env["HOME"], ".codex", "fake-app-server", "pid")
    return int(pidfile.read_text()) if pidfile.exists() else None


@pytest.mark.tmux
def test_codex_shares_one_background_server_unless_no_daemon(
    tmux: Tmux, project: Path, env: dict[str, str]
) -> None:
    import psutil

    tmux.env["FAKE_AGENT_DAEMON_LINGER"] = "2"
    lone = tmux.start(project, str(BIN / "codex"), "--no-daemon")
    tmux.wait_screen(lone, r"^› ?$")
    assert codex_server_pid(env) is None  # --no-daemon: no shared server
    first = tmux.start(project, str(BIN / "codex"))
    tmux.wait_screen(first, r"^› ?$")
    server = wait_until(lambda: codex_server_pid(env), what="the app-server")
    second = tmux.start(project, str(BIN / "codex"))
    tmux.wait_screen(second, r"^› ?$")
    assert codex_server_pid(env) == server  # the second TUI uses the running one
    proc = psutil.Process(server)
    tui = psutil.Process(int(tmux("display-message", "-p", "-t", first, "#{pane_pid}")))
    # a child of the TUI that started it (so in its tree), in a session of its own
    assert proc.ppid() in {tui.pid, *(c.pid for c in tui.children(recursive=True))}
    assert os.getsid(server) == server != os.getsid(tui.pid)
    assert "--managed-daemon" in proc.cmdline()
    proc.kill()  # what a kill of the first TUI's whole tree did to everyone
    for pane in (first, second):
        tmux.wait_screen(pane, r"Reconnecting to server…")
        tmux("send-keys", "-t", pane, "-l", "still there?")
        tmux("send-keys", "-t", pane, "Enter")
        screen = tmux.wait_screen(pane, r"• Reconnecting to server… \(\d+s\)\n› still there\?")
        assert "echo: still there?" not in screen  # the prompt stays typed, unanswered
    tmux("send-keys", "-t", lone, "-l", "still there?")
    tmux("send-keys", "-t", lone, "Enter")
    tmux.wait_screen(lone, r"^• echo: still there\?\n  Worked for")  # its own server: fine


@pytest.mark.tmux
def test_codex_writes_its_rollout_at_the_first_message_and_holds_it_open(
    tmux: Tmux, project: Path, env: dict[str, str]
) -> None:
    import psutil

    pane = tmux.start(project, str(BIN / "codex"), "--no-daemon")
    tmux.wait_screen(pane, r"^› ?$")
    sessions = Path(env["HOME"], ".codex", "sessions")
    assert not sessions.exists()
    tmux("send-keys", "-t", pane, "-l", "hello")
    tmux("send-keys", "-t", pane, "Enter")
    tmux.wait_screen(pane, r"^• echo: hello\n  Worked for <1s\n› ?$")
    (rollout,) = sessions.glob("*/*/*/rollout-*.jsonl")
    tui = psutil.Process(int(tmux("display-message", "-p", "-t", pane, "#{pane_pid}")))
    assert str(rollout) in files_held(tui)
    tmux("send-keys", "-t", pane, "-l", "fail auth")
    tmux("send-keys", "-t", pane, "Enter")
    tmux.wait_screen(pane, r"^■ unexpected status 401 Unauthorized: .*\n› ?$")
    tmux("send-keys", "-t", pane, "-l", "/quit")
    tmux("send-keys", "-t", pane, "Enter")
    sid = read_jsonl(rollout)[0]["payload"]["id"]
    tmux.wait_screen(pane, rf"To continue this session, run:\n  codex resume {sid}")


def test_an_expired_login_prints_the_apis_401_and_exits_at_once(
    env: dict[str, str], project: Path
) -> None:
    env |= {"FAKE_AGENT_AUTH_ERROR": "1"}
    first = run("claude", env=env, cwd=project)
    second = run("claude", env=env, cwd=project)
    assert first.returncode == second.returncode == 1
    assert first.stdout.startswith(
        'API Error: 401 {"type":"error","error":{"type":"authentication_error"'
    )
    assert first.stdout != second.stdout  # each answer has its own request id


def test_claude_refuses_to_skip_permissions_as_root(env: dict[str, str], project: Path) -> None:
    env |= {"FAKE_AGENT_AS_ROOT": "1"}
    refused = run("claude", "--dangerously-skip-permissions", env=env, cwd=project)
    assert refused.returncode == 1
    assert (
        "--dangerously-skip-permissions cannot be used with root/sudo privileges" in refused.stderr
    )
    assert run("claude", env=env, cwd=project).returncode == 0  # without the flag it runs
