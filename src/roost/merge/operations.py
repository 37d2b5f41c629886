"""Take an agent's work into a branch, tell its siblings that their base moved, and mark the
agents whose changes collide (issue 38 points 3 and 4). merge/rules.py decides, system/gitmerge.py
asks git, store/merge.py keeps the rows. The typed API the CLI, the TUI, the web and MCP call:

- `plan(app, name, mode, files, into)`: every check, and the new commit made as objects only
  (nothing moves); a refusal is a RoostError with its one line;
- `apply(app, plan)`: the merge recorded (intent first), the one step that moves the branch, then
  each sibling's new base recorded and its notice queued, then delivered;
- `merge(app, name, ...)`: both, under the agent's and the repository's locks;
- `moved_base(app, agent)`: the base an agent's branch is to be compared with now (roost diff
  --base), `conflicts(app)`: the marked pairs, `look(app, agent)`: judge one agent's pairs now;
- `ON_STATUS`: the status pipeline's reaction that judges an agent's pairs when its turn ends.

Nothing is ever lost: the agent's branch and worktree are never touched (a rebase replays its
commits in a private detached worktree), and a merge that cannot go cleanly moves nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from roost.core import notify as notify_rule
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.present import few
from roost.core.status import Status
from roost.merge import rules
from roost.ops.context import App, OnStatus
from roost.store import events
from roost.store import merge as rows
from roost.store import orchestration as queue
from roost.store import worktrees as wtdb
from roost.store.db import Connection

# git (system/git.py, system/gitmerge.py) is imported where it is called: ops/root.py imports this
# module for its reaction, and every hook's roost would load psutil and subprocess with it.

BASE_MOVED = notify_rule.BASE_MOVED  # the notice's kind in the notifications queue


# ---- take the work -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Plan:
    """A merge checked and made as objects: what `apply` will move, and to what."""

    agent_id: str
    agent: str
    repo: str  # the main checkout's folder
    branch: str  # the agent's
    target: str
    into_main: bool  # the target is the branch of `checkout` (its files follow)
    mode: str  # rules.MODES
    source: str  # the agent's commit taken
    before: str  # the target's commit now
    result: str  # the commit the target moves to
    commits: int  # the agent's commits the target lacks
    files: tuple[str, ...] = ()  # --files
    uncommitted: int = 0  # files changed in the agent's worktree and not committed: not taken
    checkout: str = ""  # the folder whose files follow: the main checkout, or into_checkout's

    @property
    def note(self) -> str | None:
        return rules.uncommitted_note(self.agent, self.uncommitted)


@dataclass(frozen=True, slots=True)
class Told:
    """A sibling agent whose base moved: its notice delivered now, or held (and why)."""

    name: str
    delivered: bool


@dataclass(frozen=True, slots=True)
class Done:
    plan: Plan
    merge_id: int
    told: tuple[Told, ...] = field(default=())

    def said(self) -> list[str]:
        """What a person is told of it (the CLI's lines, the web's and the TUI's receipt): the
        merge, the uncommitted files left, the siblings told or queued that the base moved."""
        p = self.plan
        lines = [
            rules.merged_line(
                p.agent, p.branch, p.target, p.mode, p.commits, len(p.files), p.result, p.before
            )
        ]
        if p.note:
            lines.append(f"note: {p.note}")
        sent = [t.name for t in self.told if t.delivered]
        held = [t.name for t in self.told if not t.delivered]
        if sent:
            lines.append(f"told {', '.join(sent)} that {p.target} moved")
        if held:
            lines.append(
                f"queued for {', '.join(held)} that {p.target} moved "
                "(delivered once each is at its input)"
            )
        return lines


def plan(
    app: App,
    name: str,
    mode: str = "merge",
    files: Sequence[str] = (),
    into: str | None = None,
    into_checkout: str | None = None,
    hunks: Sequence[rules.Pick] = (),
) -> Plan:
    """Every check of a merge of agent NAME's committed work, and its result made (objects
    only): a RoostError with the one line of the first refusal otherwise. `into_checkout`: a
    worktree of the same repository (a parent agent's own) whose branch is the target and
    whose files follow, with the main checkout's refusals (MCP's merge_child). Mode "hunks":
    the `hunks` picked of the change `roost diff NAME` shows (committed or not, untracked
    files too), each refused unless it is the hunk that was shown (its fingerprint), their
    patch cut from git's own and applied by `git apply` onto the target's commit."""
    from roost.system import git, gitmerge

    if mode not in rules.MODES:
        raise RoostError(f"unknown merge mode {mode!r} (one of {', '.join(rules.MODES)})", code=2)
    if (mode == "files") != bool(files):
        raise RoostError("--files needs at least one path", code=2)
    if (mode == "hunks") != bool(hunks):
        raise RoostError("--hunks needs at least one hunk (FILE:N)", code=2)
    for p in files:
        if not p or p.startswith("-") or any(ord(ch) < 32 for ch in p):
            raise RoostError(f"--files: {p!r} is no path in the repository", code=2)
    agent = app.store.require(name)
    row = wtdb.of_agent(app.store.conn, agent.id)
    if row is None:
        raise RoostError(rules.refusal(rules.Facts(name, has_worktree=False)) or "", code=1)
    facts = rules.Facts(name, working=agent.status == Status.WORKING, branch=row.branch, mode=mode)
    if facts.working:  # before git is asked anything
        raise RoostError(rules.refusal(facts) or "")
    repo = git.repo_of(row.repo)
    source = gitmerge.tip(repo, row.branch)
    if source is None:
        raise RoostError(rules.refusal(_with(facts, branch_exists=False)) or "")
    checkout = repo.top if into_checkout is None else into_checkout
    if into_checkout is not None:
        if os.path.realpath(into_checkout) not in {
            os.path.realpath(p) for p in gitmerge.worktree_paths(repo)
        }:
            raise RoostError(f"{into_checkout} is no worktree of {repo.top}")
        facts = _with(facts, checkout=f"the worktree {into_checkout}")
    main = gitmerge.main_branch(repo, checkout)
    target = git.check_branch(repo, into) if into else main
    facts = _with(facts, target=target)
    before = gitmerge.tip(repo, target) if target else None
    if target is None or before is None:
        raise RoostError(rules.refusal(_with(facts, target_exists=False)) or "")
    into_main = target == main
    elsewhere = [p for p in gitmerge.checked_out(repo, target) if not into_main]
    facts = _with(
        facts,
        into_main=into_main,
        checked_out_elsewhere=elsewhere[0] if elsewhere else None,
        main_busy=gitmerge.in_progress(checkout) if into_main else None,
        main_dirty=gitmerge.dirty(checkout) if into_main else (),
        ahead=gitmerge.count(repo, source, f"^{before}"),
        merges_in_range=gitmerge.count(repo, source, f"^{before}", merges=True)
        if mode == "rebase"
        else 0,
    )
    if mode == "files":
        tree, missing = gitmerge.files_tree(repo, before, source, files)
        facts = _with(facts, missing_files=missing)
    elif mode == "hunks":
        tree = ""
    else:
        tree = ""
        if facts.ahead:
            facts = _with(facts, conflicts=gitmerge.merge_tree(repo, before, source).conflicts)
    if (said := rules.refusal(facts)) is not None:
        raise RoostError(said)
    if mode == "hunks":
        patch, files = _hunks_patch(name, row, hunks)
        made, err = gitmerge.patched_tree(repo, before, patch)
        if made is None:
            named = rules.apply_failed(err, sorted({p.path for p in hunks}))
            where = facts.checkout if into_main else f"branch {target}"
            raise RoostError(rules.hunks_refusal(row.branch, target, named, where))
        tree = made
    message = rules.message(mode, name, row.branch, target, facts.ahead, files)
    if mode in ("files", "hunks"):
        if tree == gitmerge.tree_of(repo, before):
            raise RoostError(
                f"nothing to take: {few(list(files), rules.MAX_NAMED)} at {row.branch} "
                f"are as they are in {target}"
            )
        result = gitmerge.commit_tree(repo, tree, [before], message)
    elif mode == "rebase":
        replayed, conflicts = gitmerge.replay(repo, before, source, before)
        if replayed is None:
            raise RoostError(rules.refusal(_with(facts, conflicts=conflicts)) or "")
        result = replayed
    else:
        merged = gitmerge.merge_tree(repo, before, source)
        parents = [before, source] if mode == "merge" else [before]
        assert merged.tree is not None
        result = gitmerge.commit_tree(repo, merged.tree, parents, message)
    return Plan(
        agent_id=agent.id,
        agent=name,
        repo=repo.top,
        branch=row.branch,
        target=target,
        into_main=into_main,
        mode=mode,
        source=source,
        before=before,
        result=result,
        commits=facts.ahead,
        files=tuple(files),
        uncommitted=0 if mode == "hunks" else gitmerge.uncommitted(row.path),
        checkout=checkout,
    )


def _hunks_patch(name: str, row: wtdb.Row, picks: Sequence[rules.Pick]) -> tuple[bytes, list[str]]:
    """The patch of the hunks picked of agent NAME's change (its worktree against the commit
    its branch started from, as `roost diff` shows it), cut from git's own patch of each file
    (review/rules.split_patch), and their labels (FILE:N). Refused in one line: a file not in
    the diff, a binary one, a hunk it does not have, a hunk whose fingerprint is not the one
    shown (the diff changed since)."""
    from roost.review import rules as diffs
    from roost.system import gitdiff

    top, _, fork = gitdiff.worktree_start(row.path, row.branch, row.base)
    if top is None:
        raise RoostError(f"{name}'s worktree is gone: roost worktree recreate {name}")
    if fork is None:
        raise RoostError(f"roost cannot tell the commit {name}'s branch {row.branch} started from")
    tracked, extra, new = gitdiff.summary(top, fork)
    changes = {f.path: f for f in diffs.parse_summary(tracked)}
    for added in diffs.parse_summary(extra, frozenset(new)):
        changes.setdefault(added.path, added)
    by_file: dict[str, list[rules.Pick]] = {}
    for p in picks:
        by_file.setdefault(p.path, []).append(p)
    parts: list[bytes] = []
    for path, chosen in by_file.items():
        f = changes.get(path) or changes.get(os.path.normpath(path))
        if f is None:
            raise RoostError(rules.pick_refusal(name, chosen[0], None, False, None) or "")
        if f.binary:
            raise RoostError(rules.pick_refusal(name, chosen[0], 1, True, None) or "")
        if f.status == diffs.UNTRACKED:
            with gitdiff.untracked_index(top, fork, [f.path]) as env:
                raw = gitdiff.patch_bytes(top, fork, env, [f.path])
        else:
            both = [f.path] if f.old_path is None else [f.path, f.old_path]
            raw = gitdiff.patch_bytes(top, fork, {}, both)
        sections = diffs.split_patch(raw)
        if len(sections) != 1:
            raise RoostError(
                f"{diffs.shown_path(f.path)} changed in a way roost cannot take hunk by hunk "
                f"(roost merge {name} --files {diffs.shown_path(f.path)})"
            )
        section = sections[0]
        for p in chosen:
            shown = section.hunks[p.number - 1][1] if p.number <= len(section.hunks) else None
            why = rules.pick_refusal(name, p, len(section.hunks), section.binary, shown)
            if why is not None:
                raise RoostError(why)
        parts.append(diffs.pick_patch(section, [p.number - 1 for p in chosen]))
    return b"".join(parts), [p.label for p in picks]


def _with(f: rules.Facts, **changes: object) -> rules.Facts:
    from dataclasses import replace

    return replace(f, **changes)  # type: ignore[arg-type]


def apply(app: App, p: Plan, deliver: bool = True) -> Done:
    """Move the target to the plan's result: recorded first (a `merging` event and a `moving`
    row), then the one step (a fast-forward of the clean main checkout, or a compare-and-set of
    a branch checked out nowhere), then recorded done; each sibling's new base and notice are
    stored with it, and (`deliver`) the notices delivered to those at their input."""
    from roost.system import git, gitmerge

    agent = app.store.get_by_id(p.agent_id)
    if agent is None:
        raise RoostError(f"agent {p.agent} is gone")
    if agent.status == Status.WORKING:
        raise RoostError(rules.refusal(rules.Facts(p.agent, working=True)) or "")
    repo = git.repo_of(p.repo)
    checkout = p.checkout or repo.top
    if p.into_main and (
        gitmerge.main_branch(repo, checkout) != p.target or gitmerge.tip(repo, p.target) != p.before
    ):
        where = "the main checkout" if checkout == repo.top else f"the worktree {checkout}"
        raise RoostError(f"{where} moved since the merge was planned: nothing changed")
    at = app.store.now_iso()
    with app.store.write() as c:
        merge_id = rows.begin(
            c,
            p.agent_id,
            p.agent,
            p.repo,
            p.branch,
            p.target,
            "files" if p.mode == "hunks" else p.mode,  # the row's CHECK admits the first four
            p.source,
            p.before,
            p.result,
            at,
        )
        detail: dict[str, object] = {
            "target": p.target,
            "mode": p.mode,
            "source": p.source,
            "result": p.result,
        }
        if p.mode == "hunks":
            detail["hunks"] = list(p.files)
        events.append(c, agent.id, agent.name, at, "merging", detail)
    try:
        if p.into_main:
            gitmerge.fast_forward(repo, p.result, checkout)
        else:
            gitmerge.move_branch(repo, p.target, p.result, p.before)
    except RoostError as exc:
        with app.store.write() as c:
            rows.finish(c, merge_id, c.now_iso(), str(exc))
            events.append(c, agent.id, agent.name, c.now_iso(), "merge-failed", {"error": str(exc)})
        raise
    _pause(app, "merge-moved")
    siblings = _finished(app, p, merge_id, agent.name, detail)
    told = tuple(Told(s.name, _deliver(app, s.id)) for s in siblings) if deliver else ()
    return Done(p, merge_id, told)


def _pause(app: App, point: str) -> None:
    from roost.worktrees.operations import pause

    pause(app, point)  # tests: stop here (ROOST_TEST_PAUSE=point) to be killed


def _finished(
    app: App, p: Plan, merge_id: int, name: str, detail: Mapping[str, object]
) -> list[Agent]:
    """The merge moved its branch: recorded done, with each sibling's new base and its notice
    (queued: delivered after), in one transaction. Returns the siblings."""
    siblings = _siblings(app, p)
    with app.store.write() as c:
        now = c.now_iso()
        rows.finish(c, merge_id, now)
        told = {"siblings": [s.name for s in siblings]}
        events.append(c, p.agent_id, name, now, "merged", {**detail, **told})
        text = rules.base_moved(p.target, p.result, p.agent, p.repo)
        for s in siblings:
            rows.move_base(c, s.id, p.repo, p.target, p.result, merge_id, p.agent, now)
            queue.enqueue(c, s.id, p.agent_id, name, BASE_MOVED, text, now)
            queued = {"notice": BASE_MOVED, "by": p.agent}
            events.append(c, s.id, s.name, now, "notice-queued", queued)
    return siblings


def settle(app: App, repo_top: str) -> list[rows.Merge]:
    """Merges of the repository a killed roost left `moving` (recorded, then killed around the
    step that moves the branch): done when the target holds their result (then their siblings
    are told, as they would have been), failed otherwise. Run before each merge."""
    from roost.system import git, gitmerge

    settled: list[rows.Merge] = []
    for m in rows.merges(app.store.conn):
        if m.state != "moving" or m.repo != repo_top:
            continue
        repo = git.repo_of(m.repo)
        tip = gitmerge.tip(repo, m.target)
        held = tip is not None and (
            tip == m.result or gitmerge.merge_base(repo, tip, m.result) == m.result
        )
        if held:
            p = Plan(
                m.agent_id,
                m.agent_name,
                m.repo,
                m.branch,
                m.target,
                False,
                m.mode,
                m.source,
                m.before,
                m.result,
                0,
            )
            detail = {"target": m.target, "mode": m.mode, "source": m.source, "result": m.result}
            _finished(app, p, m.id, m.agent_name, detail)
        else:
            with app.store.write() as c:
                rows.finish(c, m.id, c.now_iso(), "interrupted before the branch moved")
        settled.append(m)
    return settled


def _siblings(app: App, p: Plan) -> list[Agent]:
    """The other agents whose worktree branched from the target in this repository."""
    found: list[Agent] = []
    for agent_id, row in wtdb.by_agent(app.store.conn).items():
        if agent_id == p.agent_id or row.repo != p.repo or row.base != p.target:
            continue
        if (a := app.store.get_by_id(agent_id)) is not None:
            found.append(a)
    return found


def _deliver(app: App, agent_id: str) -> bool:
    """The queued notice through the acknowledged send (ops/notify): held while the agent
    works or asks its person something, or sleeps (a base-moved notice wakes nobody)."""
    from roost.ops import notify

    try:
        return notify.deliver_to(app, agent_id)
    except RoostError:
        return False


def merge(
    app: App,
    name: str,
    mode: str = "merge",
    files: Sequence[str] = (),
    into: str | None = None,
    confirm: Callable[[Plan], bool] | None = None,
    into_checkout: str | None = None,
    hunks: Sequence[rules.Pick] = (),
) -> Done:
    """`roost merge`: plan, ask (`confirm`: None takes it as agreed), apply; under the
    agent's lock and the repository's (one merge or worktree change of it at a time)."""
    from roost.system import git, locks

    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        row = wtdb.of_agent(app.store.conn, agent.id)
        if row is None:
            raise RoostError(rules.refusal(rules.Facts(name, has_worktree=False)) or "")
        with git.locked(git.repo_of(row.repo)):
            settle(app, row.repo)
            p = plan(app, name, mode, files, into, into_checkout, hunks)
            if confirm is not None and not confirm(p):
                raise RoostError("not merged: nothing was changed")
            done = apply(app, p, deliver=False)
    told = tuple(Told(a, _deliver(app, i)) for a, i in _told_ids(app, done))
    return Done(done.plan, done.merge_id, told)


def _told_ids(app: App, done: Done) -> list[tuple[str, str]]:
    return [(a.name, a.id) for a in _siblings(app, done.plan)]


def moved_base(app: App, agent: Agent) -> rows.BaseMove | None:
    """Where the branch agent's worktree was made from is now, when a merge of a sibling's work
    moved it (roost diff --base compares with its commit); None: it did not move."""
    return rows.base_move(app.store.conn, agent.id)


def history(app: App, agent: Agent | None = None) -> list[rows.Merge]:
    return rows.merges(app.store.conn, agent.id if agent is not None else None)


# ---- collisions ------------------------------------------------------------------------------
# The watch runs in the status pipeline (before its transaction): bounded, so a huge diff or a
# slow disk delays a status by seconds at most, never by git's own minute.
WATCH_TIMEOUT = 10.0  # seconds one git call of a look may take (past it: that peer is skipped)
MAX_PEERS = 16  # worktree agents of one repository a look compares with


@dataclass(frozen=True, slots=True)
class Look:
    """One agent's pairs judged: with whom it was compared, and which collide."""

    agent_id: str
    repo: str
    others: tuple[str, ...]
    found: tuple[rules.Collision, ...]


