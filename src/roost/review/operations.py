"""Review's operations, the API the CLI calls (and the TUI, the web and MCP tools after it):
an agent's change (`target`, `summary`, `files`, `diff`), comments on it (`comment`,
`comments`, `remove`) and their one acknowledged send (`send`). review/rules.py decides and
words; system/gitdiff.py asks git; the comments' rows are store/review.py's.

What is diffed: an agent with a roost worktree, its worktree against the commit its branch
started from (or `base` given); an agent whose folder is in a checkout roost did not make (the
main checkout), that checkout's uncommitted changes against HEAD; anything else is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.ops.context import App
from roost.review import rules
from roost.store import review as reviewdb
from roost.store import worktrees as wtdb
from roost.system import gitdiff


@dataclass(frozen=True, slots=True)
class Target:
    """What `diff` compares: the agent's checkout `top` against commit `base`."""

    agent: Agent
    top: str
    base: str
    against: str  # "base", "given" or "HEAD" (rules.Diff)
    head: str | None
    branch: str | None


def target(app: App, name: str, base: str | None = None) -> Target:
    """The agent's checkout and the commit its change is against, or one clear refusal."""
    agent = app.store.require(name)
    row = wtdb.of_agent(app.store.conn, agent.id)
    folder = row.path if row is not None else agent.cwd
    fork = None
    if row is not None and base is None:
        top, head, fork = gitdiff.worktree_start(folder, row.branch, row.base)
    else:
        top, head = gitdiff.where(folder)
    if top is None:
        if row is not None:
            raise RoostError(
                f"{name}'s worktree {rules.shown_path(folder)} is gone or no git checkout: "
                f"roost worktree recreate {name}"
            )
        raise RoostError(
            f"{name}'s folder {rules.shown_path(folder)} is not in a git checkout: nothing to diff"
        )
    if base is not None:
        if not base or base.startswith("-") or any(ord(ch) < 32 for ch in base):
            raise RoostError(f"--base {rules.shown_path(base)!r} is no commit", code=2)
        found = gitdiff.commit_of(top, base)
        if found is None:
            raise RoostError(
                f"--base {rules.shown_path(base)!r} is no commit in {rules.shown_path(top)}", code=2
            )
        return Target(agent, top, found, "given", head, row.branch if row else None)
    if row is None:
        if head is None:
            raise RoostError(
                f"{name}'s checkout {rules.shown_path(top)} has no commit yet: nothing to "
                "diff against"
            )
        return Target(agent, top, head, "HEAD", head, None)
    if fork is None:
        raise RoostError(
            f"roost cannot tell the commit {name}'s branch {row.branch} started from; "
            f"give it: roost diff {name} --base COMMIT"
        )
    return Target(agent, top, fork, "base", head, row.branch)


def _paths(t: Target, file: str | None) -> list[str]:
    return [relative(t, file)] if file is not None else []


def relative(t: Target, path: str) -> str:
    """A file the person named (relative to the agent's checkout, or absolute inside it), as a
    path relative to it; refused when it leads out."""
    full = os.path.normpath(os.path.join(t.top, path))
    if full != t.top and not full.startswith(t.top.rstrip("/") + "/"):
        raise RoostError(f"{rules.shown_path(path)} is outside {t.agent.name}'s checkout", code=2)
    rel = os.path.relpath(full, t.top)
    if rel == ".":
        raise RoostError("name a file, not the checkout", code=2)
    return rel


def summary(app: App, t: Target, file: str | None = None) -> rules.Diff:
    """The change's files with their counts (binary files with their size), no hunks: what
    `--stat`, `--name-only` and a file list need. The tracked files first (git's order), then
    the untracked ones, shown as new files."""
    del app  # the App is the API's shape: the TUI and the web call with theirs
    tracked, extra, new = gitdiff.summary(t.top, t.base, _paths(t, file))
    known = rules.parse_summary(tracked)
    paths = {f.path for f in known}
    added = [
        f
        for f in rules.parse_summary(extra, frozenset(new))
        if f.status == rules.UNTRACKED and f.path not in paths
    ]
    found = tuple(_sized(t, f) for f in [*known, *added])
    return rules.Diff(t.agent.name, t.top, t.base, t.against, t.head, t.branch, found)


def _sized(t: Target, f: rules.FileChange) -> rules.FileChange:
    if not f.binary:
        return f
    size = None if f.status == "deleted" else gitdiff.size_of(os.path.join(t.top, f.path))
    if size is None:
        size = gitdiff.blob_size(t.top, f.new_blob) or gitdiff.blob_size(t.top, f.old_blob)
    return replace(f, size=size)


def files(
    app: App, t: Target, budget: rules.Budget, file: str | None = None
) -> Iterator[rules.FileChange]:
    """Each file of the change with its hunks, as git's patch streams: at most the budget's
    lines kept (the rest counted in `more`, files past the total budget unread); closing the
    iterator early stops git."""
    d = summary(app, t, file)
    if not d.files:
        return
    new = [f.path for f in d.files if f.status == rules.UNTRACKED]
    stream = gitdiff.patches(t.top, t.base, _paths(t, file), new, budget.line_bytes)
    try:
        yield from rules.read_patch(stream, d.files, budget)
    finally:
        stream.close()


def diff(
    app: App,
    name: str,
    *,
    base: str | None = None,
    file: str | None = None,
    budget: rules.Budget | None = None,
) -> rules.Diff:
    """The whole change in one record (hunks within `budget`: the TUI's and the web's call)."""
    t = target(app, name, base)
    given = budget or rules.Budget()
    found = tuple(files(app, t, given, file))
    return rules.Diff(name, t.top, t.base, t.against, t.head, t.branch, found)


