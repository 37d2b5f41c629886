"""Issue 34 with each real pinned CLI in a home and a folder it has never seen, as a new user
has: its start-up question reads `waiting` with the question as the reason, roost never types
into it, a first prompt is held and goes in once (after `roost answer`), and the answer is
acknowledged with what the agent shows next."""

from __future__ import annotations

import json
import subprocess

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


def _held(world: Env, name: str) -> int:
    return int(world.ls()[name]["held_inputs"])


def _prompts_to(stub: object, text: str) -> int:
    """How many main requests carried `text` as the user's prompt."""
    from anthropic_stub import last_user_text

    return sum(
        1
        for r in getattr(stub, "requests", [])
        if r.kind == "main" and isinstance(r.body, dict) and last_user_text(r.body) == text
    )


@pytest.mark.parametrize(
    ("prompt", "service"),
    [("hello there, new folder", True), ("hello", False)],
    # with the service, its shared MCP endpoint: the prompt is typed once the tools are
    # listed; without it, a one-word prompt cannot go on claude's command line
    ids=["service-endpoint", "no-mcp-one-word"],
)
def test_claude_trust_question_holds_the_first_prompt_until_answered(
    world: Env, prompt: str, service: bool
) -> None:
    fresh = world.tmp / "fresh"  # a folder Claude Code has never been told to trust
    fresh.mkdir()
    with running_stub() as stub:
        real_world(world, stub.url)
        if service:
            world.start_service()
        mcp = () if service else ("--no-mcp",)
        out = world.roost("spawn", "cc", "--cwd", str(fresh), "--prompt", prompt, *mcp, timeout=120)
        said = out.stdout.strip()
        assert said.startswith("cc is waiting for you: Is this a project you created or one")
        assert "roost answer cc" in said and "your prompt is kept" in said
        row = world.ls()["cc"]
        assert row["status"] == "waiting"
        assert row["status_reason"] == "Is this a project you created or one you trust?"
        assert row["held_inputs"] == 1
        assert _prompts_to(stub, prompt) == 0  # nothing went into the question
        assert "[1 held]" in world.roost("ls").stdout

        shown = json.loads(world.roost("answer", "cc", "--json").stdout)
        assert [c["label"] for c in shown["choices"]] == ["No, exit", "Yes, I trust this folder"]
        assert shown["choices"][0]["selected"] is True

        bad = world.roost("answer", "cc", "maybe", check=False)
        assert bad.returncode == 2 and "offers no choice 'maybe'" in bad.stderr
        stale = world.roost("answer", "cc", "2", "--question", "0" * 16, check=False)
        assert stale.returncode == 1 and "changed since it was shown" in stale.stderr
        assert world.ls()["cc"]["status"] == "waiting"  # neither pressed anything

        done = world.roost(
            "answer", "cc", "yes, i trust", "--question", shown["question_id"], timeout=120
        ).stdout
        assert "answered cc: Yes, I trust this folder; it is at its input now" in done
        assert "its held prompt went in" in done
        world.wait_for(lambda: _prompts_to(stub, prompt) == 1, 60, what="the prompt's turn")
        assert _held(world, "cc") == 0
        kinds = [e["kind"] for e in json.loads(world.roost("events", "cc", "--json").stdout)]
        assert kinds.index("input-held") < kinds.index("answered") < kinds.index("input-delivered")
        assert kinds.count("input-delivered") == 1
        again = world.roost("answer", "cc", "1", check=False)
        assert again.returncode == 1 and "not waiting" in again.stderr
    assert _prompts_to(stub, prompt) == 1  # once, never twice


def test_claude_prompt_on_its_command_line_is_kept_by_claude(world: Env) -> None:
    """Without roost's MCP tools a prompt of words goes on claude's command line: Claude Code
    keeps it through its trust question and sends it itself after the answer."""
    fresh = world.tmp / "fresh"
    fresh.mkdir()
    prompt = "hello from the command line"
    with running_stub() as stub:
        real_world(world, stub.url)
        out = world.roost(
            "spawn", "cc", "--cwd", str(fresh), "--prompt", prompt, "--no-mcp", timeout=120
        )
        assert out.stdout.startswith("cc is waiting for you: Is this a project you created")
        assert _prompts_to(stub, prompt) == 0
        done = world.roost("answer", "cc", "2", timeout=120).stdout
        assert "answered cc: Yes, I trust this folder" in done
        world.wait_for(lambda: _prompts_to(stub, prompt) == 1, 60, what="the prompt's turn")


def test_claude_no_prompt_in_a_new_folder_waits_and_says_so(world: Env) -> None:
    fresh = world.tmp / "fresh"
    fresh.mkdir()
    with running_stub() as stub:
        real_world(world, stub.url)
        world.roost("spawn", "cc", "--cwd", str(fresh), "--no-mcp", timeout=120)
        row = world.wait_status("cc", "waiting", 60)
        assert row["status_reason"] == "Is this a project you created or one you trust?"
        # a send is never typed into the question
        sent = world.roost("send", "cc", "are you there", check=False, timeout=120)
        assert sent.returncode != 0 and "waiting for you" in sent.stderr
        assert world.ls()["cc"]["status"] == "waiting"
        done = world.roost("answer", "cc", "1", timeout=60).stdout  # "No, exit"
        assert "answered cc: No, exit; it is exited now" in done or "exited" in done
        assert not stub.requests or _prompts_to(stub, "are you there") == 0


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-repo", "new-repo"])
def test_a_worktree_spawn_with_a_prompt(world: Env, trusted: bool) -> None:
    """The README's main job in a new worktree. Claude Code 2.1.332 trusts a worktree of a
    repository the person trusted (checked here: no question, the prompt goes in); in a
    repository it has not seen it asks, and the prompt goes in once after the answer."""
    (world.user_home / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    repo = world.tmp / "work"  # real_world trusts this folder
    if not trusted:
        repo = world.tmp / "new-repo"
        repo.mkdir()
    with running_stub() as stub:
        real_world(world, stub.url)
        for args in (("init", "-q"), ("commit", "-q", "--allow-empty", "-m", "first")):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=world.env)
        world.start_service()
        prompt = "hello from a new worktree"
        out = world.roost(
            "spawn", "wt2", "--worktree", "--prompt", prompt, cwd=repo, timeout=120
        ).stdout
        if trusted:
            assert out.startswith("spawned wt2"), out
        else:
            assert out.startswith("wt2 is waiting for you: Is this a project you created"), out
            assert world.ls()["wt2"]["held_inputs"] == 1
            done = world.roost("answer", "wt2", "2", timeout=120).stdout
            assert "its held prompt went in" in done, done
        world.wait_for(lambda: _prompts_to(stub, prompt) == 1, 60, what="the prompt's turn")
        assert world.ls()["wt2"]["held_inputs"] == 0
        assert "/worktrees/" in world.ls()["wt2"]["cwd"]  # it runs in its own worktree
    assert _prompts_to(stub, prompt) == 1
