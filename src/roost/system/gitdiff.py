"""git for review (review/rules.py reads what it says): an agent's change against a commit,
committed, staged, unstaged and untracked in one diff, from git itself.

Untracked files join the diff through a private index that holds only them (the checkout's own
index is never written): a second `git diff <base>` over them, run beside the tracked files' one,
shows them as new files. Every call is an
argv list with no shell, paths given as literal pathspecs after `--`, the person's diff
settings that would change the output's shape overridden (external diff, textconv, colour,
prefixes, context, relative paths). A patch is read as git writes it: line by line, each line
bounded, and git stopped as soon as the reader has had enough.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Generator, Iterator, Sequence
from typing import IO

from roost.core.errors import RoostError
from roost.system import untrusted

TIMEOUT = 120.0
PATCH_TIMEOUT = 600.0  # a patch read as it streams, all of it
ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",  # never refresh the checkout's index while looking
    "GIT_LITERAL_PATHSPECS": "1",  # a file named `*` or `:(top)x` is that file
}
# The diff's shape, whatever the person's config says.
SHAPE = (
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-M",
    "-U3",
)
# The summary's shape: -U3 implies --patch, which would have git write (and roost read past)
# every hunk on top of the records asked for (measured: 5x the bytes, ~6 ms of 25 on 10,000
# files with 200 changed).
SUMMARY_SHAPE = tuple(a for a in SHAPE if a != "-U3")
FILE_LIMIT = 16 << 20  # bytes of a file whose lines a comment is anchored in


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, **ENV, **(extra or {})}


def _start(
    cwd: str, args: Sequence[str], env: dict[str, str] | None = None, stdin: bool = False
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            ["git", "-C", cwd, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            env=_env(env),
        )
    except FileNotFoundError:
        raise RoostError("git is not installed (or not on PATH)") from None


@contextlib.contextmanager
def _deadline(proc: subprocess.Popen[bytes], seconds: float) -> Iterator[list[bool]]:
    """`proc` killed if it still runs after `seconds`; the list holds True once it was. A timer
    kills it, rather than communicate's timeout, whose wait polls with growing sleeps (ms per
    call under load)."""
    fired: list[bool] = []

    def kill() -> None:
        fired.append(True)
        proc.kill()

    timer = threading.Timer(seconds, kill)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


def _finish(
    proc: subprocess.Popen[bytes], what: str, cwd: str, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Its output once it exits, killed after TIMEOUT."""
    with _deadline(proc, TIMEOUT) as fired:
        try:
            out, err = proc.communicate(data)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if fired:
        raise RoostError(f"git {what} took over {TIMEOUT:.0f}s in {cwd}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _run(
    cwd: str, *args: str, env: dict[str, str] | None = None, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return _finish(_start(cwd, args, env, stdin=data is not None), args[0], cwd, data)


def _said(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit {proc.returncode}"


def _out(cwd: str, *args: str) -> str | None:
    proc = _run(cwd, *args)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


# ---- where and against what ------------------------------------------------------------------
def top_of(cwd: str) -> str | None:
    """The checkout `cwd` is in (its top folder), or None: not in a git checkout."""
    return where(cwd)[0]


def where(cwd: str) -> tuple[str | None, str | None]:
    """The checkout `cwd` is in and its HEAD commit, in one call (None, None: no checkout;
    (top, None): no commit yet)."""
    if not os.path.isdir(cwd):
        return None, None
    proc = _run(cwd, "rev-parse", "--show-toplevel", "HEAD")
    found = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if proc.returncode == 0 and len(found) >= 2:
        return os.path.realpath(found[0]), found[1].strip() or None
    top = _out(cwd, "rev-parse", "--show-toplevel")
    return (os.path.realpath(top), None) if top else (None, None)


def head(top: str) -> str | None:
    return _out(top, "rev-parse", "--verify", "-q", "HEAD")


def commit_of(top: str, ref: str) -> str | None:
    """The commit `ref` names in that checkout, or None (`ref` checked by the caller)."""
    return _out(top, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}")


def fork_point(top: str, branch: str, base: str | None) -> str | None:
    """The commit the worktree's branch started from: where it meets the branch it was made
    from (`git merge-base`), else the commit its branch was created at (its reflog's first
    entry), else None."""
    if base:
        found = _out(top, "merge-base", "HEAD", f"refs/heads/{base}")
        if found:
            return found
    return _created_at(top, branch)


def _created_at(top: str, branch: str) -> str | None:
    proc = _run(top, "reflog", "show", "--format=%H", f"refs/heads/{branch}", "--")
    if proc.returncode == 0:
        ids = proc.stdout.decode("ascii", "replace").split()
        if ids:
            return ids[-1]
    return None


def worktree_start(
    folder: str, branch: str, base: str | None
) -> tuple[str | None, str | None, str | None]:
    """`where` and `fork_point` of a worktree, their git calls side by side: (top, HEAD, the
    commit its branch started from)."""
    if not os.path.isdir(folder):
        return None, None, None
    calls = [("rev-parse", "--show-toplevel", "HEAD")]
    if base:
        calls.append(("merge-base", "HEAD", f"refs/heads/{base}"))
    found = _together(folder, calls)
    code, out = found[0]
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if code != 0 or len(lines) < 2:
        top, head = where(folder)
    else:
        top, head = os.path.realpath(lines[0]), lines[1].strip() or None
    if top is None:
        return None, None, None
    fork = None
    if base and found[1][0] == 0:
        fork = found[1][1].decode("ascii", "replace").strip() or None
    return top, head, fork or _created_at(top, branch)


def _together(cwd: str, calls: Sequence[tuple[str, ...]]) -> list[tuple[int, bytes]]:
    """Run these git calls at once; each one's exit status and output."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.extend(_start(cwd, args) for args in calls)
        done = []
        for proc, args in zip(procs, calls, strict=True):
            found = _finish(proc, args[0], cwd)
            done.append((found.returncode, found.stdout))
        return done
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# ---- the diff --------------------------------------------------------------------------------
def untracked(top: str) -> list[str]:
    """The files git does not track and does not ignore, exactly as named (surrogate escapes
    for bytes that are no UTF-8)."""
    proc = _run(top, "ls-files", "--others", "--exclude-standard", "-z")
    if proc.returncode != 0:
        raise RoostError(f"git ls-files failed in {top}: {_said(proc)}")
    return [p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p]


EMPTY_BLOB = {  # by the length of the repository's object ids
    40: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
    64: "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
}


@contextlib.contextmanager
def untracked_index(top: str, base: str, paths: Sequence[str]) -> Iterator[dict[str, str]]:
    """The environment for git calls that see `paths` (untracked files) as new files: a private
    index holding only them (each as an entry whose stat matches no file, so git reads the
    file itself), removed afterwards; the checkout's own index is never written. Made with
    `update-index --index-info`, which walks no folder (`add --intent-to-add` would)."""
    folder = tempfile.mkdtemp(prefix="roost-index-")
    try:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        blob = EMPTY_BLOB.get(len(base), EMPTY_BLOB[40]).encode()
        entries = b"".join(b"100644 " + blob + b"\t" + os.fsencode(p) + b"\0" for p in paths)
        proc = _run(top, "update-index", "-z", "--index-info", env=env, data=entries)
        if proc.returncode != 0:
            raise RoostError(f"git update-index failed in {top}: {_said(proc)}")
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _summary_argv(base: str, paths: Sequence[str]) -> list[str]:
    return ["diff", *SUMMARY_SHAPE, "--raw", "--numstat", "-z", "--no-abbrev", base, "--", *paths]


def summary(top: str, base: str, paths: Sequence[str] = ()) -> tuple[bytes, bytes, list[str]]:
    """`git diff --raw --numstat -z` of the checkout against `base`: the tracked files' (the
    checkout's index), the untracked files' (a private index holding them), and the untracked
    files' names. The two run side by side: the untracked files' walk costs no extra time."""
    tracked = _start(top, _summary_argv(base, paths))
    try:
        new = untracked(top)
        if paths:
            new = [
                p for p in new if any(p == q or p.startswith(q.rstrip("/") + "/") for q in paths)
            ]
        extra = b""
        if new:
            with untracked_index(top, base, new) as env:
                proc = _run(top, *_summary_argv(base, new), env=env)
                if proc.returncode != 0:
                    raise RoostError(f"git diff failed in {top}: {_said(proc)}")
                extra = proc.stdout
        done = _finish(tracked, "diff", top)
    finally:
        if tracked.poll() is None:
            tracked.kill()
            tracked.wait()
    if done.returncode != 0:
        raise RoostError(f"git diff failed in {top}: {_said(done)}")
    return done.stdout, extra, new


def patches(
    top: str, base: str, paths: Sequence[str], new: Sequence[str], line_bytes: int = 2000
) -> Generator[tuple[bytes, int], None, None]:
    """The patch of the tracked files, then of the untracked ones (`new`), as they stream."""
    yield from patch(top, base, {}, paths, line_bytes)
    if new:
        with untracked_index(top, base, new) as env:
            yield from patch(top, base, env, new, line_bytes)


def patch(
    top: str, base: str, env: dict[str, str], paths: Sequence[str] = (), line_bytes: int = 2000
) -> Generator[tuple[bytes, int], None, None]:
    """git's patch of the same diff as it streams: each line without its newline, cut to
    `line_bytes` (with how many bytes were cut). Closing the iterator stops git."""
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                ["git", "-C", top, "diff", *SHAPE, "-p", base, "--", *paths],
                stdout=subprocess.PIPE,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=_env(env),
            )
        except FileNotFoundError:
            raise RoostError("git is not installed (or not on PATH)") from None
        assert proc.stdout is not None
        finished = False
        with _deadline(proc, PATCH_TIMEOUT) as fired:  # a git that hangs is stopped
            try:
                yield from _lines(proc.stdout, line_bytes)
                finished = True
            finally:
                if not finished:
                    proc.kill()
                proc.stdout.close()
                code = proc.wait()
        if fired:
            raise RoostError(f"git diff took over {PATCH_TIMEOUT:.0f}s in {top}: stopped")
        if code != 0:
            err.seek(0)
            said = err.read(4096).decode("utf-8", "replace").strip().splitlines()
            raise RoostError(f"git diff failed in {top}: {said[-1] if said else code}")


PATCH_LIMIT = 32 << 20  # bytes of one file's patch a merge of its hunks reads at most


def patch_bytes(
    top: str, base: str, env: dict[str, str], paths: Sequence[str], limit: int = PATCH_LIMIT
) -> bytes:
    """git's whole patch of `paths` (the same diff and shape as `patch`) as bytes, exactly as
    written: what a merge of some of its hunks is cut from. Refused past `limit` bytes."""
    proc = _start(top, ["diff", *SHAPE, "-p", base, "--", *paths], env)
    assert proc.stdout is not None
    with _deadline(proc, TIMEOUT) as fired:
        try:
            out = proc.stdout.read(limit + 1)
            if len(out) > limit:
                proc.kill()
            _, err = proc.communicate()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if fired:
        raise RoostError(f"git diff took over {TIMEOUT:.0f}s in {top}: stopped")
    if len(out) > limit:
        raise RoostError(f"the patch of {len(paths)} file(s) is over {limit >> 20} MiB: not read")
    if proc.returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        raise RoostError(f"git diff failed in {top}: {said[-1][:300] if said else proc.returncode}")
    return out


def _lines(stream: IO[bytes], limit: int) -> Iterator[tuple[bytes, int]]:
    readline = stream.readline
    while True:
        line: bytes = readline(limit + 1)
        if not line:
            return
        if line.endswith(b"\n"):
            yield line[:-1], 0
            continue
        if len(line) <= limit:  # the last line, with no newline
            yield line, 0
            return
        kept, cut = line[:limit], len(line) - limit
        while True:  # the rest of a long line: counted, not kept
            rest: bytes = readline(1 << 16)
            if not rest:
                break
            if rest.endswith(b"\n"):
                cut += len(rest) - 1
                break
            cut += len(rest)
        yield kept, cut


def blob_size(top: str, blob: str) -> int | None:
    if not blob or set(blob) == {"0"}:
        return None
    found = _out(top, "cat-file", "-s", blob)
    return int(found) if found and found.isdigit() else None


# ---- a file in the checkout, as it is now ----------------------------------------------------
def file_lines(path: str, within: str) -> tuple[list[str], str] | None:
    """A file's lines (decoded with errors="replace") and the SHA-256 of its bytes, or None:
    not there, not a regular file, leading out of the folder `within`, or over FILE_LIMIT."""
    import hashlib

    try:
        with untrusted.open_file(path, within=(within,)) as f:
            data = f.read(FILE_LIMIT + 1)
    except OSError:
        return None
    if len(data) > FILE_LIMIT:
        return None
    text = data.decode("utf-8", "replace").split("\n")  # git's lines: \n ends one, nothing else
    if text and text[-1] == "":
        text.pop()
    return text, hashlib.sha256(data).hexdigest()


def size_of(path: str) -> int | None:
    try:
        return os.lstat(path).st_size
    except OSError:
        return None
