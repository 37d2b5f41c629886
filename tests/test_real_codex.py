"""roost with the real Codex CLI 0.169.0, offline: the pinned npm install (tests/real_codex.py)
talking to a Responses API stand-in on 127.0.0.1 (tests/openai_responses_stub.py).

What is proven on the real CLI, because roost relies on it:
- spawn, idle, send (confirmed by the screen), working while the stand-in holds the reply, idle
  again; the reply in codex's own rollout file, whose id roost recorded; kill; wake resumes the
  same rollout file, and the model sees the earlier turn (the stand-in gets it in its input);
- `--no-daemon` on start and resume: no shared app-server is started, and `roost kill` stops only
  the agent's own processes, never a user's codex or its shared daemon on the same CODEX_HOME;
- three agents in one cwd, messaged in reverse order, each get their own conversation's id and
  resume it; killing one leaves the others working;
- status `waiting` for an approval dialog, `error` for a failed turn (authentication, usage
  limit) and for a codex that lost its shared server ("Reconnecting to server…"), `idle` again
  after a good turn.

Run alone with `pytest -m real_codex -s` to see the screens it keeps.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import pytest

from roost.core import status as screen_status
from roost.providers import hooks, traits

from conftest import Env, files_held
from openai_responses_stub import REPLY_PREFIX, ResponsesStub, input_texts, running_stub
from real_claude import PrivateTmux, wait_for
from real_codex import (
    BUSY_CUE,
    IDLE_CUE,
    RECONNECTING_CUE,
    codex_env,
    daemon_home,
    install_codex,
    prepare_codex_home,
    read_rollout,
    rollout_meta,
    rollout_of,
    rollout_texts,
    rollouts,
    start_daemon,
    stop_daemon,
)

pytestmark = [pytest.mark.tmux, pytest.mark.real_codex]


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    if shutil.which("tmux") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("the real_codex tests need tmux and npm (.ci/run installs them)")
        pytest.skip("needs tmux and npm")
    return install_codex()


class CodexWorld:
    """One roost world whose codex agents are the real CLI against the stand-in."""

    def __init__(self, world: Env, stub: ResponsesStub, codex: Path) -> None:
        self.world = world
        self.stub = stub
        self.codex = codex
        self.work = world.tmp / "work"
        self.codex_home = world.tmp / "codex-home"
        prepare_codex_home(self.codex_home, stub.url, [self.work])
        world.env = codex_env(world.env, world.user_home, self.codex_home)
        world.env["ROOST_CODEX_BIN"] = str(codex)

    def spawn(self, name: str, *args: str) -> dict[str, Any]:
        self.world.roost("spawn", name, "--provider", "codex", "--cwd", str(self.work), *args)
        return self.wait_status(name, "idle", 60)

    def ls(self, name: str) -> dict[str, Any]:
        return self.world.ls()[name]

    def session_id(self, name: str) -> str | None:
        """The provider session id roost has learned for the agent, None before it has one."""
        id_: str | None = self.ls(name)["provider_session_id"]
        return id_

    def wait_status(self, name: str, wanted: str, timeout: float = 30) -> dict[str, Any]:
        found: dict[str, Any] = {}

        def reached() -> bool:
            found.update(self.ls(name))
            return bool(found["status"] == wanted)

        wait_for(
            reached,
            timeout,
            f"{name} {wanted}",
            interval=0.2,
            on_timeout=lambda: f"{found.get('status')}\n{self.screen(name)}",
        )
        return found

    def pane(self, name: str) -> str:
        return next(p["pane_id"] for p in self.world.panes() if p["window"] == name)

    def screen(self, name: str) -> str:
        return self.world.screen(self.pane(name))

    def wait_screen(self, name: str, text: str, timeout: float = 30) -> str:
        return str(
            wait_for(
                lambda: text in (s := self.screen(name)) and s,
                timeout,
                f"{text!r} on {name}",
                on_timeout=lambda: self.screen(name),
            )
        )

    def send(self, name: str, text: str) -> str:
        out = self.world.roost("send", name, text).stdout
        assert "delivered" in out and "confirmed by screen" in out, out
        return out

    def send_to_fail(self, name: str, text: str) -> None:
        """A send whose turn fails: delivered either way. Seen before codex drew the error, it
        is confirmed by the screen; seen with the error already drawn (codex took the text off
        its composer), it is delivered with its failure and exits 1."""
        sent = self.world.roost("send", name, text, check=False)
        assert "not delivered" not in sent.stderr, sent.stderr
        assert sent.returncode == 0 or (
            "turn failed" in sent.stderr and "(the message was delivered)" in sent.stderr
        ), sent.stderr

    def reply(self, name: str, text: str) -> None:
        """Send and wait for the stand-in's answer on the screen and the agent idle again."""
        self.send(name, text)
        self.wait_screen(name, REPLY_PREFIX + text)
        self.wait_status(name, "idle")

    def type_by_hand(self, name: str, text: str) -> None:
        """What a user attached to the pane does, without roost: paste, pause, Enter."""
        self.world.tmux("set-buffer", "-b", "by-hand", text)
        self.world.tmux("paste-buffer", "-p", "-d", "-b", "by-hand", "-t", self.pane(name))
        time.sleep(0.3)
        self.world.tmux("send-keys", "-t", self.pane(name), "Enter")

    def rollout(self, name: str) -> Path:
        sid = self.ls(name)["provider_session_id"]
        assert sid, f"{name} has no session id"
        path = rollout_of(self.codex_home, sid)
        assert path is not None, f"no rollout for {name}'s {sid}"
        return path

    def tree(self, name: str) -> set[int]:
        root = psutil.Process(self.ls(name)["pid"])
        return {root.pid, *(c.pid for c in root.children(recursive=True))}


