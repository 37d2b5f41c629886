"""Issue 38 point 6 (agents in the loop): a parent reads its child's change, comments on it and
sends the comments through `roost mcp`, over stdio with the SDK's own client; an agent outside
its subtree is refused. Real git, real tmux, the fake claude CLI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from test_mcp_server import Call, run_client
from test_review import git, repo, spawn_in_worktree

from conftest import Env

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = ["repo"]  # the fixture, used by name
pytestmark = pytest.mark.tmux


def test_a_parent_reads_comments_on_and_sends_a_review_to_its_child(world: Env, repo: Path) -> None:
    world.roost("spawn", "lead", "--detached")
    received = world.tmp / "received"
    wt = spawn_in_worktree(
        world,
        repo,
        "kid",
        "--provider",
        "claude",
        "--parent",
        "lead",
        "--orchestrated-by",
        "lead",
        env={"FAKE_AGENT_RECEIVED_DIR": str(received)},
    )
    spawn_in_worktree(world, repo, "stranger")
    world.wait_status("kid", "idle")
    app = wt / "app.py"
    app.write_text(app.read_text().replace("line 5\n", "line 5\nretry()\n"))
    git(wt, "commit", "-qam", "retry")
    (wt / "new.txt").write_text("new file\n" + "".join(f"more {n}\n" for n in range(40)))
    lead_id = world.ls()["lead"]["id"]

    async def script(session: ClientSession, call: Call) -> Any:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"read_diff", "add_review_comment", "send_review"} <= tools
        stat = await call("read_diff", name="kid", stat_only=True)
        assert "patch" not in stat and stat["against"] == "base"
        assert [(f["path"], f["status"], f["added"]) for f in stat["files"]] == [
            ("app.py", "modified", 1),
            ("new.txt", "untracked", 41),
        ]
        full = await call("read_diff", name="kid")
        assert "+retry()\n" in full["patch"] and "+new file\n" in full["patch"]
        short = await call("read_diff", name="kid", max_chars=200)
        assert len(short["patch"]) <= 200 and "cut at 200" in short["note"]
        off = await call("add_review_comment", name="kid", file="app.py", line=1, text="x")
        assert "error" in off  # line 1 is not in the change
        made = await call(
            "add_review_comment", name="kid", file="app.py", line=6, text="cap the retries"
        )
        assert (made["path"], made["start"], made["state"]) == ("app.py", 6, "open")
        for refused in (
            await call("read_diff", name="stranger"),
            await call("add_review_comment", name="stranger", file="a", line=1, text="x"),
            await call("send_review", name="stranger"),
        ):
            assert "not in your subtree" in refused["error"]
        return await call("send_review", name="kid")

    sent = run_client(world, lead_id, script)
    assert sent == {
        "name": "kid",
        "delivered": True,
        "how": sent["how"],
        "comments_sent": 1,
        "comments_left": 0,
    }
    texts = world.wait_for(
        lambda: [p.read_text() for p in sorted(received.glob("*.txt"))], what="the review"
    )
    assert "app.py, line 6" in texts[-1] and "cap the retries" in texts[-1]


def test_a_parent_merges_its_childs_work_into_its_own_worktree(world: Env, repo: Path) -> None:
    lead_wt = spawn_in_worktree(world, repo, "lead", "--provider", "claude")
    kid_wt = spawn_in_worktree(
        world, repo, "kid", "--provider", "claude", "--parent", "lead", "--orchestrated-by", "lead"
    )
    spawn_in_worktree(world, repo, "stranger")
    world.roost("spawn", "loner", "--cwd", str(world.tmp))
    for name in ("lead", "kid", "loner"):
        world.wait_status(name, "idle")
    (kid_wt / "feature.py").write_text("def feature():\n    return 42\n")
    git(kid_wt, "add", "feature.py")
    git(kid_wt, "commit", "-qm", "the feature")
    main_head = git(repo, "rev-parse", "HEAD")
    agents = world.ls()

    async def dirty_first(session: ClientSession, call: Call) -> Any:
        (lead_wt / "app.py").write_text("changed by hand\n")
        refused = await call("merge_child", name="kid")
        git(lead_wt, "checkout", "--", "app.py")
        stranger = await call("merge_child", name="stranger")
        merged = await call("merge_child", name="kid", mode="squash")
        return refused, stranger, merged

    refused, stranger, merged = run_client(world, agents["lead"]["id"], dirty_first)
    assert "has uncommitted changes (app.py)" in refused["error"]
    assert "not in your subtree" in stranger["error"]
    assert (
        merged["merged"] is True and merged["into"] == "roost/lead" and merged["mode"] == "squash"
    )
    assert (lead_wt / "feature.py").read_text() == "def feature():\n    return 42\n"
    assert git(lead_wt, "log", "-1", "--format=%s").startswith("agent kid: 1 commit")
    assert git(repo, "rev-parse", "HEAD") == main_head  # the person's checkout untouched
    assert not (repo / "feature.py").exists()

    # a parent with no worktree of its own: never into the person's main checkout unasked
    spawn_in_worktree(world, repo, "kid2", "--parent", "loner", "--orchestrated-by", "loner")

    async def no_worktree(session: ClientSession, call: Call) -> Any:
        return await call("merge_child", name="kid2")

    said = run_client(world, agents["loner"]["id"], no_worktree)
    assert "you have no worktree of your own to merge into" in said["error"]
    assert git(repo, "rev-parse", "HEAD") == main_head