def look(app: App, agent_id: str, worktrees: Mapping[str, wtdb.Row] | None = None) -> Look | None:
    """Judge agent `agent_id`'s pairs now (asks git; no lock held): its changed lines against
    each other worktree agent's of its repository (`git diff -U0` from where each branched),
    and a merge of its branch with each of theirs (`git merge-tree`). None: no worktree."""
    from roost.system import git, gitmerge

    found_rows = worktrees if worktrees is not None else wtdb.by_agent(app.store.conn)
    mine = found_rows.get(agent_id)
    if mine is None:
        return None
    peers = {i: r for i, r in found_rows.items() if r.repo == mine.repo}
    if len(peers) > MAX_PEERS:  # the most recently made ones, and always its own
        newest = sorted(peers, key=lambda i: peers[i].created_at)[-MAX_PEERS:]
        peers = {i: peers[i] for i in {*newest, agent_id}}
    if len(peers) < 2:
        return Look(agent_id, mine.repo, (), ())
    try:
        repo = git.repo_of(mine.repo)
        main = gitmerge.main_branch(repo)
    except RoostError:
        return Look(agent_id, mine.repo, (), ())
    ranges: dict[str, rules.Ranges] = {}
    tips: dict[str, str] = {}
    for i, r in peers.items():
        try:
            tip = gitmerge.tip(repo, r.branch)
            base_branch = r.base or main
            base = gitmerge.tip(repo, base_branch) if base_branch else None
            fork = gitmerge.merge_base(repo, base, tip) if base and tip else None
            if tip:
                tips[i] = tip
            if fork:
                ranges[i] = gitmerge.changed_ranges(r.path, fork, WATCH_TIMEOUT)
        except RoostError:
            continue
    conflicts: dict[str, tuple[str, ...]] = {}
    for i in peers:
        if i != agent_id and agent_id in tips and i in tips:
            try:
                merged = gitmerge.merge_tree(repo, tips[agent_id], tips[i], WATCH_TIMEOUT)
                conflicts[i] = merged.conflicts
            except RoostError:
                continue
    others = tuple(sorted(i for i in peers if i != agent_id and (i in ranges or i in conflicts)))
    if agent_id not in ranges and agent_id not in tips:
        others = ()
    found = rules.collisions(agent_id, ranges, conflicts)
    return Look(agent_id, mine.repo, others, tuple(found))