@pytest.fixture
def cx(world: Env, codex_bin: Path) -> Iterator[CodexWorld]:
    with running_stub() as stub:
        yield CodexWorld(world, stub, codex_bin)


def main_inputs(stub: ResponsesStub) -> list[list[str]]:
    """The user texts each conversation turn sent the model (its whole input)."""
    return [input_texts(r.body) for r in stub.responses("main")]


def test_spawn_status_send_rollout_kill_and_wake_resume_the_same_conversation(
    cx: CodexWorld,
) -> None:
    idle = cx.spawn("cx")
    assert idle["status_source"] == "screen" and idle["provider_session_id"] is None
    argv = psutil.Process(idle["pid"]).cmdline()
    assert "--no-daemon" in argv
    assert not (cx.codex_home / "packages").exists()  # no copy of codex for a daemon

    cx.stub.set_delay(30)  # the turn stays busy until released
    cx.send("cx", "first prompt")
    working = cx.wait_status("cx", "working")
    assert working["status_source"] in ("screen", "title")  # its busy footer or title spinner
    # its title's spinner may come before the footer is drawn (a CI run saw it so)
    cx.wait_screen("cx", BUSY_CUE)
    assert cx.ls("cx")["status"] == "working"
    cx.stub.release()
    cx.wait_screen("cx", REPLY_PREFIX + "first prompt")
    done = cx.wait_status("cx", "idle")
    sid = done["provider_session_id"]
    # its notify program (roost/cli_hook.sh: the service's cue) got the turn's end
    log = Path(hooks.cli_log_path(str(cx.world.home), done["id"]))
    wait_for(lambda: log.exists() and "agent-turn-complete" in log.read_text(), 10, "notify")
    entry = hooks.parse_entry(log.read_text().splitlines()[-1])
    assert entry is not None and entry[1] == "CodexNotify"
    assert entry[2]["type"] == "agent-turn-complete" and entry[2]["thread-id"] == sid
    rollout = cx.rollout("cx")
    assert rollout_meta(rollout)["id"] == sid and rollout_meta(rollout)["cwd"] == str(cx.work)
    assert rollout.name.endswith(f"-{sid}.jsonl")
    assert rollout_texts(rollout, "user")[-1] == "first prompt"
    assert rollout_texts(rollout, "assistant") == [REPLY_PREFIX + "first prompt"]
    # One turn. (Codex 0.169.0 also asks for a thread title, but not when an MCP server is
    # configured, as roost's is, measured here.)
    assert [r.kind for r in cx.stub.responses("main")] == ["main"]

    tree = cx.tree("cx")
    cx.world.roost("kill", "cx")
    assert cx.ls("cx")["status"] == "stopped"
    killed = next(
        e
        for e in json.loads(cx.world.roost("events", "cx", "--json").stdout)
        if e["kind"] == "killed"
    )["pids"]
    assert set(killed) == tree  # its own processes, nothing else
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in killed
    )

    cx.world.roost("wake", "cx")
    woke = cx.wait_status("cx", "idle", 60)
    assert woke["provider_session_id"] == sid
    argv = psutil.Process(woke["pid"]).cmdline()
    i = argv.index("resume")
    assert argv[i : i + 3] == ["resume", sid, "--no-daemon"], argv  # then roost mcp's -c
    cx.reply("cx", "second prompt")
    assert not (cx.codex_home / "packages").exists()  # `codex resume --no-daemon`: none either
    assert cx.rollout("cx") == rollout and rollouts(cx.codex_home) == [rollout]
    assert rollout_texts(rollout, "user")[-1] == "second prompt"
    assert "first prompt" in rollout_texts(rollout, "user")
    assert rollout_texts(rollout, "assistant") == [
        REPLY_PREFIX + "first prompt",
        REPLY_PREFIX + "second prompt",
    ]
    # the model saw the earlier turn: the resumed conversation's request carries it
    last = main_inputs(cx.stub)[-1]
    assert "first prompt" in last and REPLY_PREFIX + "first prompt" in input_texts(
        cx.stub.responses("main")[-1].body, "assistant"
    )
    assert last[-1] == "second prompt"


