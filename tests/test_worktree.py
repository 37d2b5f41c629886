"""Issue 22: a git worktree per agent (real git, real tmux): made locked at a stable path outside
the repository, removed only when git says nothing would be lost, and crash-safe both ways."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from gitrepo import git

from roost.tui.live import LiveSource

from conftest import Env


@pytest.fixture
def repo(world: Env, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone of a local bare "remote", with main pushed; git's identity in the test HOME."""
    (world.user_home / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    # this process's git calls use it too; put back after the test (a HOME left behind made a
    # later test of the same worker look for a private folder under this /tmp one)
    monkeypatch.setenv("HOME", str(world.user_home))
    remote, clone = world.tmp / "remote.git", world.tmp / "repo"
    git(world.tmp, "init", "-q", "--bare", str(remote))
    git(world.tmp, "clone", "-q", str(remote), str(clone))
    (clone / "app.py").write_text("print('v1')\n")
    (clone / ".gitignore").write_text(".env\n")
    git(clone, "add", ".")
    git(clone, "commit", "-qm", "first")
    git(clone, "push", "-q", "origin", "main")
    return clone


def roost(
    world: Env, cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # its input /dev/null (no terminal: nothing is asked)
    proc = world.roost(*args, env=env, cwd=cwd, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"roost {args} failed: {proc.stdout}{proc.stderr}")
    return proc


def spawn(world: Env, repo: Path, name: str, *extra: str, run: tuple[str, ...] = ()) -> Path:
    argv = run or ("sleep", "600")
    roost(world, repo, "spawn", name, "--worktree", *extra, "--provider", "command", "--", *argv)
    return Path(world.ls()[name]["worktree"]["path"])


def listed(repo: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for block in git(repo, "worktree", "list", "--porcelain").split("\n\n"):
        fields = dict((line + " ").split(" ", 1) for line in block.splitlines())
        found[os.path.realpath(fields["worktree"].strip())] = {
            k: v.strip() for k, v in fields.items()
        }
    return found


def test_two_agents_edit_one_file_apart(world: Env, repo: Path) -> None:
    import socket

    held = socket.socket()  # a port in use: no block that holds it is leased
    with contextlib.suppress(OSError):  # (busy already: then someone else holds it)
        held.bind(("127.0.0.1", 20005))
    port = world.tmp / "port"
    show_port = ("sh", "-c", f'echo "$ROOST_PORT" >> "{port}"; exec sleep 600')
    a = spawn(world, repo, "a", "--home", "team", run=show_port)
    b = spawn(world, repo, "b", "--branch", "feature/b", "--home", "team", run=show_port)

    def both() -> list[str] | None:
        found = port.read_text().split() if port.exists() else []
        return found if len(found) == 2 else None

    ports = [int(p) for p in world.wait_for(both, what="both agents' ROOST_PORT")]
    assert abs(ports[0] - ports[1]) >= 10 and all(20010 <= p < 30000 for p in ports)
    assert a != b and repo not in a.parents and repo not in b.parents
    (a / "app.py").write_text("print('a')\n")
    (b / "app.py").write_text("print('b')\n")
    assert (a / "app.py").read_text() == "print('a')\n"
    assert (b / "app.py").read_text() == "print('b')\n"
    assert (repo / "app.py").read_text() == "print('v1')\n"
    entries = listed(repo)
    assert entries[str(a)]["branch"] == "refs/heads/roost/a"
    assert entries[str(b)]["branch"] == "refs/heads/feature/b"
    assert "roost: agent a (" in entries[str(a)]["locked"]
    # locked: git itself refuses to remove it, even with one --force
    assert (
        "locked"
        in subprocess.run(
            ["git", "-C", str(repo), "worktree", "remove", "--force", str(a)],
            capture_output=True,
            text=True,
        ).stderr
    )
    info = world.ls()["a"]
    assert info["cwd"] == str(a) and info["worktree"]["branch"] == "roost/a"
    # the agent runs inside its own worktree
    pane_path = world.tmux("display", "-p", "-t", world.pane_of("a"), "#{pane_current_path}")
    assert pane_path.strip() == str(a)
    # the shared home's keeper lives in the repository, not in a's worktree: a can go
    (a / "app.py").write_text("print('v1')\n")
    (b / "app.py").write_text("print('v1')\n")
    roost(world, repo, "rm", "a")
    assert not a.exists() and b.is_dir() and world.ls()["b"]["state"] == "running"
    import sqlite3

    with sqlite3.connect(world.home / "roost.db") as db:  # a's ports are free again
        assert [r[0] for r in db.execute("SELECT port FROM port_leases")] == [ports[1]]
    held.close()


def keep_reasons(
    repo: Path, wt: Path, started: list[subprocess.Popen[bytes]]
) -> list[tuple[Callable[[], object], str, Callable[[], object]]]:
    """Each reason to keep a worktree: (what makes it, the words rm must say, what undoes it).
    Undone in turn, so one agent serves them all (a spawn costs seconds)."""

    def write(name: str, text: str) -> int:
        return (wt / name).write_text(text)

    def rebase() -> None:
        git(repo, "branch", "other")
        git(repo, "checkout", "-q", "other")
        (repo / "app.py").write_text("other\n")
        git(repo, "commit", "-qam", "other")
        git(repo, "checkout", "-q", "main")
        write("app.py", "mine\n")
        git(wt, "commit", "-qam", "mine")
        git(wt, "push", "-q", "origin", "roost/a")  # pushed: only the rebase keeps it
        git(wt, "rebase", "other", check=False)  # a conflict stops it half-way
        write("app.py", "resolved\n")
        git(wt, "add", "app.py")  # nothing uncommitted to see: only the rebase

    def process() -> None:
        started.append(subprocess.Popen(["sleep", "600"], cwd=wt))

    def stop() -> None:
        started[-1].kill()
        started[-1].wait()

    return [
        (
            lambda: write("app.py", "changed\n"),
            "uncommitted changes in app.py",
            lambda: git(wt, "checkout", "-q", "--", "app.py"),
        ),
        (
            lambda: write("notes.txt", "mine\n"),
            "untracked files notes.txt",
            lambda: (wt / "notes.txt").unlink(),
        ),
        (
            lambda: (write("app.py", "v2\n"), git(wt, "commit", "-qam", "work")),
            "1 commit of roost/a on no remote and not merged upstream",
            lambda: git(wt, "push", "-q", "origin", "roost/a"),
        ),
        (
            lambda: (write("app.py", "stashed\n"), git(wt, "stash", "-q")),
            "stash entries made on roost/a: stash@{0}",
            lambda: git(wt, "stash", "drop", "-q"),
        ),
        (rebase, "a rebase is in progress", lambda: git(wt, "rebase", "--abort")),
        (process, "processes work inside it: sleep (pid", stop),
    ]


def test_rm_keeps_a_worktree_for_each_reason_and_says_it(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "a")
    started: list[subprocess.Popen[bytes]] = []
    try:
        for make, says, undo in keep_reasons(repo, wt, started):
            make()
            before = git(repo, "rev-parse", "refs/heads/roost/a")
            proc = roost(world, repo, "rm", "a", check=False)
            assert proc.returncode == 1, (says, proc.stdout)
            assert says in proc.stderr, (says, proc.stderr)
            assert "roost rm a --keep-worktree" in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1
            assert wt.is_dir() and world.ls()["a"]["state"] == "running"  # nothing changed
            assert git(repo, "rev-parse", "refs/heads/roost/a") == before
            assert git(repo, "for-each-ref", "refs/roost") == ""
            undo()
    finally:
        for p in started:
            p.kill()
            p.wait()
    roost(world, repo, "rm", "a")  # every reason undone: it goes
    assert not wt.exists()


def test_rm_removes_a_clean_pushed_worktree_and_keeps_its_branch(
    world: Env, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wt = spawn(world, repo, "a")
    (wt / "app.py").write_text("v2\n")
    git(wt, "commit", "-qam", "work")
    git(wt, "push", "-q", "origin", "roost/a")
    work = git(wt, "rev-parse", "HEAD")
    (wt / "scratch").write_text("x")
    [a] = json.loads(roost(world, repo, "ls", "--git", "--json").stdout)
    assert a["git"] == {
        "branch": "roost/a",
        "path": str(wt),
        "dirty": 1,
        "ahead": 1,
        "behind": 0,
        "against": "origin/main",
    }
    table = roost(world, repo, "ls", "--git").stdout
    assert f"a: roost/a at {wt}: 1 changed, 1 ahead / 0 behind origin/main" in table
    for key, value in world.env.items():  # the TUI's details panel asks the same of git
        monkeypatch.setenv(key, value)
    assert LiveSource().git_counts("a") == a["git"]
    (wt / "scratch").unlink()
    proc = roost(world, repo, "rm", "a")
    assert not wt.exists() and str(wt) not in listed(repo)
    assert "a" not in world.ls()
    assert "removed worktree" in proc.stdout
    assert git(repo, "rev-parse", "refs/heads/roost/a") == work  # pushed, not merged: stays
    [archived] = git(repo, "for-each-ref", "--format=%(objectname)", "refs/roost").splitlines()
    assert archived == work


def test_rm_removes_a_squash_merged_worktree_after_main_moved_on(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "a")
    (wt / "feature.py").write_text("x = 1\n")
    git(wt, "add", "feature.py")
    git(wt, "commit", "-qm", "feature part 1")
    (wt / "feature.py").write_text("x = 2\n")
    git(wt, "commit", "-qam", "feature part 2")
    work = git(wt, "rev-parse", "HEAD")
    git(repo, "merge", "-q", "--squash", "roost/a")
    git(repo, "commit", "-qm", "feature (squashed)")
    (repo / "app.py").write_text("print('v3')\n")  # main moves on
    git(repo, "commit", "-qam", "later work")
    git(repo, "push", "-q", "origin", "main")
    # ancestry alone would call it unmerged:
    assert git(repo, "merge-base", "--is-ancestor", work, "origin/main", check=False) == ""
    proc = roost(world, repo, "rm", "a")
    assert not wt.exists()
    assert "deleted branch roost/a (merged)" in proc.stdout
    assert git(repo, "branch", "--list", "roost/a") == ""
    assert git(repo, "for-each-ref", "--format=%(objectname)", "refs/roost") == work


def test_keep_worktree_then_prune(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "a")
    (wt / "notes.txt").write_text("mine\n")
    roost(world, repo, "rm", "a", "--keep-worktree")
    assert "a" not in world.ls() and wt.is_dir()
    dry = roost(world, world.tmp, "worktree", "prune", "--dry-run").stdout
    assert f"kept {wt}: untracked files notes.txt" in dry
    (wt / "notes.txt").unlink()
    dry = roost(world, world.tmp, "worktree", "prune", "--dry-run").stdout
    assert f"would remove {wt}" in dry and wt.is_dir()
    out = roost(world, world.tmp, "worktree", "prune").stdout
    assert f"removed {wt}" in out and not wt.exists()


def paused(world: Env, point: str, *args: str, cwd: Path) -> None:
    """Run roost until it stops at `point`, then kill -9 it there."""
    marker = world.home / f"paused-{point}"
    proc = world.roost_start(*args, env={"ROOST_TEST_PAUSE": point}, cwd=cwd, capture=False)
    try:
        world.wait_for(marker.exists, 30, f"roost paused at {point}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    marker.unlink()


def test_spawn_killed_after_the_worktree_is_made_is_adopted(world: Env, repo: Path) -> None:
    args = ("spawn", "a", "--worktree", "--provider", "command", "--", "sleep", "600")
    paused(world, "spawn-worktree", *args, cwd=repo)
    assert "a" not in world.ls()
    [made] = [p for p, e in listed(repo).items() if e.get("branch") == "refs/heads/roost/a"]
    assert "roost: agent a (" in listed(repo)[made]["locked"]
    roost(world, repo, *args)  # the same spawn again takes it over, at the same path
    assert world.ls()["a"]["worktree"]["path"] == made
    assert len(listed(repo)) == 2


def test_removal_killed_half_way_loses_nothing(world: Env, repo: Path) -> None:
    wt = spawn(world, repo, "a")
    (wt / "app.py").write_text("v2\n")
    git(wt, "commit", "-qam", "work")
    git(wt, "push", "-q", "origin", "roost/a")
    work = git(wt, "rev-parse", "HEAD")
    paused(world, "remove-worktree", "rm", "a", cwd=world.tmp)
    assert git(repo, "for-each-ref", "--format=%(objectname)", "refs/roost") == work
    assert wt.is_dir() and "a" in world.ls()  # still there, and roost still knows it
    roost(world, world.tmp, "rm", "a")
    assert not wt.exists() and "a" not in world.ls()
    assert git(repo, "rev-parse", "roost/a") == work


@pytest.mark.parametrize(
    "args, says",
    [
        (("--branch", "-b"), "may not start with '-'"),
        (("--branch", "--upload-pack=touch x"), "may not start with '-'"),
        (("--branch", "a..b"), "check-ref-format refuses it"),
        (("--base", "--output=x"), "may not start with '-'"),
        (("--base", "no-such-ref"), "is no commit"),
    ],
)
def test_spawn_worktree_refuses_bad_refs(
    world: Env, repo: Path, args: tuple[str, str], says: str
) -> None:
    proc = roost(
        world,
        repo,
        "spawn",
        "a",
        "--worktree",
        *args,
        "--provider",
        "command",
        "--",
        "sleep",
        "600",
        check=False,
    )
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert world.ls() == {} and len(listed(repo)) == 1
    assert not (world.tmp / "x").exists()


def test_spawn_worktree_outside_a_repository(world: Env, repo: Path) -> None:
    proc = roost(
        world,
        world.tmp,
        "spawn",
        "a",
        "--worktree",
        "--provider",
        "command",
        "--",
        "sleep",
        "600",
        check=False,
    )
    assert proc.returncode == 2 and "needs a git repository" in proc.stderr
    assert world.ls() == {}


def test_a_root_with_spaces_quotes_and_tmux_formats(world: Env, repo: Path) -> None:
    root = world.tmp / "it's #(touch pwned) #{pane_id}"
    (world.home).mkdir(exist_ok=True)
    (world.home / "config.toml").write_text(f"[worktree]\nroot = {json.dumps(str(root))}\n")
    wt = spawn(world, repo, "a")
    assert root in wt.parents and (wt / "app.py").exists()
    assert not (world.tmp / "pwned").exists() and not Path("pwned").exists()
    pane_path = world.tmux("display", "-p", "-t", world.pane_of("a"), "#{pane_current_path}")
    assert pane_path.strip() == str(wt)
    root.joinpath("x").mkdir()
    (world.home / "config.toml").write_text('[worktree]\nroot = "/tmp/a\\nb"\n')
    proc = roost(
        world,
        repo,
        "spawn",
        "b",
        "--worktree",
        "--provider",
        "command",
        "--",
        "sleep",
        "600",
        check=False,
    )
    assert proc.returncode == 2 and "control character" in proc.stderr


def test_wake_of_a_deleted_worktree_says_so_and_it_can_be_made_again(
    world: Env, repo: Path
) -> None:
    wt = spawn(world, repo, "a")
    (wt / "app.py").write_text("v2\n")
    git(wt, "commit", "-qam", "work")
    work = git(wt, "rev-parse", "HEAD")
    roost(world, repo, "kill", "a")
    import shutil

    shutil.rmtree(wt)
    proc = roost(world, world.tmp, "wake", "a", check=False)
    assert proc.returncode == 1 and f"worktree {wt} is gone" in proc.stderr
    assert "roost worktree recreate a" in proc.stderr
    assert world.ls()["a"]["state"] == "stopped" and not wt.exists()  # not started elsewhere
    doctor = roost(world, world.tmp, "doctor", check=False).stdout
    assert f"BAD  worktree a: {wt} is gone (branch roost/a)" in doctor
    assert "fix: roost worktree recreate a" in doctor
    roost(world, world.tmp, "worktree", "recreate", "a")
    assert (
        git(wt, "rev-parse", "HEAD") == work
        and "roost: agent a (" in listed(repo)[str(wt)]["locked"]
    )
    roost(world, world.tmp, "wake", "a")
    pane_path = world.tmux("display", "-p", "-t", world.pane_of("a"), "#{pane_current_path}")
    assert pane_path.strip() == str(wt)
    roost(world, world.tmp, "kill", "a")
    shutil.rmtree(wt)  # gone again: rm has no folder to lose, and git forgets it
    roost(world, world.tmp, "rm", "a")
    assert str(wt) not in listed(repo) and "a" not in world.ls()
    assert git(repo, "rev-parse", "roost/a") == work  # not merged: the branch stays


def test_export_import_keeps_the_worktree_and_refuses_one_it_cannot_verify(
    world: Env, repo: Path
) -> None:
    wt = spawn(world, repo, "a")
    exported = json.loads(roost(world, world.tmp, "export").stdout)
    assert exported["worktrees"] == [
        {
            "agent_id": world.ls()["a"]["id"],
            "repo": str(repo),
            "branch": "roost/a",
            "path": str(wt),
            "base": "main",
        }
    ]
    # another roost home on this machine (another user's import would be the same)
    other = {"ROOST_HOME": str(world.tmp / "other"), "ROOST_TMUX_SOCKET": world.socket + "o"}
    bad = json.loads(json.dumps(exported))
    bad["worktrees"][0]["path"] = str(world.tmp / "elsewhere")
    (world.tmp / "bad.json").write_text(json.dumps(bad))
    proc = roost(world, world.tmp, "import", str(world.tmp / "bad.json"), check=False, env=other)
    assert proc.returncode == 2, proc.stderr
    assert f"its worktree {world.tmp / 'elsewhere'} does not exist on this machine" in proc.stderr
    bad["worktrees"][0]["path"], bad["worktrees"][0]["branch"] = str(wt), "main"
    (world.tmp / "bad.json").write_text(json.dumps(bad))
    proc = roost(world, world.tmp, "import", str(world.tmp / "bad.json"), check=False, env=other)
    assert proc.returncode == 2 and "has roost/a checked out, not main" in proc.stderr
    listing = roost(world, world.tmp, "ls", "--json", env=other).stdout
    assert json.loads(listing) == []  # nothing stored
    (world.tmp / "good.json").write_text(json.dumps(exported))
    roost(world, world.tmp, "import", str(world.tmp / "good.json"), env=other)
    [a] = json.loads(roost(world, world.tmp, "ls", "--json", env=other).stdout)
    assert a["worktree"] == {"repo": str(repo), "branch": "roost/a", "path": str(wt)}


def test_fork_of_a_cli_that_cannot_fork_is_refused(world: Env) -> None:
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(world.tmp / "work"))
    proc = world.roost("fork", "gm", "fk", check=False)
    assert proc.returncode == 2 and "cannot fork gm: gemini 0.61 has no way" in proc.stderr
    # codex forks (tests/test_real_codex_fork.py), but only a conversation it has begun
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    proc = world.roost("fork", "cx", "fk", check=False)
    assert proc.returncode != 0 and "cannot fork cx: it has no conversation yet" in proc.stderr
    assert "fk" not in world.ls()


def test_worktreeinclude_copies_only_ignored_files_from_inside(world: Env, repo: Path) -> None:
    (repo / ".gitignore").write_text(".env\nlocal/\nbuild/\nlink.env\n")
    (repo / ".worktreeinclude").write_text(".env\nlocal/\nnotes.txt\nlink.env\n../outside\n")
    git(repo, "add", ".gitignore", ".worktreeinclude")
    git(repo, "commit", "-qm", "include list")
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "local").mkdir()
    (repo / "local" / "conf.toml").write_text("x = 1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("big\n")  # ignored, not listed: stays
    (repo / "notes.txt").write_text("untracked, not ignored\n")  # listed, not ignored: stays
    (world.tmp / "outside").write_text("not the repo's\n")
    (repo / "link.env").symlink_to(world.tmp / "outside")  # ignored and listed: a symlink out
    wt = spawn(world, repo, "a")
    assert (wt / ".env").read_text() == "SECRET=1\n"
    assert (wt / "local" / "conf.toml").read_text() == "x = 1\n"
    assert not (wt / "build").exists() and not (wt / "notes.txt").exists()
    assert not (wt / "link.env").exists() and not (wt.parent / "outside").exists()
    # copied files are ignored ones: they do not keep the worktree
    assert "removed worktree" in roost(world, repo, "rm", "a").stdout


def test_setup_script_runs_once_per_worktree_after_consent_to_its_content(
    world: Env, repo: Path
) -> None:
    runs = world.tmp / "setup-runs"
    (repo / ".roost").mkdir()
    script = repo / ".roost" / "worktree-setup"
    script.write_text('echo "set up on $ROOST_BRANCH"\necho "$PWD $ROOST_PORT" >> "$SETUP_RUNS"\n')
    git(repo, "add", ".roost")
    git(repo, "commit", "-qm", "setup")
    env = {"SETUP_RUNS": str(runs)}
    args = ("--provider", "command", "--", "sleep", "600")
    refused = roost(world, repo, "spawn", "a", "--worktree", *args, check=False, env=env)
    assert refused.returncode == 2 and "have not agreed to this content" in refused.stderr
    assert "--yes" in refused.stderr and world.ls() == {} and len(listed(repo)) == 1
    roost(world, repo, "spawn", "a", "--worktree", "--yes", *args, env=env)
    a = world.ls()["a"]
    [line] = runs.read_text().splitlines()
    assert line.split()[0] == a["cwd"] and int(line.split()[1]) >= 20000
    log = world.home / "agents" / a["id"] / "worktree-setup.log"
    assert log.read_text() == "set up on roost/a\n"
    roost(world, repo, "spawn", "b", "--worktree", *args, env=env)  # the same content: asked once
    assert len(runs.read_text().splitlines()) == 2
    script.write_text('echo changed >> "$SETUP_RUNS"\n')
    git(repo, "commit", "-qam", "setup changed")
    again = roost(world, repo, "spawn", "c", "--worktree", *args, check=False, env=env)
    assert again.returncode == 2 and "have not agreed to this content" in again.stderr
    assert len(runs.read_text().splitlines()) == 2 and "c" not in world.ls()


def test_a_setup_script_past_its_time_limit_is_killed_and_the_spawn_fails(
    world: Env, repo: Path
) -> None:
    (repo / ".roost").mkdir()
    script = repo / ".roost" / "worktree-setup"
    # a child of the script that outlives it unless the whole group goes
    script.write_text('echo started\nsleep 600 &\necho $! > "$SETUP_CHILD"\nwait\n')
    git(repo, "add", ".roost")
    git(repo, "commit", "-qm", "slow setup")
    world.home.mkdir(exist_ok=True)
    (world.home / "config.toml").write_text("[worktree]\nsetup_timeout = 5\n")  # room to start
    child = world.tmp / "setup-child"
    env = {"SETUP_CHILD": str(child)}
    args = ("--worktree", "--yes", "--provider", "command", "--", "sleep", "600")
    failed = roost(world, repo, "spawn", "a", *args, check=False, env=env)
    assert failed.returncode != 0 and "took over 5s (killed)" in failed.stderr, failed.stderr
    log = next((world.home / "agents").glob("*/worktree-setup.log"))
    assert f"its output: {log}" in failed.stderr and log.read_text() == "started\n"
    pid = int(child.read_text())
    world.wait_for(lambda: not _running(pid), what="the script's child killed too")
    assert "a" not in world.ls() and len(listed(repo)) == 2  # the worktree is kept to fix


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("value", ["0", "-5", '"soon"'])
def test_a_bad_setup_timeout_is_refused_before_anything_is_made(
    world: Env, repo: Path, value: str
) -> None:
    world.home.mkdir(exist_ok=True)
    (world.home / "config.toml").write_text(f"[worktree]\nsetup_timeout = {value}\n")
    args = ("--worktree", "--provider", "command", "--", "sleep", "600")
    proc = roost(world, repo, "spawn", "a", *args, check=False)
    assert proc.returncode == 2 and "worktree.setup_timeout must be a number" in proc.stderr, (
        proc.stderr
    )
    assert len(proc.stderr.strip().splitlines()) == 1
    (world.home / "config.toml").unlink()  # every command refuses a bad config: look without
    assert world.ls() == {} and len(listed(repo)) == 1


def test_roosts_own_processes_never_work_inside_an_agents_worktree(world: Env, repo: Path) -> None:
    """The roost service started by a command run inside a worktree, and the pane-died hook's
    jobs (tmux runs them in the home session's folder: the first agent's worktree), had the
    worktree as their working folder, so `rm` found "python" working inside it (CI, loaded:
    "processes work inside it: python"; the service's kept it for good)."""
    wt = spawn(world, repo, "a")
    world.roost("service", "start", cwd=wt)
    service = world.wait_for(
        lambda: (
            (s := json.loads(world.roost("service", "status", "--json").stdout))["running"] and s
        ),
        what="the service up",
    )
    assert psutil.Process(service["pid"]).cwd() == "/"
    hook = world.tmux("show-hooks", "-g", "pane-died")
    assert hook.count('run-shell -b "cd / && ') == 2, hook  # the supervisor's and the poke
    assert "removed worktree" in roost(world, repo, "rm", "a").stdout
