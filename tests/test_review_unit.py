"""Issue 38 part 1, the pure half (review/rules.py): git's summary and patch read into typed
records within a budget, what a person sees of them (control characters escaped), where a
comment's lines are now, and the one message a review send delivers. Table-driven, no git."""

from __future__ import annotations

import doctest
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from roost.core.errors import RoostError
from roost.review import rules
from roost.review.rules import Anchor, Budget, Comment, FileChange, Hunk
from roost.store import review as reviewdb
from roost.store.db import Store
from roost.store.schema import MIGRATIONS, SCHEMA_VERSION, apply

Z40, A40, B40 = "0" * 40, "a" * 40, "b" * 40


def test_the_rules_doctests_hold() -> None:
    found = doctest.testmod(rules)
    assert found.attempted >= 8 and found.failed == 0


def raw(status: str, *paths: str, old: str = A40, new: str = B40) -> bytes:
    mode_old = "000000" if status == "A" else "100644"
    mode_new = "000000" if status == "D" else "100644"
    head = f":{mode_old} {mode_new} {old} {new} {status}".encode()
    return b"\0".join([head, *(p.encode("utf-8", "surrogateescape") for p in paths)]) + b"\0"


def numstat(added: str, removed: str, *paths: str) -> bytes:
    if len(paths) == 2:
        return (
            f"{added}\t{removed}\t".encode() + b"\0" + b"\0".join(p.encode() for p in paths) + b"\0"
        )
    return f"{added}\t{removed}\t{paths[0]}".encode("utf-8", "surrogateescape") + b"\0"


@pytest.mark.parametrize(
    ("data", "untracked", "want"),
    [
        pytest.param(
            raw("M", "a.py") + numstat("3", "1", "a.py"),
            (),
            [("a.py", None, "modified", 3, 1, False)],
            id="modified",
        ),
        pytest.param(
            raw("R087", "old name", "new\nname") + numstat("1", "1", "old name", "new\nname"),
            (),
            [("new\nname", "old name", "renamed", 1, 1, False)],
            id="renamed-newline",
        ),
        pytest.param(
            raw("A", "img.png", old=Z40) + numstat("-", "-", "img.png"),
            ("img.png",),
            [("img.png", None, "untracked", None, None, True)],
            id="untracked-binary",
        ),
        pytest.param(
            raw("D", "gone.txt", new=Z40) + numstat("0", "4", "gone.txt"),
            (),
            [("gone.txt", None, "deleted", 0, 4, False)],
            id="deleted",
        ),
        pytest.param(
            raw("M", "x")
            + raw("A", "#(y)", old=Z40)
            + numstat("1", "0", "x")
            + numstat("2", "0", "#(y)"),
            (),
            [("x", None, "modified", 1, 0, False), ("#(y)", None, "added", 2, 0, False)],
            id="two-files-in-order",
        ),
        pytest.param(
            raw("M", "caf\udce9") + numstat("1", "1", "caf\udce9"),
            (),
            [("caf\udce9", None, "modified", 1, 1, False)],
            id="no-utf8-kept-exactly",
        ),
        pytest.param(b"", (), [], id="nothing"),
    ],
)
def test_the_summary_is_read_into_file_changes(
    data: bytes, untracked: tuple[str, ...], want: list[tuple[object, ...]]
) -> None:
    found = rules.parse_summary(data, frozenset(untracked))
    assert [(f.path, f.old_path, f.status, f.added, f.removed, f.binary) for f in found] == want


def test_a_summary_cut_short_is_refused() -> None:
    with pytest.raises(RoostError, match="ended inside a record"):
        rules.parse_summary(b":100644 100644 " + A40.encode() + b" " + B40.encode() + b" R100\0a")


def change(path: str, added: int = 1, removed: int = 0) -> FileChange:
    return FileChange(path, None, "modified", added, removed)


def lines(text: str) -> Iterator[tuple[bytes, int]]:
    return ((line.encode(), 0) for line in text.split("\n") if line != "")


