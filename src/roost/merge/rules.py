"""Taking an agent's work, and agents that collide (issue 38 points 3-5). Pure: git's output and
the facts it gave in, decisions and words out (merge/operations.py asks git and acts).

- `hunks` reads the `@@ -a,b +c,d @@` headers of `git diff -U0` into each file's changed line
  ranges, on the side of the commit the agent branched from; `overlaps` says where two agents'
  ranges meet.
- `merge_tree` reads `git merge-tree --write-tree --name-only -z`: a clean result's tree, or the
  files that would conflict.
- `refusal` is the one line a merge is refused with, the first reason of several.

>>> a = hunks("diff --git a/f b/f\\n--- a/f\\n+++ b/f\\n@@ -3,2 +3,2 @@\\n-x\\n-y\\n+X\\n+Y\\n")
>>> b = hunks("diff --git a/f b/f\\n--- a/f\\n+++ b/f\\n@@ -4 +4 @@\\n-y\\n+why\\n")
>>> overlaps(a, b)
{'f': ((4, 4),)}
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from roost.core.present import few

MODES = ("merge", "squash", "rebase", "files", "hunks")
MAX_NAMED = 5  # files a refusal names (the rest are counted)
MAX_FILES = 10_000  # files of one diff kept (a diff that touches more is cut there)


# ---- changed line ranges ---------------------------------------------------------------------
Ranges = Mapping[str, tuple[tuple[int, int], ...]]  # path -> (first, last) line ranges, sorted

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def hunk_range(start: int, count: int) -> tuple[int, int]:
    """The lines a hunk touches on the old side, as (first, last). A hunk that only adds lines
    (`-a,0`: after line a) touches lines a and a+1, the two it goes between: git's own merge
    calls a change there and a change of either line a conflict.

    >>> hunk_range(3, 2), hunk_range(7, 1), hunk_range(7, 0), hunk_range(0, 0)
    ((3, 4), (7, 7), (7, 8), (0, 1))
    """
    if count == 0:
        return (start, start + 1)
    return (start, start + count - 1)


def unquote(path: str) -> str:
    r"""A path as git writes it in a diff header: C-quoted ("a\"b", octal escapes for bytes
    beyond ASCII, decoded as UTF-8 with replacement) when it holds unusual characters.

    >>> unquote('"sp ace\\tq\\"\\303\\251"')
    'sp ace\tq"é'
    >>> unquote("plain/x.py")
    'plain/x.py'
    """
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    out = bytearray()
    body, i = path[1:-1], 0
    simple = {"n": 10, "t": 9, "r": 13, "b": 8, "f": 12, "a": 7, "v": 11, "\\": 92, '"': 34}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
                continue
            if re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
        out += ch.encode("utf-8", "replace")
        i += 1
    return out.decode("utf-8", "replace")


def hunks(diff: str) -> dict[str, tuple[tuple[int, int], ...]]:
    """Each changed file's line ranges (hunk_range) from the text of `git diff -U0`, keyed by
    the file's path on the old side (its new path for a file that is new). A binary file or a
    mode change with no hunk counts as touching all of it: (1, 0) is "the whole file".

    >>> hunks('diff --git a/x b/x\\n--- a/x\\n+++ b/x\\n@@ -1,0 +2,3 @@\\n+a\\n+b\\n+c\\n'
    ...       '@@ -9 +11 @@\\n-q\\n+r\\n')
    {'x': ((1, 2), (9, 9))}
    >>> hunks('diff --git a/new b/new\\nnew file mode 100644\\n--- /dev/null\\n+++ b/new\\n'
    ...       '@@ -0,0 +1 @@\\n+hi\\n')
    {'new': ((0, 1),)}
    >>> hunks('diff --git a/img b/img\\nBinary files a/img and b/img differ\\n')
    {'img': ((1, 0),)}
    """
    found: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    old: str | None = None
    header = False  # between `diff --git` and its first hunk: `---`/`+++` name the files there
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            if len(found) >= MAX_FILES:
                break
            current, old, header = _header_path(line[len("diff --git ") :]), None, True
            if current is not None:
                found.setdefault(current, [])
        elif not header and not line.startswith("@@ "):
            continue  # a hunk's line (a deleted "-- x" reads "--- x")
        elif line.startswith("--- "):
            side = line[4:]
            old = None if side == "/dev/null" else unquote(side).removeprefix("a/")
        elif line.startswith("+++ "):
            side = line[4:]
            new = None if side == "/dev/null" else unquote(side).removeprefix("b/")
            path = old or new
            if path is not None and path != current:
                if current is not None and not found.get(current):
                    found.pop(current, None)
                current = path
                found.setdefault(current, [])
        elif line.startswith("@@ ") and current is not None:
            header = False
            m = _HUNK.match(line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or "1")
                found[current].append(hunk_range(start, count))
    return {p: tuple(sorted(r)) if r else ((1, 0),) for p, r in found.items()}


def untracked_ranges(name_status: str) -> dict[str, tuple[tuple[int, int], ...]]:
    r"""The ranges of untracked files from `git diff --name-status -z` over them: a file new
    since the fork point touches what a new file's hunk (`-0,0`) does, lines 0-1, as a
    committed new file's does; one that was there (a file taken out of the index) all of it.
    Two agents that both create a file at one path collide.

    >>> untracked_ranges("A\0notes.md\0M\0gone.txt\0")
    {'notes.md': ((0, 1),), 'gone.txt': ((1, 0),)}
    """
    fields = name_status.split("\0")
    found: dict[str, tuple[tuple[int, int], ...]] = {}
    for status, path in zip(fields[::2], fields[1::2], strict=False):
        if path and status and len(found) < MAX_FILES:
            found[path] = (hunk_range(0, 0),) if status == "A" else ((1, 0),)
    return found


def _header_path(rest: str) -> str | None:
    """The old path of a `diff --git a/X b/Y` header when it can be read without doubt (the
    `---` line, read later, settles it otherwise)."""
    if rest.startswith('"'):
        end = rest.find('" ', 1)
        return unquote(rest[: end + 1]).removeprefix("a/") if end > 0 else None
    if rest.startswith("a/") and " b/" in rest:
        return rest[2:].partition(" b/")[0]
    return None


def overlaps(a: Ranges, b: Ranges) -> dict[str, tuple[tuple[int, int], ...]]:
    """Where two agents' changes meet: per file both changed, the line ranges both touch
    ((1, 0): a whole file, binary or mode-only, touched by one of them).

    >>> overlaps({"f": ((1, 3), (10, 12))}, {"f": ((3, 5), (13, 14)), "g": ((1, 1),)})
    {'f': ((3, 3),)}
    >>> overlaps({"f": ((1, 0),)}, {"f": ((7, 9),)})
    {'f': ((7, 9),)}
    >>> overlaps({"f": ((1, 2),)}, {"f": ((3, 4),)})
    {}
    """
    found: dict[str, tuple[tuple[int, int], ...]] = {}
    for path in sorted(a.keys() & b.keys()):
        met: list[tuple[int, int]] = []
        for lo1, hi1 in a[path]:
            for lo2, hi2 in b[path]:
                if (lo1, hi1) == (1, 0) or (lo2, hi2) == (1, 0):
                    met.append((lo2, hi2) if (lo1, hi1) == (1, 0) else (lo1, hi1))
                elif lo1 <= hi2 and lo2 <= hi1:
                    met.append((max(lo1, lo2), min(hi1, hi2)))
        if met:
            found[path] = tuple(sorted(set(met)))
    return found


def lines_text(ranges: Sequence[tuple[int, int]]) -> str:
    """Line ranges in words.

    >>> lines_text([(3, 3), (7, 9)]), lines_text([(1, 0)])
    ('lines 3, 7-9', 'the whole file')
    """
    if any(r == (1, 0) for r in ranges):
        return "the whole file"
    words = [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges]
    return ("line " if len(words) == 1 and "-" not in words[0] else "lines ") + ", ".join(words)


# ---- git merge-tree ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MergeTree:
    """What `git merge-tree --write-tree --name-only -z` said: the merged tree (written even
    with conflicts) and the files that conflict (none: a clean merge)."""

    tree: str | None
    conflicts: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return self.tree is not None and not self.conflicts


def merge_tree(out: str, exit_code: int) -> MergeTree:
    """Read merge-tree's output: the tree id, NUL, then (exit code 1: conflicts) each
    conflicting path once, NUL-terminated, an empty field, and its messages (not read).
    Any other exit code is git's own failure: no tree.

    >>> merge_tree("abc123\\0", 0)
    MergeTree(tree='abc123', conflicts=())
    >>> merge_tree("abc\\0f\\0g h\\0f\\0\\0" "1\\0f\\0Auto-merging\\0Auto-merging f\\n\\0", 1)
    MergeTree(tree='abc', conflicts=('f', 'g h'))
    >>> merge_tree("fatal: refusing to merge unrelated histories\\n", 128).clean
    False
    """
    if exit_code not in (0, 1):
        return MergeTree(None)
    fields = out.split("\0")
    tree = fields[0].strip() or None
    if exit_code == 0 or tree is None:
        return MergeTree(tree)
    conflicts: list[str] = []
    for name in fields[1:]:
        if not name:
            break
        conflicts.append(name)
    return MergeTree(tree, tuple(dict.fromkeys(conflicts)) or ("(unnamed)",))


# ---- may it merge? -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Facts:
    """What the store and git said, just now, about a merge of agent `name`'s work."""

    name: str
    has_worktree: bool = True
    working: bool = False  # its recorded status is working (mid-turn)
    branch: str = ""
    branch_exists: bool = True
    target: str | None = None  # None: the main checkout's HEAD is detached
    target_exists: bool = True
    checked_out_elsewhere: str | None = None  # the target is checked out in this other worktree
    main_dirty: tuple[str, ...] = ()  # tracked files with changes in the main checkout
    main_busy: str | None = None  # "merge", "rebase"... in progress in the main checkout
    into_main: bool = True  # the target is the branch the main checkout has checked out
    ahead: int = 1  # commits of the branch the target lacks
    conflicts: tuple[str, ...] = ()  # merge-tree's conflicting files
    missing_files: tuple[str, ...] = ()  # --files naming paths in neither branch
    merges_in_range: int = 0  # merge commits among the ones a --rebase would replay
    mode: str = "merge"
    extra: Sequence[str] = field(default=())
    checkout: str = "the main checkout"  # the checkout whose files follow, in words