# ---- comments ---------------------------------------------------------------------------------
def comment(app: App, name: str, path: str, start: int, end: int, body: str) -> rules.Comment:
    """Keep a comment on lines start..end of `path` (the new side), refused unless they are in
    the diff; its revision is the checkout's HEAD and the file's SHA-256 now."""
    text = rules.check_body(body)
    t = target(app, name)
    rel = relative(t, path)
    found = list(files(app, t, rules.Budget(file_lines=0, total_lines=None), rel))
    if not found:
        raise RoostError(f"{rules.shown_path(rel)} is not changed in {name}'s diff")
    why = rules.in_diff(found[0], start, end)
    if why is not None:
        raise RoostError(why)
    now = gitdiff.file_lines(os.path.join(t.top, rel), t.top)
    if now is None:
        raise RoostError(f"{rules.shown_path(rel)} cannot be read (not a regular file, or too big)")
    lines, sha = now
    if end > len(lines):
        raise RoostError(f"{rules.shown_path(rel)} has {len(lines)} lines, not {end}")
    anchor = rules.anchor_at(lines, start, end)
    with app.store.write() as c:
        new_id = reviewdb.insert(c, t.agent.id, rel, anchor, text, t.head, sha, c.now_iso())
    return next(x for x in reviewdb.of_agent(app.store.conn, t.agent.id) if x.id == new_id)


def _folder(app: App, agent: Agent) -> str:
    row = wtdb.of_agent(app.store.conn, agent.id)
    folder = row.path if row is not None else agent.cwd
    return gitdiff.top_of(folder) or folder


def comments(app: App, name: str) -> list[rules.Seen]:
    """Every comment on the agent's change, each as it stands now (open, outdated, sent,
    addressed: rules.seen), against the files as they are."""
    return [s for s, _, _ in _seen(app, app.store.require(name))]


def _seen(app: App, agent: Agent) -> list[tuple[rules.Seen, list[str] | None, str | None]]:
    """Each comment as it stands, with the lines and SHA-256 of its file it was judged on."""
    stored = reviewdb.of_agent(app.store.conn, agent.id)
    if not stored:
        return []
    top = _folder(app, agent)
    cache: dict[str, tuple[list[str], str] | None] = {}
    found = []
    for c in stored:
        if c.path not in cache:
            cache[c.path] = gitdiff.file_lines(os.path.join(top, c.path), top)
        now = cache[c.path]
        text, sha = now if now is not None else (None, None)
        found.append((rules.seen(c, text, sha), text, sha))
    return found


def remove(app: App, name: str, comment_id: int) -> None:
    agent = app.store.require(name)
    with app.store.write() as c:
        if not reviewdb.delete(c, agent.id, comment_id):
            raise RoostError(f"{name} has no comment #{comment_id}", code=2)


@dataclass(frozen=True, slots=True)
class Sent:
    """What `send` did: the comments delivered (ids), those left for the next send, and the
    send path's own result (ops/send.Sent) when a message went."""

    ids: tuple[int, ...]
    left: int
    delivered: bool
    how: str
    text: str = ""


def send(
    app: App,
    name: str,
    *,
    timeout: float | None = None,
    limit: int = rules.MESSAGE_LIMIT,
) -> Sent:
    """Send every comment not sent yet as ONE message through the acknowledged send path
    (ops/send: never typed into a question, delivery confirmed). The comments are marked
    `sending` before it (the intent), `sent` with the revision and lines they went out on once
    it is confirmed, and back to what they were when it is not."""
    from roost.system import locks

    agent = app.store.require(name)
    # one review send of an agent at a time: two would carry the same comments twice
    with locks.hold(app.paths.locks, f"{name}.review", timeout=timeout or 120.0):
        return _send(app, agent, name, timeout, limit)


def _send(app: App, agent: Agent, name: str, timeout: float | None, limit: int) -> Sent:
    from roost.ops import send as sending

    # the revision the message is made on: the checkout's HEAD and each file as it is now
    # (read before the send: the agent may change them as soon as it has the message)
    head = gitdiff.head(_folder(app, agent))
    seen = [x for x in _seen(app, agent) if x[0].comment.state in (rules.OPEN, rules.SENDING)]
    if not seen:
        raise RoostError(f"{name} has no comments to send (roost comment {name} --list)", code=2)
    text, ids = rules.message([(s, lines) for s, lines, _ in seen], limit)
    left = len(seen) - len(ids)
    chosen = [x for x in seen if x[0].comment.id in ids]
    was = {s.comment.id: s.comment.state for s, _, _ in chosen}
    with app.store.write() as c:
        reviewdb.sending(c, ids, c.now_iso())
    try:
        result = sending.send(app, name, text, timeout=timeout)
    except BaseException:
        with app.store.write() as c:
            for state in set(was.values()):
                reviewdb.unsent(c, [i for i, s in was.items() if s == state], state)
        raise
    with app.store.write() as c:
        if not result.delivered:
            for state in set(was.values()):
                reviewdb.unsent(c, [i for i, s in was.items() if s == state], state)
        else:
            for s, lines, sha in chosen:
                reviewdb.sent(c, s.comment.id, head, sha, _where(s, lines))
    return Sent(tuple(ids), left, result.delivered, result.how, text)


def _where(s: rules.Seen, lines: Sequence[str] | None) -> rules.Anchor:
    """The lines a comment went out on: where they are now, or (outdated) the lines now at its
    old place, so a later change of them counts as addressed."""
    a = s.comment.anchor
    start = s.start if s.start is not None else a.start
    end = s.end if s.end is not None else a.end
    if lines is None:
        return rules.Anchor(start, end, a.lines)
    return rules.anchor_at(lines, start, end)