PATCH = """diff --git a/a b/a
index 1..2 100644
--- a/a
+++ b/a
@@ -1,3 +1,3 @@ def f():
 one
--- two
+++ two
 three
\\ No newline at end of file
diff --git a/b b/b
new file mode 100644
--- /dev/null
+++ b/b
@@ -0,0 +1,4 @@
+1
+2
+3
+4
diff --git a/c.bin b/c.bin
Binary files a/c.bin and b/c.bin differ
"""


def test_a_patch_is_read_into_hunks_with_content_lines_that_look_like_headers() -> None:
    files = [change("a", 1, 1), change("b", 4), change("c.bin", 0, 0)]
    a, b, c = rules.read_patch(lines(PATCH), files, Budget(None, None))
    split = rules.split_patch(PATCH.encode())
    assert a.hunks == (
        Hunk(
            1,
            3,
            1,
            3,
            "def f():",
            (" one", "--- two", "+++ two", " three", "\\ No newline at end of file"),
            fingerprint=split[0].hunks[0][1],
        ),
    )
    assert b.hunks[0].lines == ("+1", "+2", "+3", "+4") and b.read and not b.more
    assert c.binary and c.hunks == () and c.read
    # the same hunks cut from the patch's bytes, for a merge of some of them
    assert [len(f.hunks) for f in split] == [1, 1, 0] and split[2].binary
    assert split[1].head.startswith(b"diff --git a/b b/b\nnew file mode")
    assert split[1].hunks[0][0] == b"@@ -0,0 +1,4 @@\n+1\n+2\n+3\n+4\n"
    assert b.hunks[0].fingerprint == split[1].hunks[0][1] != a.hunks[0].fingerprint


def test_a_hunks_fingerprint_does_not_depend_on_the_budget_but_on_every_line() -> None:
    files = [change("a", 1, 1), change("b", 4), change("c.bin", 0, 0)]
    whole = list(rules.read_patch(lines(PATCH), files, Budget(None, None)))
    cut = list(rules.read_patch(lines(PATCH), files, Budget(1, None)))
    assert [h.fingerprint for f in whole for h in f.hunks] == [
        h.fingerprint for f in cut for h in f.hunks
    ]
    changed = PATCH.replace("+4\n", "+5\n")
    other = list(rules.read_patch(lines(changed), files, Budget(1, None)))
    assert other[1].hunks[0].fingerprint != whole[1].hunks[0].fingerprint
    assert other[0].hunks[0].fingerprint == whole[0].hunks[0].fingerprint


@pytest.mark.parametrize(
    ("budget", "kept", "more", "read"),
    [
        pytest.param(Budget(None, None), [5, 4, 0], [0, 0, 0], [True, True, True], id="all"),
        pytest.param(Budget(2, None), [2, 2, 0], [3, 2, 0], [True, True, True], id="per-file"),
        pytest.param(Budget(None, 5), [5, 0, 0], [0, 0, 0], [True, False, False], id="total"),
        pytest.param(Budget(0, None), [0, 0, 0], [5, 4, 0], [True, True, True], id="ranges-only"),
    ],
)
def test_the_budget_keeps_so_many_lines_and_counts_the_rest(
    budget: Budget, kept: list[int], more: list[int], read: list[bool]
) -> None:
    files = [change("a", 1, 1), change("b", 4), change("c.bin", 0, 0)]
    found = list(rules.read_patch(lines(PATCH), files, budget))
    assert [sum(len(h.lines) for h in f.hunks) for f in found] == kept
    assert [f.more for f in found] == more
    assert [f.read for f in found] == read
    if budget.file_lines == 0:  # the hunks' places are kept without their lines
        assert [(h.new_start, h.new_end) for h in found[1].hunks] == [(1, 4)]


def test_a_line_cut_at_its_byte_budget_says_how_much_was_left() -> None:
    stream = iter([(b"diff --git a/a b/a", 0), (b"@@ -0,0 +1 @@", 0), (b"+" + b"x" * 10, 12345)])
    (f,) = rules.read_patch(stream, [change("a")], Budget())
    assert f.hunks[0].lines == ("+" + "x" * 10 + " … (12345 more bytes)",)