def refusal(f: Facts) -> str | None:
    """The one line a merge is refused with (the first reason), or None: go ahead.

    >>> print(refusal(Facts("api", working=True, branch="roost/api", target="main")))
    api is mid-turn (its status is working): merge once its turn ends
    >>> print(refusal(Facts("api", branch="roost/api", target="main",
    ...                     main_dirty=("a", "b", "c", "d", "e", "f"))))  # doctest: +ELLIPSIS
    the main checkout has uncommitted changes (a, b, c, d, e and 1 more): commit or stash ...
    >>> refusal(Facts("api", branch="roost/api", target="main")) is None
    True
    """
    n = f.name
    if not f.has_worktree:
        return f"{n} has no worktree of roost's (spawn --worktree): there is no branch to merge"
    if f.working:
        return f"{n} is mid-turn (its status is working): merge once its turn ends"
    if not f.branch_exists:
        return (
            f"{n}'s branch {f.branch} was deleted: nothing to merge "
            f"(its worktree stays; `git branch {f.branch} <commit>` brings the branch back)"
        )
    if f.target is None:
        return "the main checkout is on a detached HEAD: name the branch with --into BRANCH"
    if not f.target_exists:
        return f"branch {f.target} does not exist"
    if f.checked_out_elsewhere:
        return (
            f"branch {f.target} is checked out in the worktree {f.checked_out_elsewhere}: "
            "roost merges only into the main checkout's branch or a branch checked out nowhere"
        )
    if f.into_main and f.main_busy:
        return f"a {f.main_busy} is in progress in {f.checkout}: finish or abort it first"
    if f.into_main and f.main_dirty:
        return (
            f"{f.checkout} has uncommitted changes ({few(list(f.main_dirty), MAX_NAMED)}): "
            f"commit or stash them first"
        )
    if f.missing_files:
        return (
            f"--files: {few(list(f.missing_files), MAX_NAMED)} in neither {f.branch} nor {f.target}"
        )
    if f.ahead == 0 and f.mode not in ("files", "hunks"):
        return f"nothing to merge: every commit of {f.branch} is in {f.target} already"
    if f.mode == "rebase" and f.merges_in_range:
        return (
            f"--rebase replays plain commits only: {f.branch} holds {f.merges_in_range} "
            "merge commit(s); use a merge or --squash"
        )
    if f.conflicts:
        return (
            f"merging {f.branch} into {f.target} would conflict in "
            f"{few(list(f.conflicts), MAX_NAMED)}: nothing was changed; resolve it in "
            f"{n}'s worktree (e.g. ask {n} to merge {f.target}) and merge again"
        )
    return None