def store_look(app: App, c: Connection, agent: Agent, seen: Look, at: str) -> list[rules.Collision]:
    """Keep a look's marks; log each pair never alerted yet once (`collision`, which the
    alerts decide on: alerts/rules.py). Returns those new pairs."""
    fresh = rows.judged(c, seen.agent_id, seen.repo, seen.found, seen.others, at)
    if not fresh:
        return fresh
    names = dict(rows.names(c, {x for f in fresh for x in (f.a, f.b)}))
    for f in fresh:
        other = f.b if f.a == agent.id else f.a
        detail = {
            "other": names.get(other, other),
            "other_id": other,
            "files": list(f.files),
            "text": rules.describe(f, names),
        }
        events.append(c, agent.id, agent.name, at, "collision", detail)
    return fresh


def check(app: App, agent: Agent) -> list[rules.Collision]:
    """Judge one agent's pairs now and keep the marks (`roost conflicts --now`, a test)."""
    seen = look(app, agent.id)
    if seen is None:
        return []
    with app.store.write() as c:
        store_look(app, c, agent, seen, c.now_iso())
    return list(seen.found)


def conflicts(app: App, active: bool = True) -> list[rows.Pair]:
    """The pairs marked as colliding (`roost conflicts`; all ever marked with active=False)."""
    return rows.pairs(app.store.conn, active)


