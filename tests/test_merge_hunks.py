"""Issue 38 point 3: per-hunk selection when taking an agent's work (`roost merge NAME --hunks
FILE:N`, the TUI's and the web's picks): the patch of the chosen hunks is cut from git's own
diff, `git apply`'d onto the target's commit in a private index and committed; every refusal
leaves the target, the agent's branch and its worktree as they were (real git, in process)."""

from __future__ import annotations

from pathlib import Path

import gitrepo
import pytest
from gitrepo import git

from roost.core.errors import RoostError
from roost.merge import operations as merging
from roost.merge.rules import Pick, parse_picks
from roost.ops import lifecycle
from roost.ops.context import App
from roost.review import operations as review
from roost.worktrees import operations as worktrees

LINES = "".join(f"line {i}\n" for i in range(1, 31))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return gitrepo.made(tmp_path, monkeypatch, {"app.py": LINES, "logo.bin": b"\0\1\2"})


def spawn(app: App, repo: Path, name: str) -> Path:
    result = lifecycle.spawn(
        app, name, provider="command", cwd=str(repo), args=("sh",), worktree=worktrees.Ask()
    )
    return Path(result.agent.cwd)


def edit(path: Path, changes: dict[int, str]) -> None:
    lines = path.read_text().splitlines()
    for n, text in changes.items():
        lines[n - 1] = text
    path.write_text("\n".join(lines) + "\n")


def state(*where: Path, refs: bool = True) -> list[str]:
    """What a refused merge must leave: each checkout's status, refs, HEAD and files."""
    found: list[str] = []
    for r in where:
        found.append(git(r, "status", "--porcelain", "--untracked-files=all"))
        found.append(git(r, "rev-parse", "HEAD"))
        if refs:
            found.append(git(r, "for-each-ref", "--format=%(refname) %(objectname)"))
        found += [f"{p}:{p.read_bytes()!r}" for p in sorted(r.iterdir()) if p.is_file()]
    return found


def shown(app: App, name: str) -> dict[str, list[str]]:
    """Each file's hunks' fingerprints, as the TUI and the web get them (review's diff)."""
    d = review.diff(app, name)
    return {f.path: [h.fingerprint for h in f.hunks] for f in d.files}