# ---- hunks (a person's pick of the diff roost shows) --------------------------------------
MAX_HUNKS = 500  # hunks one merge takes


@dataclass(frozen=True, slots=True)
class Pick:
    """Hunk `number` (from 1, in the order `roost diff` shows a file's hunks) of `path`, and
    the fingerprint it had when it was shown ("" when the person typed none)."""

    path: str
    number: int
    fingerprint: str = ""

    @property
    def label(self) -> str:
        return f"{self.path}:{self.number}"


_PICK = re.compile(r"([1-9][0-9]{0,5})(?:@([0-9a-f]{6,64}))?")


def parse_picks(specs: Sequence[str]) -> tuple[Pick, ...]:
    """`--hunks FILE:N[,N...]` (each N may carry `@FINGERPRINT`, as the TUI and the web send
    it); the last colon splits (a file's name may hold one). Refused in one line.

    >>> [p.label for p in parse_picks(["a:b.py:2,1", "c.py:3@0123abcd4567"])]
    ['a:b.py:1', 'a:b.py:2', 'c.py:3']
    >>> parse_picks(["c.py"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    roost.core.errors.RoostError: --hunks 'c.py': give FILE:N[,N...] (N: a hunk's number in ...
    """
    from roost.core.errors import RoostError

    found: dict[tuple[str, int], Pick] = {}
    for spec in specs:
        path, sep, numbers = spec.rpartition(":")
        items = [_PICK.fullmatch(n) for n in numbers.split(",")]
        bad = not sep or not path or path.startswith("-") or any(ord(c) < 32 for c in path)
        if bad or not all(items):
            raise RoostError(
                f"--hunks {_plain(spec)[:200]!r}: give FILE:N[,N...] (N: a hunk's number in "
                "roost diff)",
                code=2,
            )
        for m in items:
            assert m is not None
            pick = Pick(path, int(m.group(1)), m.group(2) or "")
            found[(path, pick.number)] = pick
    if not found:
        raise RoostError("--hunks: name at least one hunk (FILE:N)", code=2)
    if len(found) > MAX_HUNKS:
        raise RoostError(f"--hunks: at most {MAX_HUNKS} hunks in one merge", code=2)
    return tuple(found[k] for k in sorted(found))


