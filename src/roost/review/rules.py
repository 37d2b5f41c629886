"""Review's pure half: git's diff output read into typed records, what a person sees of it, where
a comment's lines are now, and the one message that carries the comments to the agent.

Nothing here runs git or reads a file: system/gitdiff.py hands in git's bytes (a patch as an
iterable of lines, so a huge one is read as it streams, never held), review/operations.py the
file's lines. Every byte git wrote is untrusted: decoded with errors="replace" (paths keep their
exact bytes as surrogate escapes, shown through `shown_path`), and every control character shown
as an escape before it reaches a terminal or a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from roost.core import present
from roost.core.errors import RoostError
from roost.core.present import shown, visible

# ---- the records ------------------------------------------------------------------------------
STATUS_WORDS = {
    "A": "added",
    "C": "copied",
    "D": "deleted",
    "M": "modified",
    "R": "renamed",
    "T": "typechange",
    "U": "unmerged",
    "X": "unknown",
}
UNTRACKED = "untracked"  # a new file git does not track yet: shown as added


@dataclass(frozen=True, slots=True)
class Hunk:
    """One `@@ -old_start,old_count +new_start,new_count @@ section` block; `lines` start with
    " ", "+", "-" or "\\" (git's "\\ No newline at end of file"), `more` lines of it were past
    the budget (counted, not kept)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str = ""
    lines: tuple[str, ...] = ()
    more: int = 0
    fingerprint: str = ""  # of all its lines as git wrote them (hunk_fingerprint)

    @property
    def new_end(self) -> int:
        """The last line of the new side it shows (new_start - 1 when it shows none)."""
        return self.new_start + self.new_count - 1


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of the diff. `added`/`removed` are None for a binary file (then `size`: its
    bytes, the new file's or a deleted one's). `hunks` and `more` come with the patch; `read`
    False: the patch was not read this far (the output's budget ran out first)."""

    path: str
    old_path: str | None
    status: str  # a STATUS_WORDS value or UNTRACKED
    added: int | None
    removed: int | None
    binary: bool = False
    size: int | None = None
    hunks: tuple[Hunk, ...] = ()
    more: int = 0
    read: bool = False
    old_blob: str = ""  # git's object ids (the sizes of binary files are asked of git by them)
    new_blob: str = ""


@dataclass(frozen=True, slots=True)
class Diff:
    """An agent's change: its folder (`top`) against commit `base`. `against`: "base" (the
    commit its worktree branched from), "given" (--base), or "HEAD" (an agent with no roost
    worktree: the uncommitted changes of its checkout only)."""

    agent: str
    top: str
    base: str
    against: str
    head: str | None
    branch: str | None
    files: tuple[FileChange, ...] = ()


@dataclass(frozen=True, slots=True)
class Budget:
    """How much of a patch is kept and shown: lines per file, lines in all (None: no limit),
    bytes of one line (the rest of a longer one is counted, not kept)."""

    file_lines: int | None = 500
    total_lines: int | None = 5000
    line_bytes: int = 2000


FILE_LINES = 500
TOTAL_LINES = 5000
ONE_FILE_LINES = 20_000  # --file: the budget of the one file shown


# ---- git's summary: --raw --numstat -z --------------------------------------------------------
def parse_summary(data: bytes, untracked: frozenset[str] = frozenset()) -> list[FileChange]:
    r"""The files of `git diff --raw --numstat -z --no-abbrev` (the raw records first, then the
    numstat ones, in the same order); `untracked`: paths that are new files git does not track.

    >>> raw = b":100644 100644 " + b"1" * 40 + b" " + b"2" * 40 + b" M\0a.py\0"
    >>> [(f.path, f.status, f.added, f.removed) for f in parse_summary(raw + b"3\t1\ta.py\0")]
    [('a.py', 'modified', 3, 1)]
    >>> ren = b":100644 100644 " + b"1" * 40 + b" " + b"1" * 40 + b" R100\0old\0new\0"
    >>> [(f.path, f.old_path, f.status) for f in parse_summary(ren + b"0\t0\t\0old\0new\0")]
    [('new', 'old', 'renamed')]
    >>> bin = b":000000 100644 " + b"0" * 40 + b" " + b"4" * 40 + b" A\0x.png\0"
    >>> new = frozenset({"x.png"})
    >>> [(f.status, f.binary, f.added) for f in parse_summary(bin + b"-\t-\tx.png\0", new)]
    [('untracked', True, None)]
    """
    tokens = data.split(b"\0")
    raw: list[tuple[str, str, str | None, str, str]] = []
    stats: list[tuple[int | None, int | None]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token:
            i += 1
            continue
        if token.startswith(b":"):
            meta = token[1:].split(b" ")
            if len(meta) < 5:
                raise RoostError(f"git diff wrote a record roost cannot read: {_shown(token)}")
            letter = meta[4][:1].decode("ascii", "replace")
            old_blob, new_blob = (m.decode("ascii", "replace") for m in meta[2:4])
            if letter in ("R", "C"):
                source, target = _path(_at(tokens, i + 1)), _path(_at(tokens, i + 2))
                raw.append((letter, target, source, old_blob, new_blob))
                i += 3
            else:
                raw.append((letter, _path(_at(tokens, i + 1)), None, old_blob, new_blob))
                i += 2
            continue
        plus, minus, rest = [*token.split(b"\t", 2), b"", b""][:3]
        stats.append((_count(plus), _count(minus)))
        i += 3 if rest == b"" else 1
    found: list[FileChange] = []
    for n, (letter, path, old, old_blob, new_blob) in enumerate(raw):
        added, removed = stats[n] if n < len(stats) else (None, None)
        status = STATUS_WORDS.get(letter, "unknown")
        if path in untracked and letter == "A":
            status = UNTRACKED
        binary = added is None and removed is None and n < len(stats)
        found.append(
            FileChange(
                path, old, status, added, removed, binary, None, (), 0, False, old_blob, new_blob
            )
        )
    return found


def _at(tokens: list[bytes], i: int) -> bytes:
    if i >= len(tokens):
        raise RoostError("git diff's output ended inside a record")
    return tokens[i]


def _path(raw: bytes) -> str:
    """A path as git wrote it, exactly (bytes that are no UTF-8 kept as surrogate escapes)."""
    return raw.decode("utf-8", "surrogateescape")


def _count(word: bytes) -> int | None:
    return int(word) if word.isdigit() else None


def _shown(raw: bytes) -> str:
    return visible(raw[:200].decode("utf-8", "replace"))


def shown_path(path: str) -> str:
    r"""A path for a person: bytes that are no UTF-8 replaced, control characters escaped.

    >>> shown_path("a\nb\udcff.txt")
    'a\\x0ab\ufffd.txt'
    """
    return visible(path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


# ---- git's patch, read as it streams --------------------------------------------------------
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


def parse_hunk_header(line: bytes) -> Hunk | None:
    r"""
    >>> h = parse_hunk_header(b"@@ -1,2 +1,3 @@ def f():")
    >>> (h.old_start, h.old_count, h.new_start, h.new_count, h.section)
    (1, 2, 1, 3, 'def f():')
    >>> parse_hunk_header(b"@@ -0,0 +1 @@").new_count
    1
    """
    m = _HUNK.match(line)
    if m is None:
        return None
    old_start, old_count, new_start, new_count, section = m.groups()
    return Hunk(
        int(old_start),
        int(old_count) if old_count is not None else 1,
        int(new_start),
        int(new_count) if new_count is not None else 1,
        section.decode("utf-8", "replace"),
    )


class Fingerprint:
    """A hunk's identity for the revision shown: SHA-256 over each of its lines as git wrote
    them (its `@@` header first; a line cut at the budget's bytes counts with how much was
    cut), every line, also those past the budget. A person's pick carries it, so a hunk is
    taken only as it was shown (the TUI's and the web's selection, `roost merge --hunks`)."""

    __slots__ = ("_h",)

    def __init__(self) -> None:
        import hashlib  # here: OpenSSL's load is ~2.5 ms of `roost diff --stat`, which never hashes

        self._h = hashlib.sha256()

    def add(self, raw: bytes, cut: int) -> None:
        self._h.update(raw)
        self._h.update(b"\0%d\n" % cut)

    def digest(self) -> str:
        return self._h.hexdigest()[:FINGERPRINT_HEX]


FINGERPRINT_HEX = 12


@dataclass(frozen=True, slots=True)
class PatchFile:
    """One file's section of a patch as git wrote it, in bytes: its head (`diff --git` to
    `+++`) and each hunk (its `@@` line and its lines, newlines kept) with its fingerprint."""

    head: bytes
    hunks: tuple[tuple[bytes, str], ...]
    binary: bool = False


def split_patch(patch: bytes, line_bytes: int = 2000) -> list[PatchFile]:
    r"""git's patch cut into files and hunks, exactly as written (what a patch of some of
    its hunks is made of: `pick_patch`), each hunk's fingerprint as `read_patch` gives it.

    >>> p = (b"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
    ...      b"@@ -9,0 +10 @@ x\n+c\n\\ No newline at end of file\n")
    >>> [f.head for f in split_patch(p)]
    [b'diff --git a/f b/f\n--- a/f\n+++ b/f\n']
    >>> [h for h, _ in split_patch(p)[0].hunks]  # doctest: +NORMALIZE_WHITESPACE
    [b'@@ -1 +1 @@\n-a\n+b\n',
     b'@@ -9,0 +10 @@ x\n+c\n\\ No newline at end of file\n']
    """
    files: list[PatchFile] = []
    head: list[bytes] = []
    hunks: list[tuple[bytes, str]] = []
    body: list[bytes] = []
    mark: Fingerprint | None = None
    old_left = new_left = 0
    binary = False

    def close_hunk() -> None:
        nonlocal body, mark
        if mark is not None:
            hunks.append((b"".join(body), mark.digest()))
        body, mark = [], None

    def close_file() -> None:
        nonlocal head, hunks, binary
        close_hunk()
        if head:
            files.append(PatchFile(b"".join(head), tuple(hunks), binary))
        head, hunks, binary = [], [], False

    for line in _nl_lines(patch):
        raw = line[:-1] if line.endswith(b"\n") else line
        kept, cut = raw[:line_bytes], max(0, len(raw) - line_bytes)
        first = raw[:1]
        if mark is not None and (
            ((old_left > 0 or new_left > 0) and first in (b" ", b"-", b"+")) or first == b"\\"
        ):
            if first in (b" ", b"-"):
                old_left -= 1
            if first in (b" ", b"+"):
                new_left -= 1
            mark.add(kept, cut)
            body.append(line)
            continue
        if raw.startswith((b"diff --git ", b"diff --cc ")):
            close_file()
            head.append(line)
            continue
        hunk = parse_hunk_header(raw) if raw.startswith(b"@@ ") and head else None
        if hunk is not None:
            close_hunk()
            mark = Fingerprint()
            mark.add(kept, cut)
            body = [line]
            old_left, new_left = hunk.old_count, hunk.new_count
            continue
        close_hunk()
        if head and not hunks:
            head.append(line)
            binary = binary or raw.startswith(b"Binary files ") or raw == b"GIT binary patch"
    close_file()
    return files


def _nl_lines(data: bytes) -> list[bytes]:
    """Lines ended by \n only (bytes.splitlines also ends one at \r)."""
    parts = data.split(b"\n")
    found = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        found.append(parts[-1])
    return found


def pick_patch(f: PatchFile, picked: Sequence[int]) -> bytes:
    """A patch of one file's hunks `picked` (indexes from 0, in git's order): its head and
    those hunks as git wrote them (git apply places each by its context)."""
    return f.head + b"".join(f.hunks[i][0] for i in sorted(set(picked)))


@dataclass
class _Open:
    """The file being read: its hunks so far and the one open."""

    change: FileChange
    hunks: list[Hunk] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    hunk: Hunk | None = None
    hunk_more: int = 0
    old_left: int = 0
    new_left: int = 0
    kept: int = 0
    more: int = 0
    binary: bool = False
    hasher: Fingerprint | None = None

    def close_hunk(self) -> None:
        if self.hunk is not None:
            found = self.hasher.digest() if self.hasher is not None else ""
            self.hunks.append(
                replace(self.hunk, lines=tuple(self.lines), more=self.hunk_more, fingerprint=found)
            )
        self.hunk, self.lines, self.hunk_more, self.hasher = None, [], 0, None

    def done(self) -> FileChange:
        self.close_hunk()
        return replace(
            self.change,
            hunks=tuple(self.hunks),
            more=self.more,
            read=True,
            binary=self.change.binary or self.binary,
        )


def read_patch(
    lines: Iterable[tuple[bytes, int]], files: Sequence[FileChange], budget: Budget
) -> Iterator[FileChange]:
    """Each file of `files` with its hunks, from git's patch of the same diff (`lines`: each
    line without its newline, and how many bytes of it were cut off). Sections pair with
    `files` in order (git writes both in one order). Lines past the budget are counted in
    `more`; once the total budget is spent the rest of the files come unread (`read` False)
    and no more of `lines` is taken, so the caller may stop git."""
    total = 0
    index = -1
    current: _Open | None = None
    for raw, cut in lines:
        if current is not None and (current.old_left > 0 or current.new_left > 0):
            first = raw[:1]
            if first == b" ":
                current.old_left -= 1
                current.new_left -= 1
            elif first == b"-":
                current.old_left -= 1
            elif first == b"+":
                current.new_left -= 1
            elif first != b"\\":  # the patch is not what its header said: stop the hunk
                current.old_left = current.new_left = 0
            if first in (b" ", b"-", b"+", b"\\"):
                if current.hasher is not None:
                    current.hasher.add(raw, cut)
                total = _keep(current, raw, cut, budget, total)
                continue
        if raw.startswith((b"diff --git ", b"diff --cc ")):
            if current is not None and raw == header(current.change):
                current.close_hunk()  # a second section of the file (a type change's)
                continue
            if current is not None:
                yield current.done()
            index += 1
            ahead = _matching(files, index, raw)
            for skipped in files[index:ahead]:  # files git wrote no section for
                yield replace(skipped, read=True)
            index = ahead
            if index >= len(files):
                return
            if budget.total_lines is not None and total >= budget.total_lines:
                yield from (replace(f, read=False) for f in files[index:])
                return
            current = _Open(files[index])
            continue
        if current is None:
            continue
        hunk = parse_hunk_header(raw) if raw.startswith(b"@@ ") else None
        if hunk is not None:
            current.close_hunk()
            current.hunk, current.old_left, current.new_left = hunk, hunk.old_count, hunk.new_count
            current.hasher = Fingerprint()
            current.hasher.add(raw, cut)
        elif raw.startswith(b"\\") and current.hunk is not None:
            if current.hasher is not None:
                current.hasher.add(raw, cut)
            total = _keep(current, raw, cut, budget, total)
        elif raw.startswith(b"Binary files ") or raw == b"GIT binary patch":
            current.binary = True
    if current is not None:
        yield current.done()
    yield from (replace(f, read=False) for f in files[index + 1 :])


def header(f: FileChange) -> bytes | None:
    r"""The first line of the file's section in git's patch, when its paths need no quoting
    (else None: git quotes them, and the section is taken by its order).

    >>> header(FileChange("b.py", "a.py", "renamed", 0, 0))
    b'diff --git a/a.py b/b.py'
    >>> header(FileChange("tab\there", None, "added", 1, 0)) is None
    True
    """
    old = f.old_path if f.old_path is not None else f.path
    if not (_plain(old) and _plain(f.path)):
        return None
    return f"diff --git a/{old} b/{f.path}".encode()


def _plain(path: str) -> bool:
    return path.isascii() and path.isprintable() and '"' not in path and "\\" not in path


def _matching(files: Sequence[FileChange], index: int, raw: bytes) -> int:
    """The file a section's first line names: the next one, unless that one's header differs
    and a later file's is this one (git wrote no section for those between)."""
    if index >= len(files):
        return index
    expected = header(files[index])
    if expected is None or expected == raw:
        return index
    for j in range(index + 1, len(files)):
        if header(files[j]) == raw:
            return j
    return index


def _keep(current: _Open, raw: bytes, cut: int, budget: Budget, total: int) -> int:
    full = budget.total_lines is not None and total >= budget.total_lines
    if full or (budget.file_lines is not None and current.kept >= budget.file_lines):
        current.more += 1
        current.hunk_more += 1
        return total
    text = raw.decode("utf-8", "replace")
    if cut:
        text += f" … ({cut} more bytes)"
    current.lines.append(text)
    current.kept += 1
    return total + 1


# ---- what a person sees -----------------------------------------------------------------------
_RESET, _BOLD, _RED, _GREEN, _CYAN, _DIM = (
    "\x1b[0m",
    "\x1b[1m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[36m",
    "\x1b[2m",
)


def _paint(text: str, colour: str, on: bool) -> str:
    return f"{colour}{text}{_RESET}" if on else text


def describe(d: Diff) -> str:
    """The first line of `roost diff`: what is diffed against what."""
    head = d.head[:12] if d.head else "no commit yet"
    if d.against == "HEAD":
        return (
            f"{d.agent} has no roost worktree: the uncommitted changes of its checkout "
            f"{shown_path(d.top)} against HEAD {d.base[:12]}"
        )
    branch = f" (branch {shown_path(d.branch)})" if d.branch else ""
    what = "the commit it branched from" if d.against == "base" else "the commit given"
    return (
        f"{d.agent}'s worktree {shown_path(d.top)}{branch} at {head}, against {d.base[:12]} "
        f"({what}): committed, staged, unstaged and untracked"
    )


def label(f: FileChange) -> str:
    name = shown_path(f.path)
    if f.old_path is not None:
        return f"{shown_path(f.old_path)} → {name}"
    return name


def status_word(f: FileChange) -> str:
    return "new, untracked" if f.status == UNTRACKED else f.status


def render_names(d: Diff) -> str:
    return "".join(f"{shown_path(f.path)}\n" for f in d.files)


def render_stat(d: Diff, colour: bool = False, width: int = 40) -> str:
    """git's --stat, read from the summary: one row per file, then the totals."""
    if not d.files:
        return "no changes\n"
    labels = [label(f) for f in d.files]
    wide = max(len(x) for x in labels)
    most = max(((f.added or 0) + (f.removed or 0) for f in d.files), default=0)
    rows = []
    for f, name in zip(d.files, labels, strict=True):
        note = f" ({status_word(f)})" if f.status in (UNTRACKED, "added", "deleted") else ""
        if f.binary:
            size = f"{f.size} bytes" if f.size is not None else "size unknown"
            rows.append(f" {name.ljust(wide)} | binary, {size}{note}")
            continue
        add, rem = f.added or 0, f.removed or 0
        scale = min(1.0, width / most) if most else 1.0
        plus, minus = round(add * scale), round(rem * scale)
        if add and not plus:
            plus = 1
        if rem and not minus:
            minus = 1
        bar = _paint("+" * plus, _GREEN, colour) + _paint("-" * minus, _RED, colour)
        rows.append(f" {name.ljust(wide)} | {add + rem:>5} {bar}{note}")
    adds = sum(f.added or 0 for f in d.files)
    rems = sum(f.removed or 0 for f in d.files)
    n = len(d.files)
    rows.append(
        f" {n} file{'s' if n != 1 else ''} changed, {adds} insertion{'s' if adds != 1 else ''}"
        f"(+), {rems} deletion{'s' if rems != 1 else ''}(-)"
    )
    return "\n".join(rows) + "\n"


def render_file(f: FileChange, agent: str, colour: bool = False) -> Iterator[str]:
    """One file of `roost diff`'s patch view, line by line (each ends with a newline); the
    contents' control characters shown as escapes, never sent to the terminal."""
    head = f"{status_word(f)}: {label(f)}"
    if f.binary:
        size = f"{f.size} bytes" if f.size is not None else "size unknown"
        yield _paint(f"{head} (binary, {size})", _BOLD, colour) + "\n"
        return
    counts = f" (+{f.added or 0} -{f.removed or 0})"
    yield _paint(head + counts, _BOLD, colour) + "\n"
    if not f.read:
        yield _paint(
            f"… not shown (the output's budget ran out): {more_cmd(agent, f)}", _DIM, colour
        )
        yield "\n"
        return
    for n, h in enumerate(f.hunks, 1):
        old = f"{h.old_start},{h.old_count}"
        new = f"{h.new_start},{h.new_count}"
        section = f" {shown(h.section)}" if h.section else ""
        number = _paint(f"  (hunk {n})", _DIM, colour)  # roost merge --hunks FILE:N
        yield _paint(f"@@ -{old} +{new} @@", _CYAN, colour) + section + number + "\n"
        for line in h.lines:
            text = shown(line)
            first = line[:1]
            if first == "+":
                text = _paint(text, _GREEN, colour)
            elif first == "-":
                text = _paint(text, _RED, colour)
            elif first == "\\":
                text = _paint(text, _DIM, colour)
            yield text + "\n"
    if f.more:
        yield _paint(f"… {f.more} more lines, {more_cmd(agent, f)}", _DIM, colour) + "\n"


def more_cmd(agent: str, f: FileChange) -> str:
    """The command that shows the rest of one file (its path quoted for a POSIX shell)."""
    return f"`roost diff {agent} --file {_sh_quote(shown_path(f.path))}`"


def _sh_quote(word: str) -> str:
    if word and re.fullmatch(r"[\w@%+=:,./-]+", word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def file_json(f: FileChange, hunks: bool = True) -> dict[str, object]:
    found: dict[str, object] = {
        "path": _text(f.path),
        "old_path": _text(f.old_path) if f.old_path is not None else None,
        "status": f.status,
        "added": f.added,
        "removed": f.removed,
        "binary": f.binary,
        "size": f.size,
    }
    if hunks:
        found["read"] = f.read
        found["more"] = f.more
        found["hunks"] = [
            {
                "id": f"{_text(f.path)}:{n}",  # roost merge NAME --hunks FILE:N[,N...]
                "fingerprint": h.fingerprint,
                "old_start": h.old_start,
                "old_count": h.old_count,
                "new_start": h.new_start,
                "new_count": h.new_count,
                "section": h.section,
                "lines": list(h.lines),
                "more": h.more,
            }
            for n, h in enumerate(f.hunks, 1)
        ]
    return found


def diff_json(d: Diff, files: Iterable[FileChange], hunks: bool = True) -> str:
    return json.dumps(
        {
            "agent": d.agent,
            "top": d.top,
            "base": d.base,
            "against": d.against,
            "head": d.head,
            "branch": d.branch,
            "files": [file_json(f, hunks) for f in files],
        }
    )


def _text(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# ---- comments ---------------------------------------------------------------------------------
BODY_LIMIT = 4000  # characters of one comment
CONTEXT = 3  # lines kept on each side of a comment's lines (its anchor)
MESSAGE_LIMIT = 16_000  # characters of one `review send` message; more go in the next send
QUOTED = 2  # lines of code around the commented ones a message quotes


def parse_where(text: str) -> tuple[str, int, int]:
    """`FILE:LINE` or `FILE:START-END` (the last colon splits: a file's name may hold one).

    >>> parse_where("src/a b.py:12")
    ('src/a b.py', 12, 12)
    >>> parse_where("x:y.py:3-5")
    ('x:y.py', 3, 5)
    >>> parse_where("a.py")
    Traceback (most recent call last):
    ...
    roost.core.errors.RoostError: 'a.py': give the place as FILE:LINE or FILE:START-END
    """
    path, sep, lines = text.rpartition(":")
    m = re.fullmatch(r"(\d{1,9})(?:-(\d{1,9}))?", lines)
    if not sep or not path or m is None:
        raise RoostError(
            f"{visible(text)!r}: give the place as FILE:LINE or FILE:START-END", code=2
        )
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) else start
    if start < 1 or end < start:
        raise RoostError(f"{visible(text)!r}: lines count from 1, START before END", code=2)
    return path, start, end


def check_body(body: str) -> str:
    text = body.strip()
    if not text:
        raise RoostError("a comment needs its TEXT", code=2)
    if len(text) > BODY_LIMIT:
        raise RoostError(f"a comment is at most {BODY_LIMIT} characters (got {len(text)})", code=2)
    return text


def in_diff(f: FileChange, start: int, end: int) -> str | None:
    """Why lines start..end of the file's new side may not be commented on, or None: they must
    lie within one hunk of the diff."""
    if f.status == "deleted":
        return f"{shown_path(f.path)} is deleted in the diff: no line of it to comment on"
    if f.binary:
        return f"{shown_path(f.path)} is a binary file: no lines to comment on"
    for h in f.hunks:
        if h.new_count and h.new_start <= start and end <= h.new_end:
            return None
    where = f"line {start}" if start == end else f"lines {start}-{end}"
    shown_ranges = ", ".join(
        f"{h.new_start}-{h.new_end}" if h.new_count > 1 else str(h.new_start)
        for h in f.hunks
        if h.new_count
    )
    return (
        f"{where} of {shown_path(f.path)} is not in the diff (its hunks show lines "
        f"{shown_ranges or 'none'})"
    )


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a comment's lines are: their numbers and text, and a few lines either side."""

    start: int
    end: int
    lines: tuple[str, ...]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def anchor_at(text: Sequence[str], start: int, end: int, context: int = CONTEXT) -> Anchor:
    return Anchor(
        start,
        end,
        tuple(text[start - 1 : end]),
        tuple(text[max(0, start - 1 - context) : start - 1]),
        tuple(text[end : end + context]),
    )


def relocate(text: Sequence[str], anchor: Anchor) -> tuple[int, int] | None:
    """Where the anchor's lines are now: at their place, else the place holding the same lines
    whose surroundings match best (then the nearest), at least one side of them (a common line,
    `}` or a blank, found elsewhere is no move); None when they are nowhere (changed).

    >>> a = anchor_at(["a", "b", "c"], 2, 2)
    >>> relocate(["a", "b", "c"], a), relocate(["x", "a", "b", "c"], a), relocate(["a", "B"], a)
    ((2, 2), (3, 3), None)
    >>> relocate(["q", "B", "r", "b", "s"], a) is None  # "b" elsewhere, among strangers
    True
    """
    n = len(anchor.lines)
    if n == 0:
        return None
    want = list(anchor.lines)
    if list(text[anchor.start - 1 : anchor.start - 1 + n]) == want:
        return anchor.start, anchor.start + n - 1
    best: tuple[int, int, int] | None = None
    for i, line in enumerate(text):
        if line != want[0] or list(text[i : i + n]) != want:
            continue
        before = tuple(text[max(0, i - len(anchor.before)) : i])
        after = tuple(text[i + n : i + n + len(anchor.after)])
        score = (before == anchor.before) + (after == anchor.after)
        key = (-score, abs(i + 1 - anchor.start), i)
        if best is None or key < best:
            best = key
    if best is None or (best[0] == 0 and (anchor.before or anchor.after)):
        return None
    return best[2] + 1, best[2] + n


OPEN, SENDING, SENT = "open", "sending", "sent"  # stored states
OUTDATED, ADDRESSED = "outdated", "addressed"  # states seen now


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment as stored: on lines start..end of `path` (relative to the agent's checkout)
    as they were at revision (`head`, `file_sha`); sent: where its lines were then."""

    id: int
    agent_id: str
    path: str
    anchor: Anchor
    body: str
    head: str | None
    file_sha: str
    created_at: str
    state: str = OPEN
    sent_at: str | None = None
    sent_head: str | None = None
    sent_sha: str | None = None
    sent: Anchor | None = None


@dataclass(frozen=True, slots=True)
class Seen:
    """A comment as it stands now: `state` one of open, sending, outdated, sent, addressed;
    `start`/`end` where its lines are now (None: nowhere, they changed)."""

    comment: Comment
    state: str
    start: int | None
    end: int | None

    @property
    def moved(self) -> bool:
        return self.start is not None and self.start != self.comment.anchor.start


def seen(c: Comment, text: Sequence[str] | None, sha: str | None) -> Seen:
    """A comment against the file as it is now (`text` its lines, `sha` its hash; None: gone).
    Not sent: open where its lines are (moved with them), outdated when they changed. Sent:
    addressed once the lines it was sent on changed, else still open ("sent")."""
    if c.state == SENT and c.sent is not None:
        if sha is not None and sha == c.sent_sha:
            return Seen(c, SENT, c.sent.start, c.sent.end)
        where = relocate(text, c.sent) if text is not None else None
        if where is None:
            return Seen(c, ADDRESSED, None, None)
        return Seen(c, SENT, *where)
    if text is None:
        return Seen(c, OUTDATED, None, None)
    where = (c.anchor.start, c.anchor.end) if sha == c.file_sha else relocate(text, c.anchor)
    if where is None:
        return Seen(c, OUTDATED, None, None)
    return Seen(c, SENDING if c.state == SENDING else OPEN, *where)


def lines_word(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def comment_row(s: Seen) -> str:
    """One row of `roost comment NAME --list`."""
    c = s.comment
    a = c.anchor
    if s.start is not None and s.end is not None:
        where = lines_word(s.start, s.end)
        if s.moved:
            where += f" (was {a.start})"
    else:
        where = lines_word(a.start, a.end) + " (changed since)"
    body = visible(c.body)
    return f"#{c.id} {s.state:<9} {shown_path(c.path)}:{where}  {body}"


def comment_json(s: Seen) -> dict[str, object]:
    c = s.comment
    return {
        "id": c.id,
        "path": _text(c.path),
        "start": c.anchor.start,
        "end": c.anchor.end,
        "now_start": s.start,
        "now_end": s.end,
        "state": s.state,
        "body": c.body,
        "lines": list(c.anchor.lines),
        "head": c.head,
        "file_sha": c.file_sha,
        "created_at": c.created_at,
        "sent_at": c.sent_at,
        "sent_head": c.sent_head,
    }


def to_send(found: Sequence[Seen]) -> list[Seen]:
    """The comments a `review send` carries: every one not sent yet (an outdated one too, with
    the lines it was made on), and one whose send was never confirmed."""
    return [s for s in found if s.comment.state in (OPEN, SENDING)]


def _quote(s: Seen, text: Sequence[str] | None) -> list[str]:
    c = s.comment
    if s.start is not None and s.end is not None and text is not None:
        first = max(1, s.start - QUOTED)
        last = min(len(text), s.end + QUOTED)
        numbered = [(n, text[n - 1]) for n in range(first, last + 1)]
        lo, hi = s.start, s.end
        note = ""
    else:  # outdated: the lines as they were when the comment was made
        a = c.anchor
        numbered = list(enumerate((*a.before[-QUOTED:], *a.lines, *a.after[:QUOTED]), 0))
        skip = len(a.before[-QUOTED:])
        numbered = [(a.start - skip + i, line) for i, line in numbered]
        lo, hi = a.start, a.end
        note = " (outdated: these lines have changed since; as they were then)"
    width = len(str(numbered[-1][0])) if numbered else 1
    rows = [
        f"   {'>' if lo <= n <= hi else ' '} {n:>{width}} | {visible(line)}" for n, line in numbered
    ]
    return [note, *rows]


def message(
    items: Sequence[tuple[Seen, Sequence[str] | None]], limit: int = MESSAGE_LIMIT
) -> tuple[str, list[int]]:
    """The one message `roost review send` delivers: each comment's file, line(s), the code
    around them (`>` marks the commented lines) and its text, numbered, as many as fit in
    `limit` characters (at least one, cut to fit); returns it and the ids it carries. The rest
    wait for the next send, and the message says how many."""
    head = (
        "Review comments on your changes (from roost). For each: the file, the line(s), the "
        "code around them now (> marks the commented lines) and the comment. Please address "
        "each one."
    )
    parts: list[str] = []
    ids: list[int] = []
    size = len(head) + 200
    for n, (s, text) in enumerate(items, 1):
        c = s.comment
        start = s.start if s.start is not None else c.anchor.start
        end = s.end if s.end is not None else c.anchor.end
        note, *rows = _quote(s, text)
        body = "\n".join(f"   {line}" for line in visible_lines(c.body))
        part = f"{n}. {shown_path(c.path)}, {lines_word(start, end)}{note}:\n" + "\n".join(rows)
        part += f"\n   Comment:\n{body}"
        if size + len(part) + 2 > limit:
            if not parts:  # one alone too big: cut to fit
                part = part[: max(0, limit - size - 40)] + "\n   … (cut to fit one message)"
            else:
                break
        parts.append(part)
        ids.append(c.id)
        size += len(part) + 2
    left = len(items) - len(ids)
    tail = (
        f"\n\n({left} more comment{'s' if left != 1 else ''} follow in the next message.)"
        if left
        else ""
    )
    return head + "\n\n" + "\n\n".join(parts) + tail, ids


def visible_lines(text: str) -> list[str]:
    return [visible(line) for line in text.splitlines()] or [""]


def comment_made(name: str, made: Comment) -> str:
    """What keeping a comment says (`roost comment`, the TUI)."""
    a = made.anchor
    return (
        f"comment #{made.id} on {shown_path(made.path)}, "
        f"{lines_word(a.start, a.end)}; send it: roost review send {name}"
    )


def sent_line(name: str, delivered: bool, how: str, sent: int, left: int) -> str:
    """What a review send says (`roost review send`, the TUI); an undelivered one, why."""
    if not delivered:
        return present.not_delivered(name, how)
    line = f"sent {sent} comment{'s' if sent != 1 else ''} to {name} ({how})"
    if left:
        line += f"; {left} left for the next send: roost review send {name}"
    return line
