"""Git worktrees per agent: made at spawn (`--worktree`), removed only when git says nothing
would be lost (rm, `roost worktree prune`). worktrees/rules.py decides, system/git.py asks git.

Crash safety, by order of work:
- spawn: the worktree is made (locked, its reason naming the agent) before the record is
  stored; a spawn killed in between leaves a locked worktree that the next `spawn NAME
  --worktree` adopts (same path, same branch) and that prune can remove;
- removal: the last commit is kept under refs/roost/archive/ before anything is removed; the
  branch goes last, only if merged, and only if it still points at that commit.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.ops.context import App
from roost.store import worktrees as wtdb
from roost.system import git, procs
from roost.worktrees import rules as wt

PAUSE_ENV = "ROOST_TEST_PAUSE"  # tests: stop at a named point, so a kill -9 lands there


@dataclass(frozen=True, slots=True)
class Ask:
    """What `spawn --worktree` asked for."""

    branch: str | None = None  # default: branch_prefix + the agent's name
    base: str | None = None  # default: the repository's current HEAD
    yes: bool = False  # consent to the repository's setup script as it is now (--yes)
    confirm: Callable[[str], bool] | None = None  # ask the person (a terminal), or None


def layout(app: App) -> wt.Layout:
    given = app.settings.worktree
    root = os.path.expanduser(given.root or str(app.paths.home / "worktrees"))
    return wt.Layout(os.path.abspath(root), given.branch_prefix)


def pause(app: App, point: str) -> None:
    """A test hook: with ROOST_TEST_PAUSE=point, say so in a file and wait to be killed."""
    if app.environ.get(PAUSE_ENV) != point:
        return
    (app.paths.home / f"paused-{point}").write_text(str(os.getpid()))
    while True:
        app.clock.sleep(0.05)


# ---- made at spawn ---------------------------------------------------------------------------
def prepare(app: App, agent: Agent, ask: Ask, cwd: str) -> wtdb.Row:
    """Make (or adopt) the agent's worktree; the caller stores the returned row with the agent.
    Refusals come before anything is made."""
    repo = git.repo_of(cwd)
    lay = layout(app)
    branch = git.check_branch(repo, ask.branch or wt.branch_for(agent.name, lay.branch_prefix))
    path = wt.worktree_path(lay.root, repo.top, repo.key, agent.name)
    if problem := wt.path_problem(path):
        raise RoostError(f"cannot put a worktree at {path!r}: {problem}", code=2)
    if path == repo.top or path.startswith(repo.top.rstrip("/") + "/"):
        raise RoostError(f"[worktree] root {lay.root} is inside the repository {repo.top}", code=2)
    start = git.resolve(repo, ask.base or "HEAD")
    base = ask.base if ask.base and git.branch_exists(repo, ask.base) else git.current_branch(cwd)
    reason = wt.lock_reason(agent.name, agent.id)
    script = _consented_setup(
        app, repo, ask, start if not git.branch_exists(repo, branch) else git.resolve(repo, branch)
    )
    with git.locked(repo):
        listed = git.worktrees(repo).get(os.path.realpath(path))
        if listed is not None:
            _adopt(app, repo, listed, branch, reason)
        elif os.path.lexists(path):
            raise RoostError(f"{path} exists and is no worktree of {repo.top}: move it away")
        elif git.branch_exists(repo, branch):
            if ask.base:
                raise RoostError(f"branch {branch} exists: --base is only for a new branch")
            git.add(repo, path, branch, None, reason)
        else:
            git.add(repo, path, branch, start, reason)
    copied = copy_included(repo, path)
    port = lease_ports(app, agent.id)
    pause(app, "spawn-worktree")
    if script is not None:
        run_setup(app, agent, repo, path, branch, port)
    row = wtdb.Row(
        path, agent.id, agent.name, repo.top, repo.common, branch, base, app.store.now_iso()
    )
    if copied:
        app.store.log(agent, "worktree-files", copied=copied)
    return row


INCLUDE = ".worktreeinclude"
SETUP = ".roost/worktree-setup"  # the repository's setup command, run once per new worktree


def _consented_setup(app: App, repo: git.Repo, ask: Ask, commit: str) -> bytes | None:
    """The setup script the new worktree will hold, once the person consented to this exact
    content (its SHA-256): earlier, now (--yes), or asked at the terminal. Refused before
    anything is made otherwise."""
    import hashlib

    script = git.blob(repo, commit, SETUP)
    if script is None:
        return None
    digest = hashlib.sha256(script).hexdigest()
    if wtdb.consented(app.store.conn, repo.top, digest):
        return script
    question = f"run {repo.top}/{SETUP} (sha256 {digest[:12]}) in the new worktree?"
    if not (ask.yes or (ask.confirm is not None and ask.confirm(question))):
        raise RoostError(
            f"{SETUP} of {repo.top} (sha256 {digest[:12]}) runs in every new worktree and you "
            "have not agreed to this content: read it (git show HEAD:" + SETUP + "), then "
            "spawn again with --yes",
            code=2,
        )
    with app.store.write() as c:
        wtdb.consent(c, repo.top, digest, c.now_iso())
    return script


def run_setup(app: App, agent: Agent, repo: git.Repo, path: str, branch: str, port: int) -> None:
    """Run the setup script once in the new worktree, with a time limit, its output kept in
    the agent's folder (`worktree-setup.log`). Once done, a marker in the worktree's git dir
    says so (an adopted worktree whose setup failed runs it again)."""
    gitdir = git.out(path, "rev-parse", "--absolute-git-dir")
    done = os.path.join(gitdir, "roost-setup-done")
    if os.path.exists(done):
        return
    folder = app.paths.agent_dir(agent.id)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    log = folder / "worktree-setup.log"
    script = os.path.join(path, SETUP)
    argv = [script] if os.access(script, os.X_OK) else ["sh", script]
    env = {
        **app.environ,
        "ROOST_PORT": str(port),
        "ROOST_WORKTREE": path,
        "ROOST_REPO": repo.top,
        "ROOST_BRANCH": branch,
    }
    limit = app.settings.worktree.setup_timeout
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        code = procs.run_limited(argv, path, env, out, limit)
    app.store.log(agent, "worktree-setup", exit=code, log=str(log))
    if code != 0:
        what = f"exited {code}" if code is not None else f"took over {limit:g}s (killed)"
        raise RoostError(
            f"{SETUP} {what} in {path} (its output: {log}); the worktree is kept: fix it, "
            f"then spawn {agent.name} again"
        )
    Path(done).write_text(branch)


def copy_included(repo: git.Repo, path: str) -> list[str]:
    """Copy the files the repository's `.worktreeinclude` names (gitignore syntax) that git
    ignores (`.env`, local config) into the new worktree; never a symlink, never from outside
    the repository (system/git.included), never over a file the checkout has."""
    import shutil

    include = os.path.join(repo.top, INCLUDE)
    if not os.path.isfile(include):
        return []
    copied: list[str] = []
    for rel in git.included(repo, include):
        source, target = os.path.join(repo.top, rel), os.path.join(path, rel)
        if os.path.islink(source) or not os.path.isfile(source) or os.path.lexists(target):
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
        copied.append(rel)
    return copied


def lease_ports(app: App, agent_id: str) -> int:
    """A block of ten local ports no agent holds and nothing listens on now, leased in the
    store (one roost choosing at a time), so two dev servers in two worktrees do not collide."""
    from roost.system import locks

    with locks.hold(app.paths.locks, "ports"):
        for first in wt.port_blocks(wtdb.leased_ports(app.store.conn)):
            if all(_free(port) for port in range(first, first + wt.PORT_BLOCK)):
                with app.store.write() as c:
                    wtdb.lease_port(c, agent_id, first)
                return first
    raise RoostError("no block of ten free local ports left to lease")


def _free(port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def launch_environment(app: App, agent: Agent) -> dict[str, str]:
    """ROOST_PORT for an agent that leased ports."""
    port = wtdb.port_of(app.store.conn, agent.id)
    return {"ROOST_PORT": str(port)} if port is not None else {}


def _adopt(app: App, repo: git.Repo, listed: git.Listed, branch: str, reason: str) -> None:
    """A worktree already at the agent's path: one a spawn killed before storing its agent made,
    or one `rm --keep-worktree` kept. Taken over only if roost made it and no agent has it."""
    owner = wtdb.at_path(app.store.conn, listed.path)
    if listed.locked is None or not listed.locked.startswith(wt.LOCK_PREFIX):
        raise RoostError(f"{listed.path} is a worktree roost did not make: move it away")
    if owner is not None and owner.agent_id and app.store.get_by_id(owner.agent_id):
        raise RoostError(f"{listed.path} is the worktree of agent {owner.agent_name}")
    if listed.branch != branch:
        raise RoostError(f"{listed.path} has branch {listed.branch} checked out, not {branch}")
    git.relock(repo, listed.path, reason)


def git_counts(app: App) -> dict[str, dict[str, object]]:
    """`roost ls --git`: each worktree agent's branch, path, and dirty / ahead / behind counts,
    by agent id (asked of git now: only when asked for, so plain `roost ls` stays fast)."""
    return {agent_id: _counts(row) for agent_id, row in wtdb.by_agent(app.store.conn).items()}


def agent_git_counts(app: App, agent: Agent) -> dict[str, object] | None:
    """The TUI's details panel: one worktree agent's counts (None: no worktree)."""
    row = row_of(app, agent)
    return _counts(row) if row is not None else None


def _counts(row: wtdb.Row) -> dict[str, object]:
    try:
        numbers = git.counts(git.repo_of(row.repo), row.path, row.base)
    except RoostError:
        numbers = {"dirty": None, "ahead": None, "behind": None, "against": None}
    return {"branch": row.branch, "path": row.path, **numbers}


# ---- gone, and made again -------------------------------------------------------------------
def check_present(app: App, agent: Agent) -> None:
    """A wake of a worktree agent whose folder is gone: say so and how to make it again at the
    same path (never start it elsewhere, nor as a fresh conversation: CLIs key theirs by cwd)."""
    row = row_of(app, agent)
    if row is None or os.path.isdir(row.path):
        return
    raise RoostError(
        f"{agent.name}'s worktree {row.path} is gone; make it again at the same path from "
        f"branch {row.branch} (its conversation resumes there): roost worktree recreate "
        f"{agent.name}"
    )


def recreate(app: App, agent: Agent) -> wtdb.Row:
    """Check the agent's branch out again at its recorded path (the folder must be gone)."""
    row = row_of(app, agent)
    if row is None:
        raise RoostError(f"{agent.name} has no worktree (it was not spawned with --worktree)")
    if os.path.lexists(row.path):
        raise RoostError(f"{row.path} exists: nothing to make again")
    repo = git.repo_of(row.repo)
    with git.locked(repo):
        if not git.branch_exists(repo, row.branch):
            raise RoostError(
                f"branch {row.branch} is gone from {row.repo}: nothing to check out at {row.path}"
            )
        # git keeps a locked worktree registered after its folder went: unlock it, then let
        # git forget it, so the branch may be checked out again
        git.run(repo.top, "worktree", "unlock", "--", row.path, check=False)
        git.run(repo.top, "worktree", "prune")
        git.add(repo, row.path, row.branch, None, wt.lock_reason(agent.name, agent.id))
    return row