def picks_text(labels: Sequence[str]) -> str:
    """Hunks (their labels FILE:N) in a few words, by file.

    >>> picks_text(["a.py:1", "a.py:3", "b.py:2"])
    'a.py:1,3, b.py:2'
    """
    by_file: dict[str, list[str]] = {}
    for label in labels:
        path, _, number = label.rpartition(":")
        by_file.setdefault(path, []).append(number)
    return few([f"{path}:{','.join(ns)}" for path, ns in by_file.items()], 5)


def pick_refusal(
    name: str, pick: Pick, count: int | None, binary: bool, fingerprint: str | None
) -> str | None:
    """Why hunk `pick` cannot be taken from agent `name`'s diff, where its file has `count`
    hunks (None: the file is not in the diff), or None.

    >>> pick_refusal("api", Pick("a.py", 3), 2, False, "x")
    "api's diff shows 2 hunks of a.py, not hunk 3 (roost diff api --file a.py)"
    >>> print(pick_refusal("api", Pick("a.py", 1, "abc123"), 2, False, "def456"))
    ... # doctest: +ELLIPSIS
    the diff changed since it was shown (a.py:1 is not the hunk shown): reload and ...
    """
    path = _plain(pick.path)
    if count is None:
        return f"{path} is not changed in {name}'s diff (roost diff {name} --name-only)"
    if binary:
        return f"{path} is a binary file: it has no hunks to take (roost merge --files takes it)"
    if count == 0:
        return f"{path} has no hunks in {name}'s diff (a mode change or a rename only)"
    if pick.number > count:
        s = "s" if count != 1 else ""
        return (
            f"{name}'s diff shows {count} hunk{s} of {path}, not hunk {pick.number} "
            f"(roost diff {name} --file {path})"
        )
    if pick.fingerprint and fingerprint != pick.fingerprint:
        return (
            f"the diff changed since it was shown ({_plain(pick.label)} is not the hunk shown): "
            "reload and choose again; nothing was changed"
        )
    return None


