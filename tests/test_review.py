"""Issue 38 part 1 on real git repositories and a real tmux: `roost diff` (committed, staged,
unstaged and untracked in one view; binary files, renames, odd names, control characters in
contents; paging), `roost comment` (only on lines of the diff; open, moved, outdated) and
`roost review send` (one acknowledged message to the agent; sent, then addressed)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Env


def git(cwd: Path | str, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


@pytest.fixture
def repo(world: Env, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a few files committed on main; git's identity in the test HOME."""
    (world.user_home / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(world.user_home))
    clone = world.tmp / "repo"
    git(world.tmp, "init", "-q", str(clone))
    (clone / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    (clone / "old.txt").write_text("to be renamed\nsecond\nthird\n")
    (clone / "logo.png").write_bytes(b"\x89PNG\x00\x01\x02" * 10)
    (clone / "README").write_text("readme\n")
    (clone / ".gitignore").write_text("*.log\n")
    git(clone, "add", ".")
    git(clone, "commit", "-qm", "first")
    return clone


def roost(
    world: Env, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = world.roost(*args, env=env, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"roost {args} failed: {proc.stdout}{proc.stderr}")
    return proc


def spawn_in_worktree(
    world: Env, repo: Path, name: str, *extra: str, env: dict[str, str] | None = None
) -> Path:
    argv = extra or ("--provider", "command", "--", "sleep", "600")
    proc = world.roost("spawn", name, "--worktree", *argv, cwd=repo, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    return Path(world.ls()[name]["worktree"]["path"])


def refused(proc: subprocess.CompletedProcess[str], words: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert words in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def on_a_terminal(world: Env, *args: str) -> str:
    """`roost ARGS` with a pseudo-terminal for its output: what a person's terminal receives."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "roost", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=world.env,
        cwd=world.tmp,
    )
    os.close(follower)
    got = b""
    try:
        while chunk := os.read(leader, 65536):
            got += chunk
    except OSError:  # EIO: the other side closed
        pass
    finally:
        os.close(leader)
    assert proc.wait(timeout=60) == 0, got
    return got.decode("utf-8", "replace").replace("\r\n", "\n")


ODD = "odd name #(x)\nline.txt"  # a space, a tmux format, a newline


pytestmark = pytest.mark.tmux


def test_one_view_of_committed_staged_unstaged_and_untracked_changes(
    world: Env, repo: Path
) -> None:
    wt = spawn_in_worktree(world, repo, "ag")
    (wt / "app.py").write_text((wt / "app.py").read_text().replace("line 3\n", "line three\n"))
    git(wt, "commit", "-qam", "committed")
    (wt / "staged.py").write_text("print('staged')\n")
    git(wt, "add", "staged.py")
    git(wt, "mv", "old.txt", "new.txt")
    (wt / "README").write_text("readme\nunstaged line\n")
    (wt / ODD).write_text("evil \x1b]52;c;eHg=\x07 title\x1b[2J\rforged\n")
    (wt / "logo.png").write_bytes(b"\x89PNG\x00\x09" * 50)
    (wt / "debug.log").write_text("ignored\n")
    status_before = git(wt, "status", "--porcelain=v1", "-z")

    found = json.loads(roost(world, "diff", "ag", "--json").stdout)
    by_path = {f["path"]: f for f in found["files"]}
    assert found["against"] == "base" and found["branch"] == "roost/ag"
    assert found["base"] == git(repo, "rev-parse", "main").strip()
    assert {p: f["status"] for p, f in by_path.items()} == {
        "README": "modified",
        "app.py": "modified",
        "logo.png": "modified",
        "new.txt": "renamed",
        ODD: "untracked",
        "staged.py": "added",
    }
    assert by_path["new.txt"]["old_path"] == "old.txt"
    assert by_path["logo.png"]["binary"] and by_path["logo.png"]["size"] == 300
    assert by_path["app.py"]["hunks"][0]["lines"][2:4] == ["-line 3", "+line three"]
    assert by_path[ODD]["hunks"][0]["lines"] == ["+evil \x1b]52;c;eHg=\x07 title\x1b[2J\rforged"]

    names = roost(world, "diff", "ag", "--name-only").stdout
    assert names.splitlines() == [
        "README",
        "app.py",
        "logo.png",
        "new.txt",
        "staged.py",
        "odd name #(x)\\x0aline.txt",  # the untracked files after the tracked ones
    ]
    stat = roost(world, "diff", "ag", "--stat").stdout
    assert " logo.png" in stat and "| binary, 300 bytes" in stat
    assert "odd name #(x)\\x0aline.txt" in stat and "(new, untracked)" in stat
    assert " 6 files changed, 4 insertions(+), 1 deletion(-)" in stat

    shown = roost(world, "diff", "ag").stdout
    assert "\x1b" not in shown and "\r" not in shown and "\x07" not in shown
    assert "+evil \\x1b]52;c;eHg=\\x07 title\\x1b[2J\\x0dforged" in shown
    assert "modified: logo.png (binary, 300 bytes)" in shown
    assert "renamed: old.txt → new.txt" in shown
    assert "ag's worktree" in shown.splitlines()[0] and "(the commit it branched from)" in shown
    painted = roost(world, "diff", "ag", "--color=always").stdout
    assert "\x1b[32m+line three\x1b[0m" in painted
    assert "\x1b]52" not in painted and "\\x1b]52;c;eHg=" in painted
    # on a terminal: coloured unless told not to, the contents' controls escaped either way
    tty = on_a_terminal(world, "diff", "ag", "--file", ODD)
    assert "\x1b[32m+evil \\x1b]52;c;eHg=\\x07 title\\x1b[2J\\x0dforged\x1b[0m" in tty
    plain_tty = on_a_terminal(world, "diff", "ag", "--color=never")
    assert "\x1b" not in plain_tty and "\\x1b[2J" in plain_tty
    # only looked: the checkout's index and files are as they were
    assert git(wt, "status", "--porcelain=v1", "-z") == status_before
    # against a commit given: only what came after it
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "all")
    (wt / "later.txt").write_text("later\n")
    given = roost(world, "diff", "ag", "--name-only", "--base", "HEAD").stdout
    assert given.splitlines() == ["later.txt"]


def test_a_huge_diff_is_paged_and_one_file_shown_whole(world: Env, repo: Path) -> None:
    wt = spawn_in_worktree(world, repo, "ag")
    (wt / "big.txt").write_text("".join(f"row {n}\n" for n in range(1, 3001)))
    (wt / "long.txt").write_text("x" * 100_000 + "\n")
    (wt / "zz.txt").write_text("after\n")
    shown = roost(world, "diff", "ag").stdout
    assert "+row 500\n… 2500 more lines, `roost diff ag --file big.txt`\n" in shown
    assert "+row 501" not in shown
    assert "… (98001 more bytes)" in shown and len(shown) < 60_000
    assert "+after" in shown  # the files after a long one are shown too
    whole = roost(world, "diff", "ag", "--file", "big.txt").stdout
    assert "+row 3000\n" in whole and "more lines" not in whole and "zz.txt" not in whole
    ten = roost(world, "diff", "ag", "--file", "big.txt", "--lines", "10").stdout
    assert "+row 10\n… 2990 more lines" in ten
    refused(roost(world, "diff", "ag", "--file", "../x", check=False), "outside ag's checkout")


def test_agents_outside_a_worktree_and_bad_input(world: Env, repo: Path) -> None:
    roost(
        world, "spawn", "main-ag", "--cwd", str(repo), "--provider", "command", "--", "sleep", "600"
    )
    plain = world.tmp / "plain"
    plain.mkdir()
    roost(
        world,
        "spawn",
        "plain-ag",
        "--cwd",
        str(plain),
        "--provider",
        "command",
        "--",
        "sleep",
        "600",
    )
    (repo / "app.py").write_text("changed\n")
    shown = roost(world, "diff", "main-ag").stdout
    first = shown.splitlines()[0]
    assert "main-ag has no roost worktree: the uncommitted changes of its checkout" in first
    assert "+changed" in shown
    assert json.loads(roost(world, "diff", "main-ag", "--json").stdout)["against"] == "HEAD"
    refused(roost(world, "diff", "plain-ag", check=False), "is not in a git checkout")
    wt = spawn_in_worktree(world, repo, "wt-ag")
    git(repo, "worktree", "unlock", str(wt))
    git(repo, "worktree", "remove", "--force", str(wt))
    refused(roost(world, "diff", "wt-ag", check=False), "roost worktree recreate wt-ag")
    refused(roost(world, "diff", "nobody", check=False), "nobody")
    refused(roost(world, "diff", "main-ag", "--base", "no-such", check=False), "is no commit")
    refused(roost(world, "diff", "main-ag", "--base", "--all", check=False), "is no commit")


def comments(world: Env, name: str) -> dict[int, dict[str, object]]:
    found = json.loads(roost(world, "comment", name, "--list", "--json").stdout)
    return {c["id"]: c for c in found}


def test_comments_on_lines_of_the_diff_follow_them_and_say_when_they_changed(
    world: Env, repo: Path
) -> None:
    wt = spawn_in_worktree(world, repo, "ag")
    app = wt / "app.py"
    text = app.read_text().replace("line 10\n", "line 10\nadded a\nadded b\n")
    app.write_text(text)
    made = roost(world, "comment", "ag", "app.py:11", "why a?").stdout
    assert made.startswith("comment #1 on app.py, line 11; send it: roost review send ag")
    roost(world, "comment", "ag", "app.py:11-12", "both")
    refused(
        roost(world, "comment", "ag", "app.py:2", "not in it", check=False),
        "line 2 of app.py is not in the diff",
    )
    refused(
        roost(world, "comment", "ag", "README:1", "unchanged", check=False),
        "README is not changed in ag's diff",
    )
    refused(roost(world, "comment", "ag", "app.py", "x", check=False), "FILE:LINE")
    assert sorted(comments(world, "ag")) == [1, 2]  # nothing stored by the refusals
    listed = roost(world, "comment", "ag", "--list").stdout.splitlines()
    assert listed == [
        "#1 open      app.py:line 11  why a?",
        "#2 open      app.py:lines 11-12  both",
    ]

    app.write_text("new first\nnew second\n" + text)  # the lines move down by two
    moved = comments(world, "ag")
    assert (moved[1]["state"], moved[1]["now_start"]) == ("open", 13)
    assert "app.py:line 13 (was 11)" in roost(world, "comment", "ag", "--list").stdout

    app.write_text(text.replace("added a\n", "added A\n"))  # the line itself changed
    now = comments(world, "ag")
    assert now[1]["state"] == "outdated" and now[2]["state"] == "outdated"
    assert now[1]["lines"] == ["added a"] and now[1]["body"] == "why a?"  # never lost
    assert "app.py:line 11 (changed since)" in roost(world, "comment", "ag", "--list").stdout

    assert roost(world, "comment", "ag", "--rm", "2").stdout == "removed comment #2\n"
    refused(roost(world, "comment", "ag", "--rm", "2", check=False), "ag has no comment #2")
    assert sorted(comments(world, "ag")) == [1]


def test_review_send_delivers_one_message_then_tells_addressed_from_open(
    world: Env, repo: Path
) -> None:
    received = world.tmp / "received"
    wt = spawn_in_worktree(
        world, repo, "ag", "--provider", "claude", env={"FAKE_AGENT_RECEIVED_DIR": str(received)}
    )
    world.wait_status("ag", "idle")
    app = wt / "app.py"
    app.write_text(
        app.read_text()
        .replace("line 5\n", "line 5\nretry()\n")
        .replace("line 15\n", "line 15\nsleep(1)\n")
    )
    (wt / "notes \x1b[31m.md").write_text("a note\n")
    roost(world, "comment", "ag", "app.py:6", "retry forever? cap it")
    roost(world, "comment", "ag", "app.py:17", "why sleep?")
    roost(world, "comment", "ag", "notes \x1b[31m.md:1", "drop this file")

    out = roost(world, "review", "send", "ag").stdout
    assert out.startswith("sent 3 comments to ag (")
    texts = world.wait_for(
        lambda: (
            sorted(received.glob("*.txt"))
            and [p.read_text() for p in sorted(received.glob("*.txt"))]
        ),
        what="the review message received",
    )
    assert len(texts) == 1
    message = texts[0]
    assert "1. app.py, line 6:\n" in message
    assert "   > 6 | retry()\n" in message and "     5 | line 5\n" in message
    assert "   Comment:\n   retry forever? cap it" in message
    assert "2. app.py, line 17:" in message and "why sleep?" in message
    assert "3. notes \\x1b[31m.md, line 1:" in message and "\x1b" not in message
    assert {c["state"] for c in comments(world, "ag").values()} == {"sent"}
    world.wait_status("ag", "idle")

    # the agent's turn changed the first commented line; the second stayed
    app.write_text(app.read_text().replace("retry()\n", "retry(limit=3)\n"))
    now = comments(world, "ag")
    assert (now[1]["state"], now[2]["state"], now[3]["state"]) == ("addressed", "sent", "sent")
    assert (
        "#1 addressed app.py:line 6 (changed since)"
        in roost(world, "comment", "ag", "--list").stdout
    )
    refused(roost(world, "review", "send", "ag", check=False), "ag has no comments to send")