def test_three_agents_in_one_cwd_keep_their_own_conversations(cx: CodexWorld) -> None:
    names = ["ca", "cb", "cc"]
    for name in names:
        cx.spawn(name)
    for name in reversed(names):  # messaged in reverse order: cc's rollout is the oldest
        cx.reply(name, f"hello from {name}")
        wait_for(partial(cx.session_id, name), 20, f"{name}'s id")
    ids = {name: cx.ls(name)["provider_session_id"] for name in names}
    assert len(set(ids.values())) == 3
    for name in names:
        assert rollout_texts(cx.rollout(name), "user")[-1] == f"hello from {name}"

    cx.world.roost("kill", "ca")  # the others keep working
    for name in ("cb", "cc"):
        assert cx.ls(name)["status"] == "idle"
        cx.reply(name, f"still here, {name}")
    cx.world.roost("wake", "ca")
    assert cx.wait_status("ca", "idle", 60)["provider_session_id"] == ids["ca"]
    cx.reply("ca", "who was I")
    seen = main_inputs(cx.stub)[-1]
    assert "hello from ca" in seen and "hello from cb" not in seen and "hello from cc" not in seen
    said = [t for t in rollout_texts(cx.rollout("ca"), "user") if not t.startswith("<")]
    assert said == ["hello from ca", "who was I"], said
    for name in names:
        assert rollout_meta(cx.rollout(name))["id"] == ids[name]


def test_status_waiting_and_error_and_send_refuses_a_broken_agent(cx: CodexWorld) -> None:
    cx.spawn("cx")
    cx.stub.queue_tool_call(
        "exec_command",
        {
            "cmd": f"touch {cx.world.tmp / 'escalated'}",
            "sandbox_permissions": "require_escalated",
            "justification": "roost's test wants a file",
        },
    )
    cx.send("cx", "make a file")
    cx.wait_status("cx", "waiting")
    assert "Would you like to run the following command?" in cx.screen("cx")
    cx.world.tmux("send-keys", "-t", cx.pane("cx"), "y")
    cx.wait_status("cx", "idle")
    assert (cx.world.tmp / "escalated").exists()

    cx.stub.fail_next(401, "Incorrect API key provided")
    cx.send_to_fail("cx", "an unauthorized turn")
    cx.wait_status("cx", "error")
    reason = screen_status.reading(cx.screen("cx"), status_patterns())
    assert reason is not None and reason[1] is not None
    assert reason[1].startswith("unexpected status 401 Unauthorized: Incorrect API key")
    refused = cx.world.roost("send", "cx", "anyone?", check=False)
    assert refused.returncode == 1 and "not delivered" in refused.stderr

    cx.type_by_hand("cx", "a good turn")  # the user sees it through
    cx.wait_screen("cx", REPLY_PREFIX + "a good turn")
    cx.wait_status("cx", "idle")  # the old error is over once a turn went on

    resets = int(time.time()) + 3600
    cx.stub.fail_next(429, "usage", "usage_limit_reached", plan_type="plus", resets_at=resets)
    cx.send_to_fail("cx", "one too many")
    # issue 23: a usage limit is `limited`, its reset read from "try again at 3:04 AM." (the
    # machine's zone, to the minute)
    seen = cx.wait_status("cx", "limited")
    assert "hit your usage limit" in seen["status_reason"], seen["status_reason"]
    assert seen["limit_kind"] == "usage"
    assert 0 <= resets - seen["limit_resets_at"] < 60, (seen["status_reason"], resets)
    refused = cx.world.roost("send", "cx", "anyone?", check=False)
    assert refused.returncode == 1 and "cx is limited until " in refused.stderr


def status_patterns() -> dict[str, list[str]]:
    return screen_status.patterns_for(traits.CODEX.patterns)


