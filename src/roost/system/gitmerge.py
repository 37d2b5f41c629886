"""git for merges and collisions (issue 38; merge/rules.py decides, merge/operations.py acts).

Every call is an argv list without a shell, `--` before paths, its output read bounded (MAX_OUT
bytes, then the call is killed and refused) and decoded with errors="replace": git prints the
names of files an agent made. A merge is computed on objects only (`git merge-tree
--write-tree`, `git commit-tree`, a private index for --files, a private detached worktree for
--rebase): nothing moves until the one step that moves a branch (`git merge --ff-only` in a
clean main checkout, or `git update-ref NEW OLD` for a branch checked out nowhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from roost.core.errors import RoostError
from roost.merge import rules
from roost.system.git import _ENV, TIMEOUT, GitError, Repo, worktrees

MAX_OUT = 32 << 20  # bytes of one git call's output read at most
MAX_ERR = 64 << 10


@dataclass(frozen=True, slots=True)
class Ran:
    code: int
    out: str
    err: str

    def said(self) -> str:
        lines = (self.err.strip() or self.out.strip()).splitlines()
        return rules._plain(lines[-1]) if lines else f"exit {self.code}"


def run(
    cwd: str,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    limit: int = MAX_OUT,
    timeout: float = TIMEOUT,
) -> Ran:
    """git ARGS in `cwd`, its output bounded and decoded; a call past `timeout` seconds or
    `limit` bytes is killed and refused."""
    try:
        proc = subprocess.Popen(
            ["git", "-C", cwd, *args],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **_ENV, **(env or {})},
        )
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    assert proc.stdout is not None and proc.stderr is not None
    err: list[bytes] = []
    stderr = proc.stderr

    def drain() -> None:
        got = 0
        while chunk := stderr.read(65536):
            if got < MAX_ERR:
                err.append(chunk[: MAX_ERR - got])
            got += len(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        if stdin is not None and proc.stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        out = proc.stdout.read(limit + 1)
        if len(out) > limit:
            proc.kill()
        proc.wait()
    finally:
        timer.cancel()
        reader.join(timeout=5)
        proc.stdout.close()
    if len(out) > limit:
        raise GitError(f"git {args[0]} wrote over {limit >> 20} MiB in {cwd}: not read")
    if proc.returncode < 0:
        raise GitError(f"git {args[0]} took over {timeout:.0f}s in {cwd}")
    text = out.decode("utf-8", "replace")
    return Ran(proc.returncode, text, b"".join(err).decode("utf-8", "replace"))


def ok(
    cwd: str,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = TIMEOUT,
) -> str:
    ran = run(cwd, *args, env=env, stdin=stdin, timeout=timeout)
    if ran.code != 0:
        raise GitError(f"git {args[0]} failed in {cwd}: {ran.said()}")
    return ran.out


# ---- facts ---------------------------------------------------------------------------------
def tip(repo: Repo, branch: str) -> str | None:
    """The commit branch `branch` points at, or None: no such branch."""
    ran = run(repo.top, "rev-parse", "--verify", "-q", "--end-of-options", f"refs/heads/{branch}")
    return ran.out.strip() or None if ran.code == 0 else None


def worktree_paths(repo: Repo) -> list[str]:
    """Every checkout of the repository: the main one and its worktrees (real paths)."""
    return [w.path for w in worktrees(repo).values()]


def checked_out(repo: Repo, branch: str) -> list[str]:
    """The worktrees (real paths) that have `branch` checked out."""
    return [w.path for w in worktrees(repo).values() if w.branch == branch]


def main_branch(repo: Repo, checkout: str | None = None) -> str | None:
    """The branch the main checkout (or `checkout`, a worktree of it) has checked out (None: a
    detached HEAD)."""
    ran = run(checkout or repo.top, "symbolic-ref", "-q", "--short", "HEAD")
    return ran.out.strip() or None if ran.code == 0 else None


def dirty(path: str) -> tuple[str, ...]:
    """Tracked files with changes, staged or not (untracked ones a merge would overwrite
    stop `git merge --ff-only` itself, which then changes nothing)."""
    text = ok(path, "status", "--porcelain=v1", "-z", "--untracked-files=no")
    found: list[str] = []
    entries = iter(text.split("\0"))
    for entry in entries:
        if not entry:
            continue
        found.append(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:
            next(entries, None)
    return tuple(found)


def uncommitted(path: str) -> int:
    """Files with uncommitted changes in a worktree, untracked ones too (0: no folder)."""
    if not os.path.isdir(path):
        return 0
    text = run(path, "status", "--porcelain=v1", "-z", "--untracked-files=normal").out
    count, entries = 0, iter(text.split("\0"))
    for entry in entries:
        if entry:
            count += 1
            if "R" in entry[:2] or "C" in entry[:2]:
                next(entries, None)
    return count


def in_progress(path: str) -> str | None:
    from roost.system.git import _in_progress

    return _in_progress(path)


def count(repo: Repo, *revs: str, merges: bool = False) -> int:
    extra = ("--merges",) if merges else ()
    return int(ok(repo.top, "rev-list", "--count", *extra, *revs, "--").strip() or 0)


def merge_base(repo: Repo, a: str, b: str) -> str | None:
    ran = run(repo.top, "merge-base", a, b)
    return ran.out.strip() or None if ran.code == 0 else None


def merge_tree(repo: Repo, ours: str, theirs: str, timeout: float = TIMEOUT) -> rules.MergeTree:
    """What a merge of `theirs` into `ours` gives (commit ids), written as objects only."""
    ran = run(
        repo.top, "merge-tree", "--write-tree", "--name-only", "-z", ours, theirs, timeout=timeout
    )
    found = rules.merge_tree(ran.out, ran.code)
    if found.tree is None:
        raise GitError(f"git merge-tree failed in {repo.top}: {ran.said()}")
    return found


_RANGES = (
    "-c",
    "core.quotePath=true",
    "diff",
    "-U0",
    "--no-color",
    "--no-ext-diff",
    "--no-renames",
    "--no-textconv",
)


def changed_ranges(path: str, base: str, timeout: float = TIMEOUT) -> rules.Ranges:
    """The line ranges a worktree changed since commit `base` (committed or not, and its
    untracked files, which are not ignored: each a new file), on `base`'s side. The untracked
    files are diffed through a private index that holds only them (system/gitdiff's: the
    worktree's own index is never written)."""
    from roost.system import gitdiff

    if not os.path.isdir(path):
        return {}
    text = ok(path, *_RANGES, base, "--", timeout=timeout)
    found = rules.hunks(text)
    new = gitdiff.untracked(path)[: rules.MAX_FILES]  # names exactly as they are (bytes kept)
    if new:
        literal = {"GIT_LITERAL_PATHSPECS": "1"}  # a file named `*` is that file
        with gitdiff.untracked_index(path, base, new) as env:
            extra = ok(
                path,
                "diff",  # the names and how, never the contents: bounded whatever their size
                "--no-ext-diff",
                "--no-textconv",
                "--name-status",
                "-z",
                "--no-renames",
                base,
                "--",
                *new,
                env={**env, **literal},
                timeout=timeout,
            )
        for name, ranges in rules.untracked_ranges(extra).items():
            found.setdefault(name, ranges)
    return found


# ---- making the commits (objects only) ---------------------------------------------------------
def commit_tree(
    repo: Repo, tree: str, parents: Sequence[str], message: str, env: dict[str, str] | None = None
) -> str:
    argv = ["commit-tree", tree]
    for p in parents:
        argv += ["-p", p]
    return ok(repo.top, *argv, "-F", "-", env=env, stdin=message.encode()).strip()


def tree_of(repo: Repo, commit: str) -> str:
    return ok(repo.top, "rev-parse", "--verify", "--end-of-options", f"{commit}^{{tree}}").strip()


def files_tree(
    repo: Repo, target: str, source: str, paths: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """`target`'s tree with `paths` (files or folders) as they are at `source`: (the tree,
    the paths in neither). Made in a private index file; the repository's index is never
    touched."""
    missing = tuple(
        p for p in paths if not _ls_tree(repo, source, p) and not _ls_tree(repo, target, p)
    )
    if missing:
        return "", missing
    folder = tempfile.mkdtemp(prefix="roost-merge-")
    try:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        ok(repo.top, "read-tree", target, env=env)
        lines: list[str] = []
        for p in paths:
            theirs = _ls_tree(repo, source, p)
            for name in _ls_tree(repo, target, p).keys() - theirs.keys():
                lines.append(f"0 {'0' * 40}\t{name}")
            lines += [f"{mode} {oid}\t{name}" for name, (mode, oid) in theirs.items()]
        info = "".join(line + "\0" for line in lines).encode()
        ok(repo.top, "update-index", "-z", "--index-info", env=env, stdin=info)
        return ok(repo.top, "write-tree", env=env).strip(), ()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def patched_tree(repo: Repo, target: str, patch: bytes) -> tuple[str | None, str]:
    """`target`'s tree with `patch` applied by git itself (`git apply --cached`, each hunk
    placed by its context, all or nothing) in a private index file: (the tree, "") or (None,
    what git said, bounded). The repository's index and every checkout are never touched."""
    folder = tempfile.mkdtemp(prefix="roost-hunks-")
    try:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        ok(repo.top, "read-tree", target, env=env)
        ran = run(repo.top, "apply", "--cached", "--whitespace=nowarn", "-", env=env, stdin=patch)
        if ran.code != 0:
            return None, ran.err[:MAX_ERR]
        return ok(repo.top, "write-tree", env=env).strip(), ""
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _ls_tree(repo: Repo, commit: str, path: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) of every file at or under `path` in `commit`."""
    text = run(repo.top, "ls-tree", "-r", "-z", "--full-tree", commit, "--", path).out
    found: dict[str, tuple[str, str]] = {}
    for entry in text.split("\0"):
        head, _, name = entry.partition("\t")
        parts = head.split()
        if name and len(parts) == 3 and parts[1] in ("blob", "commit"):
            found[name] = (parts[0], parts[2])
    return found


def replay(repo: Repo, onto: str, source: str, upto: str) -> tuple[str | None, tuple[str, ...]]:
    """The commits `upto..source` replayed one by one on commit `onto` (a cherry-pick of each,
    its author and message kept) in a private detached worktree, removed after, whose hooks
    never run: (the last new commit, ()) or (None, the files the first commit that does not
    apply conflicts in). git 2.39's merge-tree has no --merge-base, hence the worktree; the
    agent's worktree and the main checkout are never touched."""
    folder = tempfile.mkdtemp(prefix="roost-rebase-")
    place = os.path.join(folder, "w")
    try:
        ok(
            repo.top,
            "-c",
            "core.hooksPath=/dev/null",
            "worktree",
            "add",
            "--detach",
            "-q",
            "--",
            place,
            onto,
        )
        try:
            picked = run(
                place,
                "-c",
                "core.hooksPath=/dev/null",
                "cherry-pick",
                "--allow-empty",
                "--keep-redundant-commits",
                f"{upto}..{source}",
            )
            if picked.code != 0:
                names = run(place, "diff", "--name-only", "-z", "--diff-filter=U").out
                conflicts = tuple(n for n in names.split("\0") if n) or (picked.said(),)
                run(place, "cherry-pick", "--abort")
                return None, conflicts
            return ok(place, "rev-parse", "HEAD").strip(), ()
        finally:
            run(repo.top, "worktree", "remove", "--force", "--", place)
            run(repo.top, "worktree", "prune")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- the one step that moves a branch ------------------------------------------------------
def fast_forward(repo: Repo, commit: str, checkout: str | None = None) -> None:
    """Move the main checkout's branch (or `checkout`'s, a clean worktree of it) to `commit`, a
    descendant of its tip: its files follow. git refuses, changing nothing, when the branch
    moved meanwhile or an untracked file would be overwritten."""
    ran = run(checkout or repo.top, "merge", "--ff-only", "-q", commit)
    if ran.code != 0:
        where = "the main checkout" if checkout in (None, repo.top) else checkout
        raise RoostError(f"git refused to move {where}: {ran.said()}; nothing changed")


def move_branch(repo: Repo, branch: str, new: str, old: str) -> None:
    """Move `branch` (checked out nowhere) from `old` to `new`, only if it still is at `old`."""
    ran = run(repo.top, "update-ref", "-m", "roost merge", f"refs/heads/{branch}", new, old)
    if ran.code != 0:
        raise RoostError(f"branch {branch} moved meanwhile: {ran.said()}; nothing changed")


def numstat(path: str, base: str) -> rules.Numstat:
    """What a worktree changed since commit `base` (committed or not, tracked files)."""
    text = ok(path, "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", base, "--")
    return rules.numstat(text)