_APPLY_ERR = re.compile(
    r"^error: (?:patch failed: (.+):\d+|(.+): (?:patch does not apply|already exists in "
    r"(?:index|working directory)|does not exist in index|No such file or directory|"
    r"does not match index|wrong type))$"
)


def apply_failed(err: str, paths: Sequence[str]) -> tuple[str, ...]:
    r"""The files `git apply` said it could not patch (its "error: ..." lines), else `paths`.

    >>> apply_failed("error: patch failed: a.py:3\nerror: a.py: patch does not apply\n", ["x"])
    ('a.py',)
    >>> apply_failed("fatal: corrupt patch at line 9\n", ["b.py"])
    ('b.py',)
    """
    found: list[str] = []
    for line in err.splitlines()[:200]:
        m = _APPLY_ERR.match(line)
        if m:
            found.append(_plain(m.group(1) or m.group(2) or ""))
    return tuple(dict.fromkeys(found)) or tuple(_plain(p) for p in paths)


def hunks_refusal(branch: str, target: str, files: Sequence[str], checkout: str) -> str:
    """A pick of hunks that git would not apply to the target."""
    return (
        f"the hunks chosen would not apply to {target} in {few(list(files), MAX_NAMED)}: "
        f"nothing was changed ({branch} and {checkout} are as they were); merge the whole "
        "branch, or pick hunks that apply"
    )


# ---- words ---------------------------------------------------------------------------------
def message(
    mode: str, name: str, branch: str, target: str, commits: int, files: Sequence[str]
) -> str:
    """The commit message of a merge roost makes (a rebase keeps each commit's own).

    >>> message("merge", "api", "roost/api", "main", 2, ())
    "Merge branch 'roost/api' (agent api) into main"
    >>> message("squash", "api", "roost/api", "main", 3, ()).splitlines()[0]
    'agent api: 3 commits of roost/api, squashed'
    >>> message("files", "api", "roost/api", "main", 1, ("a.py", "b.py")).splitlines()[0]
    'agent api: a.py, b.py from roost/api'
    """
    if mode == "squash":
        s = "s" if commits != 1 else ""
        return (
            f"agent {name}: {commits} commit{s} of {branch}, squashed\n\n"
            f"roost merge --squash {name}\n"
        )
    if mode == "files":
        return (
            f"agent {name}: {few(list(files), 3)} from {branch}\n\n"
            f"roost merge --files of {name}'s work\n"
        )
    if mode == "hunks":  # `files` holds the hunks' labels (FILE:N)
        n = len(files)
        return (
            f"agent {name}: {n} hunk{'s' if n != 1 else ''} of its work on {branch}\n\n"
            f"roost merge --hunks {_plain(picks_text(files))}\n"
        )
    return f"Merge branch '{branch}' (agent {name}) into {target}"