_TURN_ENDS = (Status.IDLE, Status.WAITING)


def _read(app: App, changed: Sequence[Observation]) -> list[Look]:
    """Before the transaction: the pairs of each worktree agent whose turn just ended (working
    to idle or waiting). No turn ended, or no worktree agent's: no git call at all."""
    ended = [o for o in changed if o.agent.status == Status.WORKING and o.status in _TURN_ENDS]
    if not ended:
        return []
    worktrees = wtdb.by_agent(app.store.conn)
    found: list[Look] = []
    for o in ended:
        if o.agent.id not in worktrees:
            continue
        try:
            seen = look(app, o.agent.id, worktrees)
        except (RoostError, OSError, ValueError):
            continue  # the status pipeline goes on; the next turn's end judges again
        if seen is not None:
            found.append(seen)
    return found


def _recorded(
    app: App, c: Connection, stored: Sequence[Observation], at: str, read: list[Look] | None
) -> None:
    """In the transaction that stores the changes: the marks of the turns this writer stored."""
    by_id = {o.agent.id: o.agent for o in stored}
    for seen in read or []:
        if seen.agent_id in by_id:
            store_look(app, c, by_id[seen.agent_id], seen, at)


ON_STATUS = OnStatus("collisions", _recorded, read=_read)


# ---- compare (point 5) ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Checked:
    """The configured check's run in one worktree (`[review] check`)."""

    command: str
    exit_code: int | None  # None: killed at its time limit
    seconds: float
    log: str  # its whole output, in the agent's folder
    tail: str  # its last lines, control characters escaped
    words: str