# ---- export and import ------------------------------------------------------------------------
def verify_imported(app: App, entries: object, agents: dict[str, str]) -> list[wtdb.Row]:
    """The export's worktrees, each verified with git here: the folder exists, is a worktree of
    that repository, with that branch checked out. Any other: refused with the reason (an
    agent must never resume in another place than its conversation's)."""
    rows: list[wtdb.Row] = []
    for e in wt.imported(entries, agents):
        name, path, branch = agents[str(e["agent_id"])], str(e["path"]), str(e["branch"])
        why = _unverified(str(e["repo"]), path, branch)
        if why:
            raise RoostError(f"cannot import agent {name}: its worktree {path} {why}")
        repo = git.repo_of(path)
        base = e["base"]
        rows.append(
            wtdb.Row(
                path,
                e["agent_id"],
                name,
                repo.top,
                repo.common,
                branch,
                base,
                app.store.now_iso(),
            )
        )
    return rows


def _unverified(repo_top: str, path: str, branch: str) -> str | None:
    if not os.path.isdir(path):
        return "does not exist on this machine"
    try:
        repo = git.repo_of(path)
    except RoostError:
        return "is not in a git repository"
    if repo.top != os.path.realpath(repo_top):
        return f"belongs to {repo.top}, not {repo_top}"
    listed = git.worktrees(repo).get(os.path.realpath(path))
    if listed is None or listed.path == repo.top:
        return f"is no linked worktree of {repo.top}"
    if listed.branch != branch:
        return f"has {listed.branch or 'a detached HEAD'} checked out, not {branch}"
    return None