def test_files_the_patch_never_reached_come_unread() -> None:
    (a, b) = rules.read_patch(iter([]), [change("a"), change("b")], Budget())
    assert not a.read and not b.read


def test_a_file_shows_control_characters_as_escapes_and_colours_only_when_asked() -> None:
    f = FileChange(
        "evil\x1b]52;c;x\x07.txt",
        None,
        rules.UNTRACKED,
        1,
        0,
        hunks=(Hunk(0, 0, 1, 1, "", ("+\x1b[2Jboom\r",)),),
        read=True,
    )
    plain = "".join(rules.render_file(f, "ag"))
    assert "\x1b" not in plain and "\r" not in plain
    assert "\\x1b[2Jboom\\x0d" in plain and "evil\\x1b]52;c;x\\x07.txt" in plain
    painted = "".join(rules.render_file(f, "ag", colour=True))
    assert "\x1b[32m+\\x1b[2Jboom\\x0d\x1b[0m" in painted
    assert "new, untracked" in plain


def test_the_rest_of_a_long_file_is_a_command_with_the_path_quoted() -> None:
    f = FileChange("it's here.py", None, "modified", 900, 0, more=400, read=True)
    text = "".join(rules.render_file(f, "ag"))
    assert "… 400 more lines, `roost diff ag --file 'it'\"'\"'s here.py'`" in text


def test_the_stat_names_binary_files_with_their_size() -> None:
    d = rules.Diff(
        "ag",
        "/w",
        A40,
        "base",
        B40,
        "roost/ag",
        (
            FileChange("x.png", None, "added", None, None, binary=True, size=2048),
            change("a.py", 3, 1),
        ),
    )
    text = rules.render_stat(d)
    assert " x.png | binary, 2048 bytes (added)" in text
    assert " 2 files changed, 3 insertions(+), 1 deletion(-)" in text


# ---- comments ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("a.py:3", ("a.py", 3, 3), id="line"),
        pytest.param("dir/a b.py:3-9", ("dir/a b.py", 3, 9), id="range"),
        pytest.param("C:\\x:y.py:7", ("C:\\x:y.py", 7, 7), id="colons-in-name"),
    ],
)
def test_a_place_is_file_and_lines(text: str, want: tuple[str, int, int]) -> None:
    assert rules.parse_where(text) == want


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param("a.py", "FILE:LINE", id="no-line"),
        pytest.param(":3", "FILE:LINE", id="no-file"),
        pytest.param("a.py:0", "count from 1", id="zero"),
        pytest.param("a.py:9-3", "START before END", id="backwards"),
        pytest.param("a.py:x", "FILE:LINE", id="word"),
    ],
)
def test_a_bad_place_is_refused(text: str, why: str) -> None:
    with pytest.raises(RoostError, match=why) as caught:
        rules.parse_where(text)
    assert caught.value.code == 2


HUNKED = FileChange(
    "a.py", None, "modified", 2, 0, hunks=(Hunk(1, 3, 1, 4, ""), Hunk(40, 3, 41, 5, "")), read=True
)


@pytest.mark.parametrize(
    ("f", "start", "end", "why"),
    [
        pytest.param(HUNKED, 2, 2, None, id="in-first"),
        pytest.param(HUNKED, 41, 45, None, id="whole-second"),
        pytest.param(HUNKED, 10, 10, "line 10 of a.py is not in the diff", id="between"),
        pytest.param(HUNKED, 3, 42, "lines 3-42", id="across-two"),
        pytest.param(
            FileChange("d", None, "deleted", 0, 3), 1, 1, "deleted in the diff", id="deleted"
        ),
        pytest.param(
            FileChange("b", None, "added", None, None, binary=True), 1, 1, "binary", id="binary"
        ),
    ],
)
def test_only_lines_in_the_diff_take_a_comment(
    f: FileChange, start: int, end: int, why: str | None
) -> None:
    found = rules.in_diff(f, start, end)
    assert (found is None) if why is None else (found is not None and why in found)