def test_the_hunks_chosen_are_taken_as_one_commit_and_the_rest_stay(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    edit(wt / "app.py", {2: "two", 27: "twenty-seven"})
    git(wt, "commit", "-qam", "two hunks")
    edit(wt / "app.py", {14: "fourteen, not committed"})  # the diff shown holds it too
    (wt / "notes.md").write_text("new, untracked\n")
    tip, worktree_files = git(repo, "rev-parse", "roost/api"), state(wt, refs=False)
    prints = shown(app, "api")
    assert len(prints["app.py"]) == 3 and len(prints["notes.md"]) == 1
    picks = [Pick("app.py", 2, prints["app.py"][1]), Pick("app.py", 3), Pick("notes.md", 1)]
    done = merging.merge(app, "api", "hunks", hunks=picks)
    text = (repo / "app.py").read_text().splitlines()
    assert text[1] == "line 2" and text[13] == "fourteen, not committed"
    assert text[26] == "twenty-seven" and (repo / "notes.md").read_text() == "new, untracked\n"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%s") == "agent api: 3 hunks of its work on roost/api"
    assert "roost merge --hunks app.py:2,3, notes.md:1" in git(repo, "log", "-1", "--format=%b")
    assert git(repo, "log", "-1", "--format=%P") == git(repo, "rev-parse", "HEAD~1")
    assert done.plan.mode == "hunks" and done.plan.files == ("app.py:2", "app.py:3", "notes.md:1")
    # the agent's branch and worktree are untouched
    assert git(repo, "rev-parse", "roost/api") == tip and state(wt, refs=False) == worktree_files
    [m] = merging.history(app)
    assert m.state == "done" and m.result == git(repo, "rev-parse", "HEAD")


def test_into_a_branch_checked_out_nowhere(app: App, repo: Path) -> None:
    git(repo, "branch", "release")
    wt = spawn(app, repo, "api")
    edit(wt / "app.py", {5: "five"})
    main_before = git(repo, "rev-parse", "main")
    done = merging.merge(app, "api", "hunks", into="release", hunks=[Pick("app.py", 1)])
    assert git(repo, "rev-parse", "main") == main_before and (repo / "app.py").read_text() == LINES
    assert git(repo, "rev-parse", "release") == done.plan.result
    assert git(repo, "show", "release:app.py").splitlines()[4] == "five"


def test_a_hunk_applies_where_its_context_moved_to(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    edit(wt / "app.py", {20: "twenty"})
    (repo / "app.py").write_text("header\nheader\n" + LINES)  # main moved on: lines shifted
    git(repo, "commit", "-qam", "main adds a header")
    merging.merge(app, "api", "hunks", hunks=[Pick("app.py", 1)])
    assert (repo / "app.py").read_text().splitlines()[21] == "twenty"


@pytest.mark.parametrize(
    ("setup", "picks", "said"),
    [
        pytest.param(
            "", ["app.py:9"], "api's diff shows 2 hunks of app.py, not hunk 9", id="no-hunk"
        ),
        pytest.param("", ["gone.py:1"], "gone.py is not changed in api's diff", id="no-file"),
        pytest.param("", ["logo.bin:1"], "logo.bin is a binary file", id="binary"),
        pytest.param(
            "", ["app.py:1@0123456789ab"], "the diff changed since it was shown", id="changed"
        ),
        pytest.param(
            "dirty", ["app.py:1"], "the main checkout has uncommitted changes", id="dirty"
        ),
        pytest.param(
            "conflict",
            ["app.py:1"],
            "the hunks chosen would not apply to main in app.py",
            id="apply",
        ),
        pytest.param("working", ["app.py:1"], "api is mid-turn", id="mid-turn"),
    ],
)
def test_a_refused_pick_changes_nothing(
    app: App, repo: Path, setup: str, picks: list[str], said: str
) -> None:
    wt = spawn(app, repo, "api")
    edit(wt / "app.py", {2: "two", 27: "twenty-seven"})
    (wt / "logo.bin").write_bytes(b"\0\1\3")
    git(wt, "commit", "-qam", "agent's work")
    if setup == "dirty":
        (repo / "app.py").write_text("the person's edit\n")
    if setup == "conflict":
        edit(repo / "app.py", {2: "main's two"})
        git(repo, "commit", "-qam", "main changes line 2")
    if setup == "working":
        with app.store.write() as c:
            c.execute("UPDATE agents SET status = 'working' WHERE name = 'api'")
    before = state(repo, wt)
    with pytest.raises(RoostError, match=said.replace("(", r"\(")) as got:
        merging.merge(app, "api", "hunks", hunks=parse_picks(picks))
    assert "\n" not in str(got.value)
    assert state(repo, wt) == before and merging.history(app) == []


def test_a_hunk_shown_before_the_agent_changed_it_is_refused(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    edit(wt / "app.py", {2: "two"})
    first = shown(app, "api")["app.py"][0]
    edit(wt / "app.py", {2: "two, changed again"})  # the pane was drawn before this
    before = state(repo, wt)
    with pytest.raises(RoostError, match="the diff changed since it was shown"):
        merging.merge(app, "api", "hunks", hunks=[Pick("app.py", 1, first)])
    assert state(repo, wt) == before
    again = shown(app, "api")["app.py"][0]
    merging.merge(app, "api", "hunks", hunks=[Pick("app.py", 1, again)])
    assert (repo / "app.py").read_text().splitlines()[1] == "two, changed again"


def test_hunks_of_a_renamed_a_deleted_and_a_new_file(app: App, repo: Path) -> None:
    (repo / "old.py").write_text(LINES)
    (repo / "doomed.py").write_text("bye\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "more files")
    wt = spawn(app, repo, "api")
    git(wt, "mv", "old.py", "moved.py")
    edit(wt / "moved.py", {3: "three", 25: "twenty-five"})
    git(wt, "rm", "-q", "doomed.py")
    (wt / "fresh.py").write_text("fresh\n")
    git(wt, "add", "fresh.py")
    git(wt, "commit", "-qm", "rename, delete, add")
    d = review.diff(app, "api")
    kinds = {f.path: (f.status, f.old_path, len(f.hunks)) for f in d.files}
    assert kinds == {
        "moved.py": ("renamed", "old.py", 2),
        "doomed.py": ("deleted", None, 1),
        "fresh.py": ("added", None, 1),
    }
    picks = [Pick("moved.py", 2), Pick("doomed.py", 1), Pick("fresh.py", 1)]
    merging.merge(app, "api", "hunks", hunks=picks)
    assert not (repo / "old.py").exists() and not (repo / "doomed.py").exists()
    moved = (repo / "moved.py").read_text().splitlines()
    assert moved[2] == "line 3" and moved[24] == "twenty-five"  # the rename, hunk 2 only
    assert (repo / "fresh.py").read_text() == "fresh\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_hunk_with_lines_past_the_shown_bytes_is_taken_whole(app: App, repo: Path) -> None:
    wt = spawn(app, repo, "api")
    long = "x = '" + "y" * 5000 + "'"
    edit(wt / "app.py", {4: long})
    [f] = review.diff(app, "api").files
    assert "more bytes" in "".join(f.hunks[0].lines)  # the pane shows it cut
    merging.merge(app, "api", "hunks", hunks=[Pick("app.py", 1, f.hunks[0].fingerprint)])
    assert (repo / "app.py").read_text().splitlines()[3] == long  # git's bytes, all of them