# ---- removed ---------------------------------------------------------------------------------
def row_of(app: App, agent: Agent) -> wtdb.Row | None:
    return wtdb.of_agent(app.store.conn, agent.id)


def keep_cmd(name: str) -> str:
    return f"remove only the agent: roost rm {name} --keep-worktree"


def check(app: App, agent: Agent, row: wtdb.Row, spare: frozenset[int]) -> None:
    """Refuse (nothing changed) when git says the worktree holds work; `spare`: the agent's own
    processes, which rm stops before it removes anything."""
    repo = git.repo_of(row.repo)
    found = wt.verdict(git.facts(repo, row.path, row.base, spare), keep_cmd(agent.name))
    if not found.removable:
        raise RoostError(wt.refusal(agent.name, row.path, found))


SETTLE = 3.0  # seconds a process may take to leave (the agent's, stopped just before)


def _settled(app: App, repo: git.Repo, row: wtdb.Row, name: str) -> tuple[wt.Facts, wt.Verdict]:
    """The facts now; when only processes keep it, asked again for a moment: the agent's own
    processes and their helpers may still be on their way out."""
    deadline = app.clock.monotonic() + SETTLE
    while True:
        facts = git.facts(repo, row.path, row.base)
        found = wt.verdict(facts, keep_cmd(name))
        only_processes = all(k.code == "process" for k in found.keep)
        if found.removable or not only_processes or app.clock.monotonic() > deadline:
            return facts, found
        app.clock.sleep(0.1)