TEXT = ["import os", "", "def f():", "    return 1", "", "def g():", "    return 2"]
ANCHOR = rules.anchor_at(TEXT, 4, 4)


def made(
    state: str = rules.OPEN, sent: Anchor | None = None, sent_sha: str | None = None
) -> Comment:
    return Comment(
        1, "id", "a.py", ANCHOR, "why 1?", "h", "sha0", "t", state, None, None, sent_sha, sent
    )


@pytest.mark.parametrize(
    ("comment", "text", "sha", "want"),
    [
        pytest.param(made(), TEXT, "sha0", (rules.OPEN, 4, 4), id="unchanged"),
        pytest.param(made(), ["# head", *TEXT], "sha1", (rules.OPEN, 5, 5), id="moved-down"),
        pytest.param(
            made(),
            [*TEXT[:3], "    return 10", *TEXT[4:]],
            "sha1",
            (rules.OUTDATED, None, None),
            id="line-changed",
        ),
        pytest.param(made(), None, None, (rules.OUTDATED, None, None), id="file-gone"),
        pytest.param(
            Comment(2, "id", "a.py", rules.anchor_at(TEXT, 2, 2), "blank?", "h", "s0", "t"),
            [TEXT[0], *TEXT[2:]],
            "sha1",
            (rules.OUTDATED, None, None),
            id="a-common-line-elsewhere-is-no-move",
        ),
        pytest.param(
            made(rules.SENDING), TEXT, "sha0", (rules.SENDING, 4, 4), id="send-unconfirmed"
        ),
        pytest.param(
            made(rules.SENT, ANCHOR, "sha0"), TEXT, "sha0", (rules.SENT, 4, 4), id="sent-same"
        ),
        pytest.param(
            made(rules.SENT, ANCHOR, "sha0"),
            ["x", *TEXT],
            "sha2",
            (rules.SENT, 5, 5),
            id="sent-moved-still-open",
        ),
        pytest.param(
            made(rules.SENT, ANCHOR, "sha0"),
            [*TEXT[:3], "    return 10", *TEXT[4:]],
            "sha2",
            (rules.ADDRESSED, None, None),
            id="sent-lines-changed",
        ),
        pytest.param(
            made(rules.SENT, ANCHOR, "sha0"),
            None,
            None,
            (rules.ADDRESSED, None, None),
            id="sent-file-gone",
        ),
    ],
)
def test_a_comment_follows_its_lines_and_says_when_they_changed(
    comment: Comment, text: list[str] | None, sha: str | None, want: tuple[object, ...]
) -> None:
    s = rules.seen(comment, text, sha)
    assert (s.state, s.start, s.end) == want


def test_of_two_places_with_the_same_text_the_one_with_its_surroundings_wins() -> None:
    text = ["a", "x = 1", "b", "c", "y", "x = 1", "z"]
    anchor = rules.anchor_at(["a", "b", "y", "x = 1", "z"], 4, 4)  # line 4 is "c" now
    assert rules.relocate(text, anchor) == (6, 6)


def seen_at(i: int, body: str, path: str = "a.py") -> rules.Seen:
    c = Comment(i, "id", path, ANCHOR, body, "h", "sha0", "t")
    return rules.Seen(c, rules.OPEN, 4, 4)


def test_the_message_quotes_file_lines_code_and_comment() -> None:
    text, ids = rules.message([(seen_at(1, "why 1?\nuse \x1b[31m"), TEXT)])
    assert ids == [1]
    assert "1. a.py, line 4:" in text
    assert "   > 4 |     return 1" in text and "     3 | def f():" in text
    assert "   Comment:\n   why 1?\n   use \\x1b[31m" in text
    assert "\x1b" not in text


def test_an_outdated_comment_is_sent_with_the_lines_it_was_made_on() -> None:
    c = Comment(2, "id", "a.py", ANCHOR, "check this", "h", "sha0", "t")
    text, _ = rules.message([(rules.Seen(c, rules.OUTDATED, None, None), ["other"])])
    assert "line 4 (outdated: these lines have changed since; as they were then):" in text
    assert "   > 4 |     return 1" in text


