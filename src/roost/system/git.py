"""git, the I/O half of worktrees (worktrees/rules.py decides): every call an argv list run
without a shell, `--` before paths, refs the user typed checked by `git check-ref-format`
before use, and facts read fresh from git each time they are needed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from roost.core.errors import RoostError
from roost.system import locks
from roost.worktrees.rules import Facts, check_branch_word

TIMEOUT = 60.0
# No pager, no prompt for credentials, no translated messages: roost reads git's words.
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


class GitError(RoostError):
    pass


def run(cwd: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True,
            text=True,
            env={**os.environ, **_ENV},
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took over {TIMEOUT:.0f}s in {cwd}") from None
    if check and proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise GitError(f"git {args[0]} failed in {cwd}: {said[-1] if said else proc.returncode}")
    return proc


def out(cwd: str, *args: str) -> str:
    return run(cwd, *args).stdout.strip()


# ---- the repository ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Repo:
    top: str  # the main worktree (or the bare repository)
    common: str  # the git common dir: shared by all worktrees, where roost's lock lives
    key: str  # a short hash of `common`: two repositories of one name get two folders

    @property
    def name(self) -> str:
        return os.path.basename(self.top.rstrip("/"))


def repo_of(cwd: str) -> Repo:
    """The repository `cwd` is in (from any of its worktrees), or a clear refusal."""
    proc = run(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
    if proc.returncode != 0:
        raise RoostError(f"--worktree needs a git repository: {cwd} is not inside one", code=2)
    common = os.path.realpath(proc.stdout.strip())
    top = os.path.dirname(common) if os.path.basename(common) == ".git" else common
    return Repo(top, common, hashlib.sha256(common.encode()).hexdigest()[:8])


def blob(repo: Repo, commit: str, path: str) -> bytes | None:
    """The bytes of `path` at `commit` (a resolved id), or None when it has no such file."""
    proc = subprocess.run(
        ["git", "-C", repo.top, "cat-file", "blob", f"{commit}:{path}"],
        capture_output=True,
        env={**os.environ, **_ENV},
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else None


def check_branch(repo: Repo, branch: str) -> str:
    """A branch name the user gave, refused unless git accepts it as a branch."""
    check_branch_word(branch)
    if run(repo.top, "check-ref-format", f"refs/heads/{branch}", check=False).returncode != 0:
        raise RoostError(f"invalid branch {branch!r}: git check-ref-format refuses it", code=2)
    return branch


def resolve(repo: Repo, ref: str) -> str:
    """The commit `ref` names (a branch, a tag, an id), or a clear refusal."""
    check_branch_word(ref)
    proc = run(
        repo.top,
        "rev-parse",
        "--verify",
        "-q",
        "--end-of-options",
        f"{ref}^{{commit}}",
        check=False,
    )
    if proc.returncode != 0:
        raise RoostError(f"--base {ref!r} is no commit in {repo.top}", code=2)
    return proc.stdout.strip()


def current_branch(cwd: str) -> str | None:
    proc = run(cwd, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return proc.stdout.strip() or None


def head(cwd: str) -> str | None:
    proc = run(cwd, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return proc.stdout.strip() or None


def branch_exists(repo: Repo, branch: str) -> bool:
    proc = run(repo.top, "show-ref", "--verify", "-q", f"refs/heads/{branch}", check=False)
    return proc.returncode == 0


@contextmanager
def locked(repo: Repo) -> Iterator[None]:
    """One roost creating or removing a worktree of this repository at a time (an flock in
    its common dir: shared by every roost home and released if the holder is killed)."""
    with locks.hold(Path(repo.common), "roost-worktree"):
        yield


# ---- worktrees -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Listed:
    path: str
    head: str | None
    branch: str | None
    locked: str | None  # the lock reason ("" when locked without one)


def worktrees(repo: Repo) -> dict[str, Listed]:
    """git's own list of the repository's worktrees, by real path."""
    text = run(repo.top, "worktree", "list", "--porcelain", "-z").stdout
    found: dict[str, Listed] = {}
    for block in text.split("\0\0"):
        fields: dict[str, str] = {}
        for line in block.split("\0"):
            key, _, value = line.partition(" ")
            if key:
                fields[key] = value
        if "worktree" in fields:
            path = os.path.realpath(fields["worktree"])
            branch = fields.get("branch", "").removeprefix("refs/heads/") or None
            found[path] = Listed(path, fields.get("HEAD"), branch, fields.get("locked"))
    return found


def add(repo: Repo, path: str, branch: str, start: str | None, reason: str) -> None:
    """Check `branch` out at `path`, locked with `reason`: a new branch from commit `start`,
    or (start None) the existing branch."""
    Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    argv = ["worktree", "add", "--lock", "--reason", reason]
    if start is not None:
        argv += ["-b", branch, "--", path, start]
    else:
        argv += ["--", path, branch]
    run(repo.top, *argv)


def relock(repo: Repo, path: str, reason: str) -> None:
    run(repo.top, "worktree", "unlock", "--", path, check=False)
    run(repo.top, "worktree", "lock", "--reason", reason, "--", path)


def remove(repo: Repo, path: str, reason: str) -> None:
    """Remove a clean worktree, never with --force: git refuses anything it would lose, and
    then it is locked again as it was."""
    run(repo.top, "worktree", "unlock", "--", path, check=False)
    proc = run(repo.top, "worktree", "remove", "--", path, check=False)
    if proc.returncode != 0:
        run(repo.top, "worktree", "lock", "--reason", reason, "--", path, check=False)
        said = proc.stderr.strip().splitlines()
        raise GitError(f"git refused to remove {path}: {said[-1] if said else '?'}")


def keep_reachable(repo: Repo, ref: str, commit: str) -> None:
    run(repo.top, "update-ref", "-m", "roost: worktree removed", ref, commit)


def delete_branch(repo: Repo, branch: str, commit: str) -> bool:
    """Delete the branch only if it still points at `commit` (the one judged merged)."""
    proc = run(repo.top, "update-ref", "-d", f"refs/heads/{branch}", commit, check=False)
    return proc.returncode == 0


def included(repo: Repo, include_file: str) -> list[str]:
    """The files to copy into a new worktree: ignored by git (and untracked) and matched by the
    repository's include list (gitignore syntax), as paths relative to the repository, none
    leading out of it. Asked of git twice: what it ignores, and what the list matches."""

    def others(*how: str) -> set[str]:
        text = run(repo.top, "ls-files", "-z", "--others", "--ignored", *how).stdout
        return {p for p in text.split("\0") if p}

    wanted = others(f"--exclude-from={include_file}") & others("--exclude-standard")
    top = os.path.realpath(repo.top)
    return sorted(p for p in wanted if os.path.realpath(os.path.join(top, p)).startswith(top + "/"))


def counts(repo: Repo, path: str, base: str | None) -> dict[str, int | str | None]:
    """`roost ls --git`: changed files (untracked too), and commits ahead of / behind the
    branch it was made from (its remote-tracking copy when there is one)."""
    if not os.path.isdir(path):
        return {"dirty": None, "ahead": None, "behind": None, "against": None}
    changed, untracked = _status(path)
    found = targets(repo, path, None, base)
    against = next((t for t in found if t.startswith("refs/remotes/")), found[0] if found else None)
    ahead = behind = None
    if against:
        text = out(path, "rev-list", "--left-right", "--count", f"HEAD...{against}")
        ahead, behind = (int(n) for n in text.split())
    short = against.split("/", 2)[-1] if against else None
    return {
        "dirty": len(changed) + len(untracked),
        "ahead": ahead,
        "behind": behind,
        "against": short,
    }


# ---- facts ---------------------------------------------------------------------------------
def facts(repo: Repo, path: str, base: str | None, spare: frozenset[int] = frozenset()) -> Facts:
    """Everything git says about the worktree at `path` now. `base`: the branch it was made
    from (its work counts as merged when that branch, or its upstream, holds it); `spare`:
    pids not to count as working inside (the agent's own, which rm stops first)."""
    if not os.path.isdir(path):
        return Facts(path, None, exists=False)
    branch = current_branch(path)
    commit = head(path)
    changed, untracked = _status(path)
    unpushed = int(out(path, "rev-list", "--count", "HEAD", "--not", "--remotes")) if commit else 0
    merged = commit is not None and _merged(repo, path, branch, base)
    return Facts(
        path=path,
        branch=branch,
        changed=changed,
        untracked=untracked,
        unpushed=unpushed,
        merged=merged,
        stashes=_stashes(repo, branch),
        in_progress=_in_progress(path),
        processes=processes_inside(path, spare),
        head=commit,
    )


def _status(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    text = run(path, "status", "--porcelain=v1", "-z", "--untracked-files=normal").stdout
    changed: list[str] = []
    untracked: list[str] = []
    entries = iter(text.split("\0"))
    for entry in entries:
        if not entry:
            continue
        code, name = entry[:2], entry[3:]
        if code == "??":
            untracked.append(name)
        else:
            changed.append(name)
            if "R" in code or "C" in code:
                next(entries, None)  # the rename's source path
    return tuple(changed), tuple(untracked)


def targets(repo: Repo, path: str, branch: str | None, base: str | None) -> list[str]:
    """The refs the branch's work may have been merged into: its upstream, and the branch it
    was made from with that branch's remote-tracking copies."""
    found: list[str] = []
    if branch:
        up = run(path, "rev-parse", "--symbolic-full-name", f"{branch}@{{upstream}}", check=False)
        found += [up.stdout.strip()] if up.returncode == 0 and up.stdout.strip() else []
    if base:
        refs = out(repo.top, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
        found += [r for r in refs.splitlines() if r == f"refs/heads/{base}" or _tracks(r, base)]
    return list(dict.fromkeys(found))


def _tracks(ref: str, base: str) -> bool:
    parts = ref.split("/", 3)  # refs, remotes, REMOTE, BRANCH
    return len(parts) == 4 and parts[1] == "remotes" and parts[3] == base


def _merged(repo: Repo, path: str, branch: str | None, base: str | None) -> bool:
    """Whether a target holds HEAD's work: by ancestry, or (a squash merge, whose commits are
    new ones) by tree: merging HEAD into the target changes nothing."""
    for target in targets(repo, path, branch, base):
        if run(path, "merge-base", "--is-ancestor", "HEAD", target, check=False).returncode == 0:
            return True
        merged = run(path, "merge-tree", "--write-tree", target, "HEAD", check=False)
        if merged.returncode == 0:
            tree = merged.stdout.split("\n", 1)[0].strip()
            if tree and tree == out(path, "rev-parse", f"{target}^{{tree}}"):
                return True
    return False


def _stashes(repo: Repo, branch: str | None) -> tuple[str, ...]:
    """Stash entries made on `branch` (the stash is one for all worktrees: only its subject,
    "WIP on B: ..." or "On B: ...", tells whose an entry is)."""
    if branch is None:
        return ()
    text = run(repo.top, "stash", "list", "--format=%gd %gs").stdout
    mine = (f"WIP on {branch}:", f"On {branch}:")
    return tuple(
        line.split(" ", 1)[0]
        for line in text.splitlines()
        if line.split(" ", 1)[-1].startswith(mine)
    )


_IN_PROGRESS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("BISECT_LOG", "bisect"),
)


def _in_progress(path: str) -> str | None:
    gitdir = out(path, "rev-parse", "--absolute-git-dir")
    for name, what in _IN_PROGRESS:
        if os.path.exists(os.path.join(gitdir, name)):
            return what
    return None


def processes_inside(path: str, spare: frozenset[int] = frozenset()) -> tuple[tuple[int, str], ...]:
    """Every process (anyone's that we may see) whose cwd is `path` or below it."""
    real = os.path.realpath(path)
    found: list[tuple[int, str]] = []
    for proc in psutil.process_iter(["pid", "name"]):
        if proc.pid in spare or proc.pid == os.getpid():
            continue
        try:
            cwd = proc.cwd()
        except (psutil.Error, OSError):
            continue
        if cwd == real or cwd.startswith(real + "/"):
            found.append((proc.pid, proc.info.get("name") or "?"))
    return tuple(sorted(found))