@dataclass(frozen=True, slots=True)
class Side:
    """One agent of `roost compare`: its branch's work since it branched, its usage, and its
    check when one ran."""

    agent: str
    branch: str
    path: str
    changed: rules.Numstat
    commits: int
    uncommitted: int
    usage: Mapping[str, object]
    check: Checked | None = None


TAIL = 2000  # characters of a check's output kept in the comparison


def compare(app: App, names: Sequence[str], run_check: bool = False) -> list[Side]:
    """`roost compare`: each agent's work since its branch left its base (tracked files,
    committed or not: `git diff --numstat`), its commits, its uncommitted files, its usage (the
    usage room's figures) and, with `run_check`, the configured check run in its worktree
    (an argv by shlex.split, never a shell, with its time limit)."""
    from roost.system import git, gitmerge
    from roost.usage import operations as usage

    if len(names) < 2:
        raise RoostError("compare needs at least two agents", code=2)
    command = app.settings.review.check
    if run_check and not command:
        raise RoostError('--check: no check configured (config.toml [review] check = "pytest -q")')
    agents = [app.store.require(n) for n in names]
    worktrees = wtdb.by_agent(app.store.conn)
    for a in agents:
        if a.id not in worktrees:
            raise RoostError(rules.refusal(rules.Facts(a.name, has_worktree=False)) or "")
    figures = usage.figures(app, [a.id for a in agents])
    sides: list[Side] = []
    for a in agents:
        row = worktrees[a.id]
        repo = git.repo_of(row.repo)
        tip = gitmerge.tip(repo, row.branch)
        base_branch = row.base or gitmerge.main_branch(repo)
        base = gitmerge.tip(repo, base_branch) if base_branch else None
        fork = gitmerge.merge_base(repo, base, tip) if base and tip else None
        changed = gitmerge.numstat(row.path, fork) if fork else rules.Numstat()
        commits = gitmerge.count(repo, tip, f"^{fork}") if fork and tip else 0
        sides.append(
            Side(
                a.name,
                row.branch,
                row.path,
                changed,
                commits,
                gitmerge.uncommitted(row.path),
                figures.get(a.id, {}),
            )
        )
    if run_check and command:
        from dataclasses import replace

        sides = [
            replace(s, check=_check(app, a, s.path, command))
            for a, s in zip(agents, sides, strict=True)
        ]
    return sides


def _check(app: App, agent: Agent, path: str, command: str) -> Checked:
    """Run the check in the worktree: its words split as a shell would (shlex), no shell;
    killed (its whole process group) past [review] check_timeout; its output in the agent's
    folder (review-check.log), its tail read bounded and shown escaped."""
    import os
    import shlex

    from roost.core.present import visible
    from roost.system import procs, untrusted

    argv = shlex.split(command)
    folder = app.paths.agent_dir(agent.id)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    log = folder / "review-check.log"
    limit = app.settings.review.check_timeout
    started = app.clock.monotonic()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        try:
            code = procs.run_limited(argv, path, dict(app.environ), out, limit)
        except OSError as exc:  # no such program
            out.write(f"roost: cannot run {argv[0]!r}: {exc.strerror}\n")
            code = 127
    seconds = app.clock.monotonic() - started
    text = untrusted.tail(log, TAIL * 4).decode("utf-8", "replace")[-TAIL:]
    shown = "\n".join(visible(line) for line in text.splitlines())
    words = rules.check_words(code, seconds, limit)
    return Checked(command, code, seconds, str(log), shown, words)
