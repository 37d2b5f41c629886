"""Issue 38 points 3 and 4: `roost merge` takes a worktree agent's committed work (real git, real
tmux), refuses with one line and changes nothing in any repository when it must, tells the
sibling agents that their base moved, and the watch marks agents whose changes collide at a
turn's end and alerts once a pair."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import git

from conftest import Env

pytestmark = pytest.mark.tmux

ARGV_TO_FILE = str(Path(__file__).parent / "bin" / "argv-to-file")


@pytest.fixture
def repo(world: Env, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with main checked out and one commit; git's identity in the test HOME."""
    (world.user_home / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(world.user_home))
    clone = world.tmp / "repo"
    clone.mkdir()
    git(clone, "init", "-q")
    (clone / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    (clone / "other.py").write_text("x = 1\n")
    git(clone, "add", ".")
    git(clone, "commit", "-qm", "first")
    return clone


def roost(
    world: Env, cwd: Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = world.roost(*args, cwd=cwd, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"roost {args} failed: {proc.stdout}{proc.stderr}")
    return proc


def spawn(world: Env, repo: Path, name: str, *extra: str) -> Path:
    """A worktree agent that runs `sleep` (provider command), or the fake CLI `extra` names."""
    argv = extra or ("--provider", "command", "--", "sleep", "600")
    roost(world, repo, "spawn", name, "--worktree", *argv)
    return Path(world.ls()[name]["worktree"]["path"])


def commit(where: Path, name: str, text: str, message: str, author: str = "t") -> str:
    (where / name).write_text(text)
    git(where, "add", name)
    git(where, "-c", f"user.name={author}", "commit", "-qm", message)
    return git(where, "rev-parse", "HEAD")


def edited(path: Path, line: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[line - 1] = text + "\n"
    path.write_text("".join(lines))


def snapshot(*repos: Path) -> list[str]:
    """What must not change when a merge is refused: each checkout's status, every ref, the
    worktrees, and the files' bytes."""
    found: list[str] = []
    for r in repos:
        found.append(git(r, "status", "--porcelain", "--untracked-files=all"))
        found.append(git(r, "for-each-ref", "--format=%(refname) %(objectname)"))
        found.append(git(r, "worktree", "list", "--porcelain"))
        found.append(git(r, "rev-parse", "HEAD"))
        found += [f"{p}:{p.read_bytes()!r}" for p in sorted(r.glob("*.py"))]
    return found


@pytest.mark.parametrize(
    ("flags", "parents", "subject"),
    [
        pytest.param((), 2, "Merge branch 'roost/api' (agent api) into main", id="merge-commit"),
        pytest.param(("--squash",), 1, "agent api: 2 commits of roost/api, squashed", id="squash"),
        pytest.param(("--rebase",), 1, "second change", id="rebase"),
    ],
)
def test_merge_takes_the_committed_work_and_leaves_the_rest(
    world: Env, repo: Path, flags: tuple[str, ...], parents: int, subject: str
) -> None:
    wt = spawn(world, repo, "api")
    commit(repo, "other.py", "x = 2\n", "main moves on")  # not a fast-forward
    first = commit(wt, "app.py", "changed\n", "first change", author="agent")
    branch_tip = commit(wt, "new.py", "y = 1\n", "second change", author="agent")
    (wt / "draft.py").write_text("not committed\n")
    edited(wt / "app.py", 1, "uncommitted edit")
    hook = repo / ".git" / "hooks" / "post-checkout"  # a rebase's private worktree runs none
    hook.write_text(f"#!/bin/sh\ntouch '{world.tmp / 'hook-ran'}'\n")
    hook.chmod(0o755)
    out = roost(world, repo, "merge", "api", *flags, "--yes")
    assert not (world.tmp / "hook-ran").exists()
    assert out.stdout.startswith("merged api (roost/api) into main"), out.stdout
    assert "2 uncommitted files: not merged" in out.stdout
    assert git(repo, "log", "-1", "--format=%s") == subject
    assert len(git(repo, "log", "-1", "--format=%P").split()) == parents
    assert (repo / "new.py").read_text() == "y = 1\n" and (repo / "app.py").read_text() == (
        "changed\n"
    )
    assert not (repo / "draft.py").exists() and (repo / "other.py").read_text() == "x = 2\n"
    assert git(repo, "status", "--porcelain") == ""
    # the agent's branch and worktree are untouched: its tip, its uncommitted work
    assert git(repo, "rev-parse", "roost/api") == branch_tip
    assert (wt / "draft.py").exists() and (wt / "app.py").read_text().startswith("uncommitted")
    if flags == ("--rebase",):  # replayed: new commits, their author and messages kept
        log = git(repo, "log", "-3", "--format=%an %s").splitlines()
        assert log == ["agent second change", "agent first change", "t main moves on"]
        assert first not in git(repo, "rev-list", "main")
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        rows = db.execute("SELECT mode, state, result FROM merges").fetchall()
    assert rows == [(flags[0][2:] if flags else "merge", "done", git(repo, "rev-parse", "HEAD"))]


def test_files_takes_only_those_paths_as_one_commit(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "api")
    commit(wt, "app.py", "taken\n", "change app")
    commit(wt, "other.py", "x = 99\n", "change other")
    before = git(repo, "rev-parse", "HEAD")
    out = roost(world, repo, "merge", "api", "--files", "app.py", "--yes")
    assert "1 path as one commit" in out.stdout
    assert (repo / "app.py").read_text() == "taken\n" and (repo / "other.py").read_text() == (
        "x = 1\n"
    )
    assert git(repo, "log", "-1", "--format=%P") == before
    assert git(repo, "log", "-1", "--format=%s") == "agent api: app.py from roost/api"
    gone = roost(world, repo, "merge", "api", "--files", "nowhere.py", "--yes", check=False)
    assert gone.returncode != 0 and "nowhere.py in neither roost/api nor main" in gone.stderr


def test_a_conflicting_merge_is_refused_naming_the_files_and_nothing_changes(
    world: Env, repo: Path
) -> None:
    wt = spawn(world, repo, "api")
    edited(repo / "app.py", 3, "main's line 3")
    git(repo, "commit", "-qam", "main edits line 3")
    edited(wt / "app.py", 3, "api's line 3")
    git(wt, "commit", "-qam", "api edits line 3")
    commit(wt, "clean.py", "ok\n", "a clean file too")
    before = snapshot(repo, wt)
    for flags in ((), ("--squash",), ("--rebase",)):
        out = roost(world, repo, "merge", "api", *flags, "--yes", check=False)
        assert out.returncode == 1
        assert out.stderr.count("\n") == 1 and "would conflict in app.py" in out.stderr
        assert "clean.py" not in out.stderr
        assert snapshot(repo, wt) == before
    assert git(repo, "worktree", "list").count("\n") == 1  # no worktree of a rebase left behind


def test_a_dirty_main_checkout_is_refused_naming_its_files(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "api")
    commit(wt, "new.py", "y\n", "new")
    for i in range(7):
        (repo / f"f{i}.py").write_text("a\n")
    git(repo, "add", ".")
    (repo / "app.py").write_text("local edit\n")
    before = snapshot(repo, wt)
    out = roost(world, repo, "merge", "api", "--yes", check=False)
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert "the main checkout has uncommitted changes (app.py, f0.py," in out.stderr
    assert "and 3 more" in out.stderr
    assert snapshot(repo, wt) == before


def test_a_deleted_branch_and_an_agent_without_worktree_are_refused(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "api")
    git(wt, "checkout", "-q", "--detach")
    git(repo, "branch", "-D", "roost/api")
    before = snapshot(repo)
    out = roost(world, repo, "merge", "api", "--yes", check=False)
    assert out.returncode == 1 and "api's branch roost/api was deleted" in out.stderr
    assert snapshot(repo) == before and wt.is_dir()
    roost(world, repo, "spawn", "plain", "--provider", "command", "--", "sleep", "600")
    out = roost(world, repo, "merge", "plain", "--yes", check=False)
    assert out.returncode == 1 and "plain has no worktree" in out.stderr
    out = roost(world, repo, "merge", "nobody", "--yes", check=False)
    assert out.returncode != 0 and out.stderr.count("\n") == 1
    assert snapshot(repo) == before


def test_without_a_terminal_it_asks_for_yes(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "api")
    commit(wt, "new.py", "y\n", "new")
    before = snapshot(repo, wt)
    out = roost(world, repo, "merge", "api", check=False)
    assert out.returncode == 2 and "add --yes" in out.stderr
    assert snapshot(repo, wt) == before


def test_an_agent_mid_turn_is_refused_and_a_sibling_hears_that_main_moved(
    world: Env, repo: Path
) -> None:
    busy = spawn(world, repo, "busy", "--provider", "claude")
    sibling = spawn(world, repo, "sib", "--provider", "claude")
    assert busy != sibling
    world.wait_status("busy", "idle")
    world.wait_status("sib", "idle")
    commit(busy, "new.py", "y\n", "new")
    roost(world, repo, "send", "busy", "work 60")
    world.wait_status("busy", "working")
    before = snapshot(repo, busy)
    out = roost(world, repo, "merge", "busy", "--yes", check=False)
    assert out.returncode == 1 and "busy is mid-turn" in out.stderr
    assert snapshot(repo, busy) == before
    world.tmux("send-keys", "-t", world.pane_of("busy"), "Escape")
    world.wait_status("busy", "idle", timeout=30)
    out = roost(world, repo, "merge", "busy", "--yes")
    assert "told sib that main moved" in out.stdout, out.stdout + out.stderr
    head = git(repo, "rev-parse", "HEAD")
    world.wait_screen(world.pane_of("sib"), f"main moved to {head[:12]}")
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        moved = db.execute(
            "SELECT b.commit_id, a.name FROM base_moves b JOIN agents a ON a.id = b.agent_id"
        ).fetchall()
        pending = db.execute(
            "SELECT COUNT(*) FROM notifications WHERE delivered_at IS NULL"
        ).fetchone()[0]
    assert moved == [(head, "sib")] and pending == 0
    events = [e["kind"] for e in json.loads(roost(world, repo, "events", "busy", "--json").stdout)]
    assert events.index("merging") < events.index("merged")
    # on request, the sibling's checkout against where main is now: main has busy's new.py,
    # sib has not (against its old base, new.py is no part of its change)
    against = json.loads(roost(world, repo, "diff", "sib", "--new-base", "--json").stdout)
    assert against["base"] == head and against["against"] == "given"
    assert ("new.py", "deleted") in [(f["path"], f["status"]) for f in against["files"]]
    own = json.loads(roost(world, repo, "diff", "sib", "--json").stdout)
    assert "new.py" not in [f["path"] for f in own["files"]]
    unmoved = roost(world, repo, "diff", "busy", "--new-base", check=False)
    assert unmoved.returncode == 2 and "busy's base branch has not moved" in unmoved.stderr


def alerts_to(world: Env, out: Path) -> None:
    command = json.dumps([sys.executable, ARGV_TO_FILE, str(out)])
    (world.home / "config.toml").write_text(f"[notify]\ncommand = {command}\ntimeout = 30\n")


def sent(out: Path) -> list[list[str]]:
    return [json.loads(x)[-2:] for x in out.read_text().splitlines()] if out.exists() else []


def test_overlapping_agents_are_marked_at_a_turn_end_and_alerted_once(
    world: Env, repo: Path
) -> None:
    a = spawn(world, repo, "a", "--provider", "claude")
    b = spawn(world, repo, "b", "--provider", "claude")
    c = spawn(world, repo, "c", "--provider", "claude")
    for name in ("a", "b", "c"):
        world.wait_status(name, "idle")
    out = world.tmp / "alerts.jsonl"
    alerts_to(world, out)
    world.roost("notify", "run", "--once")  # the starts decided: only what follows is news
    edited(a / "app.py", 5, "a's line 5")
    edited(a / "app.py", 6, "a's line 6")
    edited(b / "app.py", 6, "b's line 6")  # overlaps a at line 6 (uncommitted work counts)
    edited(c / "app.py", 15, "c's line 15")  # apart from both
    assert world.ls()["a"]["collides_with"] == []  # nothing judged while no turn ended

    def turn(name: str) -> None:
        """A turn that lasts until it is seen working, then ended with Esc."""
        roost(world, repo, "send", name, "work 120")
        world.wait_status(name, "working", timeout=30)
        world.tmux("send-keys", "-t", world.pane_of(name), "Escape")
        world.wait_status(name, "idle", timeout=30)

    turn("a")
    listing = world.ls()
    assert listing["a"]["collides_with"] == ["b"] and listing["b"]["collides_with"] == ["a"]
    assert listing["c"]["collides_with"] == []
    assert "[collides: b]" in roost(world, repo, "ls").stdout
    found = json.loads(roost(world, repo, "conflicts", "--json").stdout)
    assert [(f["agents"], f["files"], f["lines"]) for f in found] == [
        (["a", "b"], ["app.py"], {"app.py": [[6, 6]]})
    ]
    assert "a and b: both change app.py line 6" in roost(world, repo, "conflicts").stdout
    world.roost("notify", "run", "--once")
    world.roost("notify", "run", "--once")  # a second decider (a restart) repeats nothing
    alerted = [
        ["roost: a collides with another agent's changes", "a and b: both change app.py line 6"]
    ]
    assert sent(out) == alerted
    turn("b")  # the same pair judged again, from b's side: marked still, not alerted again
    world.roost("notify", "run", "--once")
    assert sent(out) == alerted and world.ls()["b"]["collides_with"] == ["a"]
    edited(b / "app.py", 6, "line 6")  # b puts it back: the pair no longer collides
    turn("b")
    assert world.ls()["a"]["collides_with"] == []
    assert json.loads(roost(world, repo, "conflicts", "--json").stdout) == []


def test_a_predicted_merge_conflict_of_committed_work_marks_both(world: Env, repo: Path) -> None:
    a = spawn(world, repo, "a")
    b = spawn(world, repo, "b")
    commit(a, "both.py", "from a\n", "a adds both.py")
    commit(b, "both.py", "from b\n", "b adds both.py")
    found = json.loads(roost(world, repo, "conflicts", "--now", "--json").stdout)
    assert [(f["agents"], f["conflicts"]) for f in found] == [(["a", "b"], ["both.py"])]


def test_into_a_branch_checked_out_nowhere_moves_that_branch_alone(world: Env, repo: Path) -> None:
    git(repo, "branch", "release")
    wt = spawn(world, repo, "api")
    other = spawn(world, repo, "other")
    roost(world, repo, "kill", "other")
    tip = commit(wt, "new.py", "y\n", "new")
    (repo / "app.py").write_text("the person's own edit, not committed\n")
    main_before = git(repo, "rev-parse", "main")
    release_before = git(repo, "rev-parse", "release")
    out = roost(world, repo, "merge", "api", "--into", "release", "--yes")
    assert "into release" in out.stdout
    assert git(repo, "rev-parse", "main") == main_before  # the main checkout is not touched
    assert (repo / "app.py").read_text() == "the person's own edit, not committed\n"
    assert git(repo, "log", "-1", "--format=%P", "release").split() == [release_before, tip]
    # `other` was made from main, not release: told nothing; and one made from main hears of
    # a merge into main without being woken (it sleeps: the notice waits for its wake)
    assert "other" not in out.stdout
    git(repo, "checkout", "--", "app.py")
    roost(world, repo, "merge", "api", "--yes")
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        pending = db.execute(
            "SELECT a.name, n.status FROM notifications n JOIN agents a ON a.id = n.parent_id "
            "WHERE n.delivered_at IS NULL"
        ).fetchall()
    assert pending == [("other", "base-moved")]
    assert world.ls()["other"]["state"] == "stopped" and other.is_dir()
    # a branch another worktree has checked out is never moved under it
    refused = roost(world, repo, "merge", "api", "--into", "roost/other", "--yes", check=False)
    assert refused.returncode == 1 and "is checked out in the worktree" in refused.stderr
    bad = roost(world, repo, "merge", "api", "--into", "-x", "--yes", check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_fan_of_worktree_agents_compared_side_by_side_with_their_check(
    world: Env, repo: Path
) -> None:
    (repo / "check.py").write_text(
        "import os, sys\nprint('checking\\x1b[31m')\n"
        "sys.exit(0 if os.path.exists('ok.txt') else 3)\n"
    )
    git(repo, "add", "check.py")
    git(repo, "commit", "-qm", "a check")
    out = roost(
        world, repo, "spawn", "api", "--fan", "2", "--provider", "command", "--", "sleep", "600"
    )
    assert "fanned out: api-1, api-2" in out.stdout
    listing = world.ls()
    one, two = (Path(listing[n]["worktree"]["path"]) for n in ("api-1", "api-2"))
    assert listing["api-1"]["worktree"]["branch"] == "roost/api-1" and one != two
    commit(one, "ok.txt", "fine\n", "one passes")
    edited(one / "app.py", 2, "one's line 2")  # uncommitted, counted
    commit(two, "app.py", "short\n", "two rewrites app.py")
    (world.home / "config.toml").write_text(
        f'[review]\ncheck = "{sys.executable} check.py"\ncheck_timeout = 60\n'
    )
    found = json.loads(roost(world, repo, "compare", "api-1", "api-2", "--check", "--json").stdout)
    figures = {
        s["agent"]: (s["files"], s["added"], s["deleted"], s["commits"], s["uncommitted"])
        for s in found
    }
    assert figures == {"api-1": (2, 2, 1, 1, 1), "api-2": (1, 1, 20, 1, 0)}
    assert [s["check"]["exit_code"] for s in found] == [0, 3]
    table = roost(world, repo, "compare", "api-1", "api-2", "--check").stdout
    assert "passed (" in table and "failed (exit 3" in table and "+1 -20" in table
    assert "\x1b" not in table and "checking\\x1b[31m" in table  # its output shown escaped
    plain = roost(world, repo, "compare", "api-1", "api-2").stdout
    assert "check" not in plain and plain.splitlines()[0].split() == ["api-1", "api-2"]
    refused = roost(world, repo, "spawn", "api", "--fan", "2", "--provider", "command", check=False)
    assert refused.returncode != 0 and "api-1, api-2 exist already" in refused.stderr
    too_many = roost(world, repo, "spawn", "x", "--fan", "11", check=False)
    assert too_many.returncode == 2 and "--fan takes 2 to 10" in too_many.stderr
    roost(world, repo, "spawn", "plain", "--provider", "command", "--", "sleep", "600")
    lone = roost(world, repo, "compare", "api-1", "plain", check=False)
    assert lone.returncode == 1 and "plain has no worktree" in lone.stderr
    roost(world, repo, "merge", "api-1", "--yes")  # the one chosen
    assert (repo / "ok.txt").read_text() == "fine\n"


def test_a_merge_killed_after_the_branch_moved_is_settled_by_the_next(
    world: Env, repo: Path
) -> None:
    import signal

    wt = spawn(world, repo, "api")
    spawn(world, repo, "sib")
    roost(world, repo, "kill", "sib")
    commit(wt, "new.py", "y\n", "new")
    marker = world.home / "paused-merge-moved"
    proc = world.roost_start(
        "merge", "api", "--yes", env={"ROOST_TEST_PAUSE": "merge-moved"}, cwd=repo, capture=False
    )
    try:
        world.wait_for(marker.exists, 30, "roost paused after the branch moved")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def stored() -> list[tuple[object, ...]]:
        with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
            return db.execute(
                "SELECT m.state, (SELECT COUNT(*) FROM base_moves), (SELECT COUNT(*) FROM "
                "notifications WHERE status = 'base-moved') FROM merges m"
            ).fetchall()

    assert (repo / "new.py").exists() and stored() == [("moving", 0, 0)]  # intent, then effect
    again = roost(world, repo, "merge", "api", "--yes", check=False)
    assert again.returncode == 1 and "nothing to merge" in again.stderr
    assert stored() == [("done", 1, 1)]  # the killed merge's siblings are told after all


def test_hunks_named_as_roost_diff_shows_them_are_taken_alone(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "api")
    edited(wt / "app.py", 2, "two")
    edited(wt / "app.py", 19, "nineteen")
    git(wt, "commit", "-qam", "two hunks")
    shown = roost(world, repo, "diff", "api", "--color", "never").stdout
    assert "@@ -1,5 +1,5 @@  (hunk 1)" in shown and "(hunk 2)" in shown
    [f] = json.loads(roost(world, repo, "diff", "api", "--json").stdout)["files"]
    ids = [h["id"] for h in f["hunks"]]
    prints = [h["fingerprint"] for h in f["hunks"]]
    assert ids == ["app.py:1", "app.py:2"] and all(len(p) == 12 for p in prints)
    before = snapshot(repo, wt)
    for bad, code, said in (
        (("--hunks", "app.py"), 2, "give FILE:N[,N...]"),
        (("--hunks", "app.py:3"), 1, "api's diff shows 2 hunks of app.py, not hunk 3"),
        (("--hunks", "app.py:1", "--squash"), 2, "--hunks goes alone"),
    ):
        out = roost(world, repo, "merge", "api", *bad, "--yes", check=False)
        assert out.returncode == code and said in out.stderr, out.stderr
        assert snapshot(repo, wt) == before
    out = roost(world, repo, "merge", "api", "--hunks", f"app.py:2@{prints[1]}", "--yes")
    assert "merged api (roost/api) into main: 1 hunk as one commit" in out.stdout, out.stdout
    lines = (repo / "app.py").read_text().splitlines()
    assert lines[1] == "line 2" and lines[18] == "nineteen"
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        assert db.execute("SELECT mode, state FROM merges").fetchall() == [("files", "done")]
    merged = [
        e
        for e in json.loads(roost(world, repo, "events", "api", "--json").stdout)
        if e["kind"] == "merging"
    ]
    assert merged[0].get("hunks", merged[0].get("detail", {}).get("hunks")) == ["app.py:2"], merged
