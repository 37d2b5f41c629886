"""Issue 38: the merge room's operations as the TUI, the web and MCP call them (in process, on
the fake tmux, with real git): a plan makes objects only, apply moves the branch and records a
sibling's new base with its notice queued, and a look marks the agents whose changes collide."""

from __future__ import annotations

from pathlib import Path

import gitrepo
import pytest
from gitrepo import git

from roost.core.errors import RoostError
from roost.merge import operations as merging
from roost.ops import lifecycle
from roost.ops.context import App
from roost.store import orchestration as queue
from roost.worktrees import operations as worktrees


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return gitrepo.made(
        tmp_path, monkeypatch, {"app.py": "".join(f"line {i}\n" for i in range(1, 11))}
    )


def spawn(app: App, repo: Path, name: str) -> Path:
    result = lifecycle.spawn(
        app, name, provider="command", cwd=str(repo), args=("sh",), worktree=worktrees.Ask()
    )
    return Path(result.agent.cwd)


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def test_plan_makes_objects_only_and_apply_moves_the_branch(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    spawn(app, repo, "sib")
    (wt / "new.py").write_text("y\n")
    git(wt, "add", "new.py")
    git(wt, "commit", "-qm", "new")
    before = refs(repo)
    p = merging.plan(app, "api", "squash")
    assert refs(repo) == before and git(repo, "status", "--porcelain") == ""
    assert git(repo, "cat-file", "-t", p.result) == "commit"
    assert (p.target, p.commits, p.into_main, p.uncommitted) == ("main", 1, True, 0)
    done = merging.apply(app, p, deliver=False)
    assert git(repo, "rev-parse", "main") == p.result and (repo / "new.py").exists()
    sib = app.store.require("sib")
    moved = merging.moved_base(app, sib)
    assert moved is not None and (moved.commit, moved.branch, moved.by_name) == (
        p.result,
        "main",
        "api",
    )
    assert merging.moved_base(app, app.store.require("api")) is None
    with app.store.write() as c:
        [notice] = queue.pending(c, sib.id)
    assert notice.status == "base-moved" and p.result[:12] in notice.text
    assert [m.state for m in merging.history(app)] == ["done"] and done.merge_id == 1


def test_a_plan_gone_stale_moves_nothing(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    (wt / "new.py").write_text("y\n")
    git(wt, "add", "new.py")
    git(wt, "commit", "-qm", "new")
    p = merging.plan(app, "api")
    (repo / "other.py").write_text("the person commits meanwhile\n")
    git(repo, "add", "other.py")
    git(repo, "commit", "-qm", "meanwhile")
    before = refs(repo)
    with pytest.raises(RoostError, match="moved since the merge was planned"):
        merging.apply(app, p)
    assert refs(repo) == before and merging.history(app) == []


def test_a_look_marks_overlapping_lines_and_unmarks_them(app: App, repo: Path) -> None:
    a, b = spawn(app, repo, "a"), spawn(app, repo, "b")
    for wt, text in ((a, "a's"), (b, "b's")):
        lines = (wt / "app.py").read_text().splitlines()
        lines[3] = text
        (wt / "app.py").write_text("\n".join(lines) + "\n")
    found = merging.check(app, app.store.require("a"))
    assert [dict(f.lines) for f in found] == [{"app.py": ((4, 4),)}]
    [pair] = merging.conflicts(app)
    assert sorted((pair.a_name, pair.b_name)) == ["a", "b"] and pair.alerted_at is not None
    git(b, "checkout", "--", "app.py")
    assert merging.check(app, app.store.require("b")) == []
    assert merging.conflicts(app) == [] and len(merging.conflicts(app, active=False)) == 1


def test_a_look_counts_untracked_files_two_agents_both_create(app: App, repo: Path) -> None:
    a, b, c = spawn(app, repo, "a"), spawn(app, repo, "b"), spawn(app, repo, "c")
    (a / "notes.md").write_text("a's notes\n")  # untracked in both: they collide
    (b / "notes.md").write_text("b's notes\nmore\n")
    (c / "own.md").write_text("c's alone\n")  # untracked in c only: no pair
    (a / "ignored.log").write_text("x\n")
    (b / "ignored.log").write_text("y\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.log\n")  # ignored files are no work
    found = merging.check(app, app.store.require("a"))
    assert [(sorted((f.a, f.b)), dict(f.lines)) for f in found] == [
        (sorted((app.store.require("a").id, app.store.require("b").id)), {"notes.md": ((0, 1),)})
    ]
    [pair] = merging.conflicts(app)
    assert sorted((pair.a_name, pair.b_name)) == ["a", "b"]
    # one agent's untracked file and another's committed one at the same path collide too
    (c / "notes.md").write_text("c's, committed\n")
    git(c, "add", "notes.md")
    git(c, "commit", "-qm", "notes")
    found = merging.check(app, app.store.require("c"))
    names = {app.store.require(n).id: n for n in ("a", "b", "c")}
    assert sorted(sorted(names[x] for x in (f.a, f.b)) for f in found) == [["a", "c"], ["b", "c"]]
    assert all("notes.md" in f.files and "own.md" not in f.files for f in found)


def test_a_merge_says_which_siblings_were_told_and_which_wait() -> None:
    """The CLI's lines, the web's and the TUI's receipt are one list: a sibling whose notice is
    held is said to be queued, never "told" (the web said "told" of every sibling)."""
    plan = merging.Plan(
        agent_id="i1", agent="a1", repo="/r", branch="roost/a1", target="main", into_main=True,
        mode="merge", source="b" * 40, before="c" * 40, result="d" * 40, commits=2,
        uncommitted=1,
    )  # fmt: skip
    done = merging.Done(plan, 1, (merging.Told("sib", True), merging.Told("nap", False)))
    said = done.said()
    assert said[0].startswith("merged a1 (roost/a1) into main")
    assert said[1:] == [
        f"note: {plan.note}",
        "told sib that main moved",
        "queued for nap that main moved (delivered once each is at its input)",
    ]
    assert merging.Done(plan, 1).said()[1:] == [f"note: {plan.note}"]
