"""Provider argv building and session-id discovery: pure, no tmux."""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from roost.core.model import Agent
from roost.core.settings import Settings, parse
from roost.providers import hooks
from roost.providers.base import NotResumable, Sighting, get
from roost.providers.claude import project_dir_name, transcript_path
from roost.providers.codex import read_session_meta

SID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"


def agent(provider: str, **kw: Any) -> Agent:
    base = dict(
        id="rid",
        name="a",
        provider=provider,
        cwd="/src/app",
        home="a",
        provider_session_id=None,
        launches=1,
        started_at=datetime.now(UTC).isoformat(),
    )
    base.update(kw)
    return Agent(**base)  # type: ignore[arg-type]


def resuming(a: Agent, exe: str, env: dict[str, str], home: Path) -> list[str]:
    """The argv that brings `a`'s conversation back (there must be one to bring back)."""
    argv = get(a.provider).resume_argv(a, exe, env, home)
    assert argv is not None, "nothing to resume"
    return argv


def test_claude_starts_with_minted_id_and_prompt(tmp_path: Path) -> None:
    a = agent("claude", provider_session_id=SID, dangerous=True, args=("--model", "opus"))
    argv = get("claude").start_argv(a, "/bin/claude", "hello there", tmp_path)
    settings = tmp_path / "agents" / "rid" / "claude-settings.json"
    assert argv == [
        "/bin/claude",
        "--session-id",
        SID,
        "--settings",
        str(settings),
        "--dangerously-skip-permissions",
        "--model",
        "opus",
        "--",
        "hello there",
    ]
    written = json.loads(settings.read_text())
    assert written["cleanupPeriodDays"] >= 3650
    assert set(written["hooks"]) >= {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "Notification",
        "SessionEnd",
    }
    command = written["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert "hook.sh" in command and str(tmp_path / "agents" / "rid" / "hooks.log") in command


def test_claude_resumes_when_transcript_exists(tmp_path: Path) -> None:
    a = agent("claude", provider_session_id=SID)
    env = {"HOME": str(tmp_path)}
    path = transcript_path(SID, "/src/app", env)
    assert path == tmp_path / ".claude/projects/-src-app" / f"{SID}.jsonl"
    claude = get("claude")
    # no transcript yet: no conversation exists, nothing to resume (a start under the same id)
    assert claude.resume_argv(a, "/c", env, tmp_path) is None
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    assert resuming(a, "/c", env, tmp_path)[:3] == ["/c", "--resume", SID]
    # a conversation that existed and is gone is never silently replaced by a fresh one
    path.unlink()
    with pytest.raises(NotResumable, match=r"unresumable.*--fresh"):
        claude.resume_argv(a.replace(conversation_seen=True), "/c", env, tmp_path)


def test_claude_project_dir_name() -> None:
    assert project_dir_name("/home/me/my.app_v2") == "-home-me-my-app-v2"


def test_claude_config_dir_env_wins(tmp_path: Path) -> None:
    env = {"HOME": "/nowhere", "CLAUDE_CONFIG_DIR": str(tmp_path)}
    assert transcript_path(SID, "/x", env).is_relative_to(tmp_path)


def codex_notify(home: Path, agent_id: str) -> list[str]:
    """roost's notify program (roost/cli_hook.sh), which reports each turn's end to the service."""
    log = hooks.cli_log_path(str(home), agent_id)
    return ["-c", f'notify=["sh", "{hooks.CLI_HOOK_SH}", "{log}", "CodexNotify"]']


def test_codex_start_and_resume(tmp_path: Path) -> None:
    codex = get("codex")
    a = agent("codex", dangerous=True)
    notify = codex_notify(tmp_path, a.id)
    # --no-daemon: no shared app-server that `roost kill` could take down with the agent
    assert codex.start_argv(a, "/codex", "do it", tmp_path) == [
        "/codex",
        "--no-daemon",
        *notify,
        "--dangerously-bypass-approvals-and-sandbox",
        "--",
        "do it",
    ]
    with pytest.raises(NotResumable, match="session id is not known"):
        codex.resume_argv(a, "/codex", {}, tmp_path)
    known = a.replace(provider_session_id=SID)
    assert codex.resume_argv(known, "/codex", {}, tmp_path) == [
        "/codex",
        "resume",
        SID,
        "--no-daemon",
        *notify,
        "--dangerously-bypass-approvals-and-sandbox",
    ]
    said = a.replace(args=("--no-daemon", "-m", "o3"), dangerous=False)  # never twice
    assert codex.start_argv(said, "/codex", None, tmp_path) == [
        "/codex",
        *notify,
        "--no-daemon",
        "-m",
        "o3",
    ]


def write_rollout(root: Path, when: datetime, sid: str, cwd: str, nested: bool = True) -> Path:
    folder = root / "sessions" / f"{when:%Y}" / f"{when:%m}" / f"{when:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{when:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl"
    meta = {"id": sid, "timestamp": when.isoformat().replace("+00:00", "Z"), "cwd": cwd}
    line = (
        {"timestamp": meta["timestamp"], "type": "session_meta", "payload": meta}
        if nested
        else meta
    )
    path.write_text(json.dumps(line) + "\n")
    return path


def test_codex_learns_its_session_from_the_rollout_its_own_process_holds_open(
    tmp_path: Path,
) -> None:
    started = datetime.now(UTC)
    env = {"CODEX_HOME": str(tmp_path)}
    codex = get("codex")
    a = agent("codex", started_at=started.isoformat())
    # other agents' rollouts in the same cwd, newer and older, are never a candidate
    theirs = write_rollout(tmp_path, started + timedelta(seconds=5), "theirs", "/src/app")
    write_rollout(tmp_path, started + timedelta(seconds=1), "older", "/src/app")
    assert codex.discover_session_id(a, env, Sighting()) == []
    mine = write_rollout(tmp_path, started + timedelta(seconds=3), "mine", "/src/app")
    files = ("/src/app/.git/index", str(tmp_path / "state_5.sqlite"), str(mine))
    assert codex.discover_session_id(a, env, Sighting(open_files=files)) == ["mine"]
    # after /new it holds the old and the new rollout open: the newest is the conversation now
    new = write_rollout(
        tmp_path, started + timedelta(seconds=9), "after-new", "/src/app", nested=False
    )
    assert codex.discover_session_id(a, env, Sighting(open_files=(str(mine), str(new)))) == [
        "after-new"
    ]
    assert str(theirs) not in files


def test_codex_learns_an_exited_agents_session_from_what_it_printed(tmp_path: Path) -> None:
    codex = get("codex")
    a = agent("codex")
    screen = (
        f"Token usage: total=6,665 input=6,660 output=5\nTo continue this session, run:\n"
        f"  codex resume {SID.upper()}\n"
    )
    assert codex.discover_session_id(a, {}, Sighting(screen=screen)) == [SID]
    assert codex.discover_session_id(a, {}, Sighting(screen="codex resume not-an-id")) == []
    # a running process's open rollout is the better witness
    rollout = write_rollout(tmp_path, datetime.now(UTC), "open", "/src/app")
    seen = Sighting(open_files=(str(rollout),), screen=screen)
    assert codex.discover_session_id(a, {}, seen) == ["open"]


def test_codex_meta_reader_rejects_garbage(tmp_path: Path) -> None:
    bad = tmp_path / "r.jsonl"
    bad.write_text("not json\n")
    assert read_session_meta(bad) is None
    bad.write_text("[1,2]\n")
    assert read_session_meta(bad) is None


def gemini_session(
    home: Path, cwd: str, sid: str, slug: str = "app", lines: tuple[dict[str, object], ...] = ()
) -> Path:
    """A chat file as Gemini CLI 0.61 writes it, and its projects.json entry."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {cwd: slug}}))
    chats = home / ".gemini" / "tmp" / slug / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-2026-01-02T03-04-{sid[:8]}.jsonl"
    head = {"sessionId": sid, "projectHash": "h", "startTime": "2026-01-02T03:04:05Z"}
    path.write_text("".join(json.dumps(x) + "\n" for x in (head, *lines)))
    return path


def test_gemini_starts_with_the_id_roost_chose_and_resumes_its_file(tmp_path: Path) -> None:
    gemini = get("gemini")
    sid = gemini.new_session_id()
    assert sid is not None
    a = agent("gemini", dangerous=True, provider_session_id=sid)
    assert gemini.start_argv(a, "/g", "hi", tmp_path) == [
        "/g",
        "--session-id",
        sid,
        "--yolo",
        "--prompt-interactive=hi",
    ]
    env = {"HOME": str(tmp_path)}
    # no chat file: gemini deletes one that holds no message, so there is nothing to resume
    assert gemini.resume_argv(a, "/g", env, tmp_path) is None
    with pytest.raises(NotResumable, match=r"is gone"):  # ... unless a message was taken
        gemini.resume_argv(a.replace(conversation_seen=True), "/g", env, tmp_path)
    gemini_session(tmp_path, "/src/app", sid)
    assert gemini.resume_argv(a, "/g", env, tmp_path) == ["/g", "-r", sid, "--yolo"]
    with pytest.raises(NotResumable, match=r"not known"):  # a record from before roost chose ids
        gemini.resume_argv(a.replace(provider_session_id=None), "/g", env, tmp_path)


def test_gemini_finds_only_its_own_sessions_file(tmp_path: Path) -> None:
    from roost.providers.gemini import session_file

    env = {"GEMINI_CLI_HOME": str(tmp_path / "gh")}
    mine = "1b4e28ba-0000-4000-8000-000000000001"
    twin = "1b4e28ba-0000-4000-8000-000000000002"  # the same first 8 characters
    gemini_session(tmp_path / "gh", "/src/app", twin)
    assert session_file("/src/app", mine, env) is None
    path = gemini_session(tmp_path / "gh", "/src/app", mine)
    path.rename(path.with_name(path.name.replace("03-04", "03-05")))
    assert session_file("/src/app", mine, env) == path.with_name(
        path.name.replace("03-04", "03-05")
    )
    assert session_file("/src/other", mine, env) is None  # not this cwd's project
    (tmp_path / "gh" / ".gemini" / "projects.json").write_text('{"projects": {"/src/app": "../x"}}')
    assert session_file("/src/app", mine, env) is None


def test_gemini_and_aider_read_the_prompts_their_cli_took(tmp_path: Path) -> None:
    gemini = get("gemini")
    a = agent("gemini", provider_session_id=SID)
    env = {"HOME": str(tmp_path)}
    assert gemini.conversation_size(a, env, tmp_path) == 0  # not written yet
    path = gemini_session(
        tmp_path,
        "/src/app",
        SID,
        lines=(
            {"type": "user", "content": [{"text": "first"}]},
            {"type": "gemini", "content": "re"},
        ),
    )
    size = gemini.conversation_size(a, env, tmp_path)
    assert size == path.stat().st_size
    assert gemini.prompts_after(a, env, tmp_path, 0) == ["first"]
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "user", "content": [{"text": "two\nlines"}]}) + "\n")
        fh.write('{"type": "us')  # being written
    assert gemini.prompts_after(a, env, tmp_path, size or 0) == ["two\nlines"]

    aider = get("aider")
    b = agent("aider")
    assert aider.conversation_size(b, env, tmp_path) == 0
    aider.start_argv(b, "/aider", None, tmp_path)
    history = tmp_path / "agents" / "rid" / "aider.chat.history.md"
    history.write_text("# aider chat started at 2026-01-02 03:04:05\n\n#### first\n\nreply\n\n")
    size = aider.conversation_size(b, env, tmp_path)
    with history.open("a") as fh:
        fh.write("#### two  \n####   \n#### lines  \n\nanswer\n\n#### third  \n")
    assert aider.prompts_after(b, env, tmp_path, size or 0) == ["two\n\nlines", "third"]


def test_aider_keeps_a_per_agent_history_and_restores_it(tmp_path: Path) -> None:
    aider = get("aider")
    a = agent("aider")
    start = aider.start_argv(a, "/aider", None, tmp_path)
    history = tmp_path / "agents" / "rid" / "aider.chat.history.md"
    assert start == ["/aider", "--chat-history-file", str(history)]
    assert history.parent.is_dir()
    assert aider.resume_argv(a, "/aider", {}, tmp_path) == [*start, "--restore-chat-history"]


def test_command_reruns_argv_as_is(tmp_path: Path) -> None:
    cmd = get("command")
    a = agent("command", args=("tail", "-f", "x; rm -rf /"))
    assert cmd.wanted_executable(a, Settings(), {}) == "tail"
    argv = ["/usr/bin/tail", "-f", "x; rm -rf /"]
    assert cmd.start_argv(a, "/usr/bin/tail", None, tmp_path) == argv
    assert cmd.resume_argv(a, "/usr/bin/tail", {}, tmp_path) is None  # no conversation: a start


def test_executable_lookup_order(tmp_path: Path) -> None:
    exe = tmp_path / "myclaude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    claude = get("claude")
    a = agent("claude")
    assert claude.executable(a, Settings(), {"ROOST_CLAUDE_BIN": str(exe), "PATH": ""}) == str(exe)
    config = parse({"providers": {"claude": {"bin": str(exe)}}})
    assert claude.executable(a, config, {"PATH": ""}) == str(exe)
    with pytest.raises(Exception, match="not found"):
        claude.executable(a, Settings(), {"PATH": str(tmp_path / "empty")})


def test_unknown_provider() -> None:
    with pytest.raises(Exception, match="unknown provider 'cursor'"):
        get("cursor")


def test_codex_resumes_with_roost_mcp_when_this_launch_gets_it(tmp_path: Path) -> None:
    from roost.providers import mcpwire

    a = agent("codex", provider_session_id=SID)
    assert not any(arg.startswith("mcp_servers.") for arg in resuming(a, "/c", {}, tmp_path))
    mcpwire.write(str(tmp_path), "rid")
    argv = resuming(a, "/c", {}, tmp_path)
    assert argv[:4] == ["/c", "resume", SID, "--no-daemon"] and argv[4] == "-c"
    assert (
        f'mcp_servers.roost.env={{"ROOST_AGENT_ID" = "rid", "ROOST_HOME" = "{tmp_path}"}}' in argv
    )


def test_gemini_finds_its_file_that_begins_without_the_session_line(tmp_path: Path) -> None:
    """Seen on the real 0.61.0 with three agents started in one cwd: one chat file began with
    the first message, with no line naming its session. Its name still says whose it is."""
    from roost.providers.gemini import session_file, user_prompts

    env = {"GEMINI_CLI_HOME": str(tmp_path / "gh")}
    mine = "c146f04a-0d11-4076-bc9e-7ee9ea20c25e"
    other = "c146f04a-0000-4000-8000-000000000009"  # the same first 8 characters, a header
    theirs = gemini_session(tmp_path / "gh", "/src/app", other)
    theirs = theirs.rename(theirs.with_name(theirs.name.replace("03-04", "03-01")))
    path = gemini_session(tmp_path / "gh", "/src/app", mine)
    message = {"id": "m1", "type": "user", "content": [{"text": "I am g2"}]}
    path.write_text(json.dumps(message) + "\n" + json.dumps({"$set": {"lastUpdated": "x"}}) + "\n")
    assert session_file("/src/app", mine, env) == path
    assert user_prompts(path, 0) == ["I am g2"]
    assert session_file("/src/app", other, env) == theirs


def test_gemini_resume_puts_back_a_lost_session_line(tmp_path: Path) -> None:
    """`gemini -r` refuses a file without its session line ("Invalid session identifier"):
    the wake puts it back above every line the file had."""
    import hashlib

    from roost.providers.gemini import first_line, session_file, user_prompts

    env = {"HOME": str(tmp_path)}
    a = agent("gemini", provider_session_id=SID, cwd="/src/app", conversation_seen=True)
    path = gemini_session(tmp_path, "/src/app", SID)
    lines = [
        {
            "id": "m1",
            "timestamp": "2026-01-02T03:04:06.000Z",
            "type": "user",
            "content": [{"text": "I am g2"}],
        },
        {"$set": {"lastUpdated": "x"}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert resuming(a, "/g", env, tmp_path)[1:3] == ["-r", SID]
    head = first_line(path)
    assert head["sessionId"] == SID and head["startTime"] == "2026-01-02T03:04:06.000Z"
    assert head["projectHash"] == hashlib.sha256(b"/src/app").hexdigest()
    assert path.read_text().splitlines()[1:] == [json.dumps(x) for x in lines]
    assert session_file("/src/app", SID, env) == path and user_prompts(path, 0) == ["I am g2"]