def uncommitted_note(name: str, count: int) -> str | None:
    """What a merge says of the agent's work it did not take.

    >>> print(uncommitted_note("api", 2))  # doctest: +NORMALIZE_WHITESPACE
    api's worktree has 2 uncommitted files: not merged (only committed work is); commit them in
    its worktree and merge again to take them
    >>> uncommitted_note("api", 0) is None
    True
    """
    if not count:
        return None
    s = "s" if count != 1 else ""
    return (
        f"{name}'s worktree has {count} uncommitted file{s}: not merged (only committed work "
        "is); commit them in its worktree and merge again to take them"
    )


def base_moved(branch: str, commit: str, by: str, repo: str) -> str:
    """The notice an agent gets when the branch it was made from moved under it.

    >>> print(base_moved("main", "0123456789abcdef", "api", "/src/app"))
    ... # doctest: +NORMALIZE_WHITESPACE
    [roost] main moved to 0123456789ab: the work of api was merged into it (/src/app). Your branch
    is unchanged; merge or rebase onto main when it suits you.
    """
    return _plain(
        f"[roost] {branch} moved to {commit[:12]}: the work of {by} was merged into it "
        f"({repo}). Your branch is unchanged; merge or rebase onto {branch} when it suits you."
    )


def _plain(text: str) -> str:
    return "".join(ch for ch in " ".join(text.split()) if unicodedata.category(ch) != "Cc")


# ---- collisions -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Collision:
    """Two worktree agents of one repository that collide: where their changed lines meet
    (path -> line ranges) and the files a merge of their branches would conflict in."""

    a: str  # agent ids, a < b
    b: str
    lines: Mapping[str, tuple[tuple[int, int], ...]]
    conflicts: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted({*self.lines, *self.conflicts}))


def pair(a: str, b: str) -> tuple[str, str]:
    """A pair's key, the same whichever agent's turn ended.

    >>> pair("b", "a") == pair("a", "b") == ("a", "b")
    True
    """
    return (a, b) if a < b else (b, a)


def collisions(
    agent: str,
    ranges: Mapping[str, Ranges],
    conflicts: Mapping[str, Iterable[str]],
) -> list[Collision]:
    """The agents `agent` collides with: `ranges` holds each agent's changed lines (its own
    too), `conflicts` the files a merge of `agent`'s branch with each other's would conflict
    in. Either marks the pair.

    >>> found = collisions("a", {"a": {"f": ((1, 3),)}, "b": {"f": ((2, 2),)}, "c": {}},
    ...                    {"c": ["g"]})
    >>> [(c.a, c.b, dict(c.lines), c.conflicts) for c in found]
    [('a', 'b', {'f': ((2, 2),)}, ()), ('a', 'c', {}, ('g',))]
    """
    mine = ranges.get(agent, {})
    found: list[Collision] = []
    for other in sorted(set(ranges) | set(conflicts)):
        if other == agent:
            continue
        met = overlaps(mine, ranges.get(other, {}))
        clash = tuple(sorted(set(conflicts.get(other, ()))))
        if met or clash:
            a, b = pair(agent, other)
            found.append(Collision(a, b, met, clash))
    return found