def test_comments_past_the_message_limit_wait_for_the_next_send() -> None:
    items = [(seen_at(i, "w" * 3000), TEXT) for i in range(1, 11)]
    text, ids = rules.message(items, limit=rules.MESSAGE_LIMIT)
    assert len(text) <= rules.MESSAGE_LIMIT
    assert ids == list(range(1, len(ids) + 1)) and 2 <= len(ids) < 10
    assert f"({10 - len(ids)} more comments follow in the next message.)" in text


def test_one_comment_larger_than_a_message_is_cut_to_fit() -> None:
    text, ids = rules.message([(seen_at(1, "w" * 3000), TEXT)], limit=1000)
    assert ids == [1] and len(text) <= 1000 and "cut to fit one message" in text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param("  ", "needs its TEXT", id="empty"),
        pytest.param("x" * (rules.BODY_LIMIT + 1), "at most 4000", id="too-long"),
    ],
)
def test_a_bad_comment_body_is_refused(body: str, why: str) -> None:
    with pytest.raises(RoostError, match=why):
        rules.check_body(body)


def test_the_migration_adds_the_comments_table_to_an_older_store(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db")
    apply(conn, 0, SCHEMA_VERSION - 1)
    conn.commit()
    conn.close()
    store = Store.open(tmp_path / "old.db")
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        agent_id = str(uuid.uuid4())
        with store.write() as c:
            c.execute(
                "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
                "VALUES (?, 'a', 'command', '/w', 'a', '2031-01-01T00:00:00+00:00', 'stopped')",
                (agent_id,),
            )
            reviewdb.insert(c, agent_id, "x.py", Anchor(1, 1, ("x",)), "b", None, "s", "t")
        assert [r.path for r in reviewdb.of_agent(store.conn, agent_id)] == ["x.py"]
        with store.write() as c:  # the agent goes, its comments with it
            c.execute("DELETE FROM agents WHERE id = ?", (agent_id,))
        assert reviewdb.of_agent(store.conn, agent_id) == []
    finally:
        store.close()


TYPE_CHANGE = """diff --git a/link b/link
deleted file mode 100644
--- a/link
+++ /dev/null
@@ -1 +0,0 @@
-was a file
diff --git a/link b/link
new file mode 120000
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+target
\\ No newline at end of file
diff --git a/z b/z
@@ -1 +1 @@
-a
+b
"""


def test_sections_pair_with_files_by_their_header() -> None:
    files = [
        FileChange("link", None, "typechange", 1, 1),
        FileChange("u", None, "unmerged", None, None),  # git writes no section for it
        change("z", 1, 1),
    ]
    link, unmerged, z = rules.read_patch(lines(TYPE_CHANGE), files, Budget())
    assert [h.lines for h in link.hunks] == [
        ("-was a file",),
        ("+target", "\\ No newline at end of file"),
    ]
    assert unmerged.read and unmerged.hunks == ()
    assert z.hunks[0].lines == ("-a", "+b")


def test_the_summary_asks_git_for_records_only_never_the_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-U3 implies --patch: git would write every hunk on top of --raw --numstat (5x the
    bytes on bench_diff's repository), which the summary reads past and never needs."""
    import subprocess

    from roost.system import gitdiff

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        ).stdout

    run("init", "-q")
    (tmp_path / "a.py").write_text("one\ntwo\n")
    run("add", "a.py")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    base = run("rev-parse", "HEAD").strip()
    (tmp_path / "a.py").write_text("one\nTWO\n")
    (tmp_path / "new.py").write_text("new\n")
    tracked, extra, new = gitdiff.summary(str(tmp_path), base)
    assert new == ["new.py"]
    for data in (tracked, extra):
        assert b"@@" not in data and b"diff --git" not in data, data
    found = rules.parse_summary(tracked) + rules.parse_summary(extra, frozenset(new))
    assert [(f.path, f.added, f.removed) for f in found] == [("a.py", 1, 1), ("new.py", 1, 0)]
