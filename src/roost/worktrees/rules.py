"""Git worktrees per agent, the pure part: where a worktree lives, what its branch is called,
and whether removing it could lose anything, decided from facts git reported (system/git.py
gathers them fresh, worktrees/operations.py acts on the answer).

Nothing here trusts roost's own records about a worktree's state: a registry cannot know what
an agent (or a person) did inside since; only git can.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from roost.core.errors import RoostError
from roost.core.present import few
from roost.core.settings import DEFAULT_PREFIX

LOCK_PREFIX = "roost:"  # every lock reason roost writes starts with it (prune finds them by it)
ARCHIVE = "refs/roost/archive"  # the last commit of every removed worktree stays reachable here


@dataclass(frozen=True, slots=True)
class Layout:
    """config.toml's `[worktree]`: where worktrees live and how their branches are named."""

    root: str  # an absolute folder; one subfolder per repository, one per agent below it
    branch_prefix: str = DEFAULT_PREFIX


def branch_for(name: str, prefix: str) -> str:
    """The default branch of agent NAME.

    >>> branch_for("api-fix", "roost/")
    'roost/api-fix'
    """
    return f"{prefix}{name}"


def worktree_path(root: str, repo_top: str, repo_key: str, name: str) -> str:
    """The agent's worktree folder: stable for its whole life (CLIs key conversations by cwd),
    outside the repository, unique per repository (its key) and per agent.

    >>> worktree_path("/w", "/src/my app", "1a2b3c4d", "api")
    '/w/my app-1a2b3c4d/api'
    """
    return posixpath.join(root, f"{posixpath.basename(repo_top.rstrip('/'))}-{repo_key}", name)


def lock_reason(name: str, agent_id: str) -> str:
    """What `git worktree list` shows for a worktree roost made (it names roost and the agent).

    >>> lock_reason("api", "0f1e")
    'roost: agent api (0f1e) works here; remove it with: roost rm api'
    """
    return f"{LOCK_PREFIX} agent {name} ({agent_id}) works here; remove it with: roost rm {name}"


def agent_of_reason(reason: str) -> str | None:
    """The agent id a roost lock reason names, or None for a lock roost did not write.

    >>> agent_of_reason(lock_reason("api", "0f1e"))
    '0f1e'
    >>> agent_of_reason("someone else's lock") is None
    True
    """
    if not reason.startswith(LOCK_PREFIX) or "(" not in reason or ")" not in reason:
        return None
    return reason.split("(", 1)[1].split(")", 1)[0] or None


def path_problem(path: str) -> str | None:
    """Why a worktree path cannot be used, or None. Spaces, quotes and `#(...)` are fine (every
    call passes it as one argv word); a newline or other control character is not: git's
    `worktree list --porcelain` is line-based, and tmux would show it garbled.

    >>> path_problem("/w/my app/#(x)") is None
    True
    >>> path_problem("/w/a\\nb")
    'it holds a control character (a newline, a tab...)'
    >>> path_problem("w/a")
    'it is not an absolute path'
    """
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return "it holds a control character (a newline, a tab...)"
    if not path.startswith("/"):
        return "it is not an absolute path"
    return None


def check_branch_word(branch: str) -> str:
    """A branch or ref a person typed, refused when it could be read as an option (git then
    checks the rest with `check-ref-format`).

    >>> check_branch_word("-b")
    Traceback (most recent call last):
    ...
    roost.core.errors.RoostError: invalid branch '-b': a branch may not start with '-'
    """
    if not branch or branch.startswith("-"):
        raise RoostError(f"invalid branch {branch!r}: a branch may not start with '-'", code=2)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in branch):
        raise RoostError(f"invalid branch {branch!r}: it holds a control character", code=2)
    return branch


# ---- ports -------------------------------------------------------------------------------------
PORT_BLOCK = 10  # ROOST_PORT and the next 9
PORTS_FROM, PORTS_TO = 20000, 29990


def port_blocks(taken: set[int]) -> list[int]:
    """The first ports of the free blocks, lowest first (a block roost leased is not free).

    >>> port_blocks({20000, 20020})[:3]
    [20010, 20030, 20040]
    """
    return [p for p in range(PORTS_FROM, PORTS_TO + 1, PORT_BLOCK) if p not in taken]


# ---- may it go? ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Facts:
    """What git (and the process table) said about one worktree, just now."""

    path: str
    branch: str | None  # None: a detached HEAD
    exists: bool = True
    changed: tuple[str, ...] = ()  # tracked files with changes (staged or not)
    untracked: tuple[str, ...] = ()
    unpushed: int = 0  # commits on no remote
    merged: bool = False  # the branch's work is in its upstream (by ancestry or by tree)
    stashes: tuple[str, ...] = ()  # stash entries made on this branch
    in_progress: str | None = None  # "merge", "rebase", "cherry-pick", "revert", "bisect"
    processes: tuple[tuple[int, str], ...] = ()  # (pid, name) with their cwd inside
    head: str | None = None  # the commit checked out


@dataclass(frozen=True, slots=True)
class Keep:
    """One reason to keep a worktree: a short code, what is at stake, what the user can do."""

    code: str
    why: str
    todo: str


@dataclass(frozen=True, slots=True)
class Verdict:
    keep: tuple[Keep, ...] = field(default=())

    @property
    def removable(self) -> bool:
        return not self.keep