def describe(c: Collision, names: Mapping[str, str]) -> str:
    """One pair in words, for `roost conflicts` and the alert.

    >>> describe(Collision("1", "2", {"f.py": ((3, 4),)}, ("g.py",)), {"1": "a", "2": "b"})
    'a and b: both change f.py lines 3-4; a merge of their branches conflicts in g.py'
    """
    parts: list[str] = []
    if c.lines:
        each = [f"{path} {lines_text(r)}" for path, r in sorted(c.lines.items())]
        parts.append("both change " + few(each, 3))
    if c.conflicts:
        parts.append("a merge of their branches conflicts in " + few(list(c.conflicts), 3))
    first, second = sorted((names.get(c.a, c.a), names.get(c.b, c.b)))
    return f"{first} and {second}: " + "; ".join(parts)


# ---- fan and compare (point 5) -------------------------------------------------------------
MAX_FAN = 10  # agents one `spawn --fan` starts


def fan_names(name: str, n: int) -> list[str]:
    """The agents of a fan: NAME-1 .. NAME-N.

    >>> fan_names("api", 3)
    ['api-1', 'api-2', 'api-3']
    >>> fan_names("api", 11)
    Traceback (most recent call last):
    ...
    roost.core.errors.RoostError: --fan takes 2 to 10 agents, not 11
    """
    from roost.core.errors import RoostError

    if not 2 <= n <= MAX_FAN:
        raise RoostError(f"--fan takes 2 to {MAX_FAN} agents, not {n}", code=2)
    return [f"{name}-{i}" for i in range(1, n + 1)]


@dataclass(frozen=True, slots=True)
class Numstat:
    """`git diff --numstat`'s figures summed: files changed, lines added and deleted, and the
    binary files (git counts no lines for them)."""

    files: int = 0
    added: int = 0
    deleted: int = 0
    binary: int = 0


def numstat(out: str) -> Numstat:
    """Read `git diff --numstat -z --no-renames`: "ADDED<tab>DELETED<tab>PATH" NUL-ended, "-"
    for a binary file's counts.

    >>> numstat("3\\t1\\ta.py\\0" "-\\t-\\timg.png\\0" "0\\t7\\tgone.py\\0")
    Numstat(files=3, added=3, deleted=8, binary=1)
    >>> numstat("")
    Numstat(files=0, added=0, deleted=0, binary=0)
    """
    files = added = deleted = binary = 0
    for entry in out.split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) != 3 or not parts[2]:
            continue
        files += 1
        if parts[0] == "-" or parts[1] == "-":
            binary += 1
            continue
        if parts[0].isdigit() and parts[1].isdigit():
            added += int(parts[0])
            deleted += int(parts[1])
    return Numstat(files, added, deleted, binary)


def check_words(exit_code: int | None, seconds: float, limit: float) -> str:
    """A check's result in words.

    >>> check_words(0, 3.21, 600), check_words(1, 2, 600), check_words(None, 600, 600)
    ('passed (3.2 s)', 'failed (exit 1, 2.0 s)', 'killed after 600 s')
    """
    if exit_code is None:
        return f"killed after {limit:g} s"
    if exit_code == 0:
        return f"passed ({seconds:.1f} s)"
    return f"failed (exit {exit_code}, {seconds:.1f} s)"


def merged_line(
    agent: str,
    branch: str,
    target: str,
    mode: str,
    commits: int,
    paths: int,
    result: str,
    before: str,
) -> str:
    """What a merge that went says (`roost merge`, the web's Merge button)."""
    what = {
        "merge": f"a merge commit of {commits} commit{'s' if commits != 1 else ''}",
        "squash": f"{commits} commit{'s' if commits != 1 else ''} squashed into one",
        "rebase": f"{commits} commit{'s' if commits != 1 else ''} replayed",
        "files": f"{paths} path{'s' if paths != 1 else ''} as one commit",
        "hunks": f"{paths} hunk{'s' if paths != 1 else ''} as one commit",
    }[mode]
    return (
        f"merged {agent} ({branch}) into {target}: {what}, now at {result[:12]} (was {before[:12]})"
    )