def test_kill_never_touches_a_users_codex_or_its_shared_daemon(cx: CodexWorld) -> None:
    """A user's own codex TUI (not roost's) with its shared daemon on the same CODEX_HOME: roost's
    agents start without one and their kill stops their own processes only. Once the daemon is
    gone, that TUI shows "Reconnecting to server…", which roost reads as an error."""
    daemon_home(cx.codex, cx.codex_home)  # the daemon's packages, hard-linked from the cache
    env = cx.world.env
    daemon = start_daemon(cx.codex, env, cx.codex_home)
    user_env = {k: v for k, v in env.items() if not k.startswith("ROOST_")}
    user = PrivateTmux(user_env)
    try:
        their = user.new_window([str(cx.codex)], cx.work, user_env)
        wait_for(
            lambda: IDLE_CUE in user.screen(their),
            60,
            "the user's codex",
            on_timeout=lambda: user.screen(their),
        )
        cx.spawn("ca")
        cx.spawn("cb")
        cx.reply("ca", "hello")
        tree = cx.tree("ca")
        assert daemon not in tree
        cx.world.roost("kill", "ca")
        killed = next(
            e
            for e in json.loads(cx.world.roost("events", "ca", "--json").stdout)
            if e["kind"] == "killed"
        )["pids"]
        assert daemon not in killed and psutil.pid_exists(daemon)
        cx.reply("cb", "still working")
        user.paste(their, "the user's own prompt")
        wait_for(
            lambda: REPLY_PREFIX + "the user's own prompt" in user.screen(their),
            30,
            "the user's codex answered",
            on_timeout=lambda: user.screen(their),
        )
        assert RECONNECTING_CUE not in user.screen(their)

        psutil.Process(daemon).kill()  # what `roost kill` did before --no-daemon
        lost = wait_for(
            lambda: RECONNECTING_CUE in (s := user.screen(their)) and s,
            30,
            "Reconnecting to server",
            on_timeout=lambda: user.screen(their),
        )
        found = screen_status.reading(lost, status_patterns())
        assert found is not None and found[0] == "error"
        assert str(found[1]).startswith("Reconnecting to server")
        assert cx.ls("cb")["status"] == "idle"  # roost's own agent never used that server
        cx.reply("cb", "and still")
    finally:
        user.kill()
        stop_daemon(cx.codex, env, cx.codex_home)


def test_an_agent_that_quit_before_roost_looked_is_known_by_its_last_words(cx: CodexWorld) -> None:
    """No rollout before the first message; line 1 is session_meta; codex holds the file open
    (the fake copies all this). An agent used and quit by hand, with no roost command between,
    printed `codex resume <id>`: roost learns the id from its dead pane and resumes it."""
    cx.spawn("cx")
    assert rollouts(cx.codex_home) == []
    cx.type_by_hand("cx", "hello by hand")
    cx.wait_screen("cx", REPLY_PREFIX + "hello by hand")
    (rollout,) = rollouts(cx.codex_home)
    first = read_rollout(rollout)[0]
    assert first["type"] == "session_meta"
    assert {"id", "cwd", "timestamp"} <= set(first["payload"])
    sid = first["payload"]["id"]
    root = psutil.Process(
        int(cx.world.tmux("display-message", "-p", "-t", cx.pane("cx"), "#{pane_pid}"))
    )
    assert str(rollout) in files_held(root)
    cx.type_by_hand("cx", "/quit")
    cx.wait_screen("cx", f"codex resume {sid}")
    gone = cx.wait_status("cx", "exited")
    assert gone["provider_session_id"] == sid
    cx.world.roost("wake", "cx")
    assert cx.wait_status("cx", "idle", 60)["provider_session_id"] == sid
    cx.reply("cx", "and again")
    assert "hello by hand" in main_inputs(cx.stub)[-1]


def test_a_draft_in_the_real_composer_is_refused_and_its_hints_are_not_drafts(
    cx: CodexWorld,
) -> None:
    """Issue 14 on the real TUI: the composer's hints ("Ask Codex to do anything", after a turn
    "Ask a follow-up question"...) are no draft, so sends go through; text typed by hand in it
    is, so a send is refused and the text stays."""
    cx.spawn("cx")
    cx.reply("cx", "first prompt")  # the empty composer's hint did not read as a draft
    cx.reply("cx", "second prompt")  # nor the hint it shows after a turn
    cx.world.tmux("send-keys", "-t", cx.pane("cx"), "-l", "draft-words")
    cx.wait_screen("cx", "› draft-words")
    refused = cx.world.roost("send", "cx", "third prompt", check=False)
    assert refused.returncode == 1 and '("draft-words")' in refused.stderr
    assert "› draft-words" in cx.screen("cx")
    assert all("third prompt" not in texts for texts in main_inputs(cx.stub))