def remove(app: App, row: wtdb.Row, name: str, agent_id: str) -> list[str]:
    """Remove the worktree if git, asked again now under the repository's lock, says nothing
    would be lost; returns what was done (for the user). Raises with every reason otherwise."""
    repo = git.repo_of(row.repo)
    with git.locked(repo):
        facts, found = _settled(app, repo, row, name)
        if not found.removable:
            raise RoostError(wt.refusal(name, row.path, found))
        done: list[str] = []
        if facts.exists and facts.head:
            ref = wt.archive_ref(name, agent_id)
            git.keep_reachable(repo, ref, facts.head)
            done.append(f"last commit kept as {ref}")
            pause(app, "remove-worktree")
            git.remove(repo, row.path, wt.lock_reason(name, agent_id))
            done.append(f"removed worktree {row.path}")
        elif not facts.exists:  # someone deleted the folder: git forgets it (once unlocked)
            git.run(repo.top, "worktree", "unlock", "--", row.path, check=False)
            git.run(repo.top, "worktree", "prune")
        # A branch goes only when merged: one pushed but not merged stays (its work is someone's
        # review to come, and the local branch costs nothing).
        mine = facts.head is not None and facts.branch == row.branch
        if facts.merged and mine and git.delete_branch(repo, row.branch, str(facts.head)):
            done.append(f"deleted branch {row.branch} (merged)")
        with app.store.write() as c:
            wtdb.forget(c, row.path)
        return done


# ---- prune -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Pruned:
    path: str
    removed: bool
    why: str  # what was done, or why it stays


def prune(app: App, cwd: str, dry_run: bool) -> list[Pruned]:
    """Every worktree roost made (git's list, by lock reason) that no agent uses any more: in
    the repository of `cwd` and every repository roost recorded one in."""
    repos: dict[str, git.Repo] = {}
    for top in [cwd, *wtdb.repos(app.store.conn)]:
        try:
            repo = git.repo_of(top)
        except RoostError:
            continue
        repos.setdefault(repo.common, repo)
    results: list[Pruned] = []
    for repo in repos.values():
        for listed in git.worktrees(repo).values():
            agent_id = wt.agent_of_reason(listed.locked or "")
            if agent_id is None:
                continue  # not roost's
            agent = app.store.get_by_id(agent_id)
            if agent is not None:
                results.append(Pruned(listed.path, False, f"agent {agent.name} works in it"))
                continue
            results.append(_prune_one(app, repo, listed, agent_id, dry_run))
    return results


def _prune_one(app: App, repo: git.Repo, listed: git.Listed, agent_id: str, dry: bool) -> Pruned:
    row = wtdb.at_path(app.store.conn, listed.path)
    name = row.agent_name if row else Path(listed.path).name
    base = row.base if row else None
    what = row or wtdb.Row(listed.path, None, name, repo.top, repo.common, "", base, "")
    if listed.branch and not row:
        what = wtdb.Row(listed.path, None, name, repo.top, repo.common, listed.branch, base, "")
    if dry:
        found = wt.verdict(git.facts(repo, listed.path, base), "keep it")
        if found.removable:
            return Pruned(listed.path, True, "would be removed: git says nothing would be lost")
        return Pruned(listed.path, False, "; ".join(k.why for k in found.keep))
    try:
        done = remove(app, what, name, agent_id)
    except RoostError as exc:
        return Pruned(listed.path, False, str(exc))
    return Pruned(listed.path, True, "; ".join(done))