def verdict(f: Facts, keep_cmd: str) -> Verdict:
    """Every reason git gives to keep the worktree. `keep_cmd` is the command that removes the
    agent but keeps its worktree (said in each todo).

    >>> verdict(Facts("/w/a", "roost/a", unpushed=0), "x").removable
    True
    >>> [k.code for k in verdict(Facts("/w/a", "b", changed=("f",), untracked=("g",)), "x").keep]
    ['dirty', 'untracked']
    >>> verdict(Facts("/w/a", "b", unpushed=2, merged=True), "x").removable
    True
    """
    p = f.path
    keep: list[Keep] = []
    if not f.exists:
        return Verdict()
    if f.changed:
        keep.append(
            Keep(
                "dirty",
                f"uncommitted changes in {few(f.changed, 3)}",
                f"commit or discard them (git -C '{p}' status), or {keep_cmd}",
            )
        )
    if f.untracked:
        keep.append(
            Keep(
                "untracked",
                f"untracked files {few(f.untracked, 3)}",
                f"commit, ignore or delete them, or {keep_cmd}",
            )
        )
    if f.unpushed and not f.merged:
        keep.append(
            Keep(
                "unpushed",
                f"{f.unpushed} commit{'s' if f.unpushed != 1 else ''} of {f.branch or 'HEAD'} "
                "on no remote and not merged upstream",
                f"push the branch or merge it, or {keep_cmd}",
            )
        )
    if f.stashes:
        keep.append(
            Keep(
                "stash",
                f"stash entries made on {f.branch}: {few(f.stashes, 2)}",
                f"apply or drop them (git stash list), or {keep_cmd}",
            )
        )
    if f.in_progress:
        keep.append(
            Keep(
                f.in_progress,
                f"a {f.in_progress} is in progress",
                f"finish or abort it (git -C '{p}' {f.in_progress} --abort), or {keep_cmd}",
            )
        )
    if f.processes:
        shown = tuple(f"{name} (pid {pid})" for pid, name in f.processes)
        keep.append(
            Keep(
                "process",
                f"processes work inside it: {few(shown, 3)}",
                f"stop them first, or {keep_cmd}",
            )
        )
    return Verdict(tuple(keep))


def refusal(name: str, path: str, v: Verdict) -> str:
    """The one line `roost rm` prints when git says the worktree must stay.

    >>> v = verdict(Facts("/w", "b", in_progress="merge"), "keep it")
    >>> print(refusal("a", "/w", v))  # doctest: +ELLIPSIS
    kept a: its worktree /w would lose work: a merge is in progress (finish or abort it ...)
    """
    reasons = "; ".join(f"{k.why} ({k.todo})" for k in v.keep)
    return f"kept {name}: its worktree {path} would lose work: {reasons}"


def git_state(counts: dict[str, object]) -> str:
    """A worktree's counts in words (`roost ls --git`, the TUI's details): changed files, commits
    ahead of / behind the branch compared with; no counts means git could not look there."""
    if counts.get("dirty") is None:
        return "folder gone"
    return (
        f"{counts['dirty']} changed, {counts['ahead']} ahead / {counts['behind']} behind "
        f"{counts['against']}"
    )


def archive_ref(name: str, agent_id: str) -> str:
    """Where the last commit of agent NAME's worktree stays reachable after removal.

    >>> archive_ref("api", "0f1e2d3c-aaaa")
    'refs/roost/archive/api-0f1e2d3c'
    """
    return f"{ARCHIVE}/{name}-{agent_id[:8]}"


# ---- export and import -----------------------------------------------------------------------
def imported(entries: object, agents: dict[str, str]) -> list[dict[str, str | None]]:
    """An export's "worktrees" checked for shape (git verifies them next): a list of {agent_id,
    repo, branch, path, base} naming agents of the file (`agents`: id to name).

    >>> imported([{"agent_id": "x", "repo": "/r", "branch": "b", "path": "/w", "base": None}],
    ...          {"x": "a"})[0]["path"]
    '/w'
    >>> imported([{"agent_id": "y"}], {"x": "a"})
    Traceback (most recent call last):
    ...
    roost.core.errors.RoostError: worktrees[0]: agent_id 'y' is no agent of this file
    """
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise RoostError("'worktrees' must be a list")
    found: list[dict[str, str | None]] = []
    for i, e in enumerate(entries):
        where = f"worktrees[{i}]"
        if not isinstance(e, dict) or e.get("agent_id") not in agents:
            got = e.get("agent_id") if isinstance(e, dict) else e
            raise RoostError(f"{where}: agent_id {got!r} is no agent of this file")
        for key in ("repo", "path"):
            value = e.get(key)
            if not isinstance(value, str) or (problem := path_problem(value)):
                raise RoostError(f"{where}.{key}: {problem or 'must be a path'}")
        branch, base = e.get("branch"), e.get("base")
        if not isinstance(branch, str) or not branch or branch.startswith("-"):
            raise RoostError(f"{where}.branch: must be a branch name")
        if base is not None and (not isinstance(base, str) or base.startswith("-")):
            raise RoostError(f"{where}.base: must be a branch name or null")
        found.append({k: e.get(k) for k in ("agent_id", "repo", "branch", "path", "base")})
    return found
