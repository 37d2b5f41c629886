"""Issue 38: the merge room's pure rules, table-driven: git diff -U0's hunk headers read into
line ranges, where two agents' ranges meet, git merge-tree's output, and the one line a merge is
refused with."""

from __future__ import annotations

import pytest

from roost.merge import rules
from roost.merge.rules import Facts


def diff(path: str, *headers: str, new: bool = False) -> str:
    old_side = "/dev/null" if new else f"a/{path}"
    lines = [f"diff --git a/{path} b/{path}", f"--- {old_side}", f"+++ b/{path}"]
    for h in headers:
        lines += [h, "-old", "+new"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(diff("f", "@@ -3,2 +3,2 @@"), {"f": ((3, 4),)}, id="a-changed-range"),
        pytest.param(diff("f", "@@ -7 +7 @@ def x():"), {"f": ((7, 7),)}, id="one-line-no-count"),
        pytest.param(diff("f", "@@ -4,0 +5,2 @@"), {"f": ((4, 5),)}, id="added-between-4-and-5"),
        pytest.param(diff("f", "@@ -9,3 +8,0 @@"), {"f": ((9, 11),)}, id="deleted-lines"),
        pytest.param(
            diff("f", "@@ -20 +20 @@", "@@ -1,2 +1 @@"),
            {"f": ((1, 2), (20, 20))},
            id="hunks-sorted",
        ),
        pytest.param(diff("n", "@@ -0,0 +1,3 @@", new=True), {"n": ((0, 1),)}, id="new-file"),
        pytest.param(
            diff("a", "@@ -1 +1 @@") + diff("b", "@@ -5 +5 @@"),
            {"a": ((1, 1),), "b": ((5, 5),)},
            id="two-files",
        ),
        pytest.param(
            'diff --git "a/sp ace\\303\\251" "b/sp ace\\303\\251"\n--- "a/sp ace\\303\\251"\n'
            '+++ "b/sp ace\\303\\251"\n@@ -2 +2 @@\n-x\n+y\n',
            {"sp aceé": ((2, 2),)},
            id="quoted-path",
        ),
        pytest.param(
            "diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n",
            {"img.png": ((1, 0),)},
            id="binary-is-the-whole-file",
        ),
        pytest.param(
            "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
            {"x": ((1, 0),)},
            id="mode-only-is-the-whole-file",
        ),
        pytest.param("", {}, id="no-change"),
        pytest.param(
            "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -2 +2 @@\n"
            "--- a comment\n+++ a sum\n@@ -9,0 +10 @@\n+x\n",
            {"q.sql": ((2, 2), (9, 10))},
            id="hunk-lines-that-look-like-headers",
        ),
        pytest.param(
            diff("f", "@@ -1 +1 @@") + "@@ garbage @@\n", {"f": ((1, 1),)}, id="bad-header-skipped"
        ),
    ],
)
def test_hunk_headers_become_line_ranges(text: str, expected: dict[str, object]) -> None:
    assert rules.hunks(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param({"f": ((1, 3),)}, {"f": ((3, 5),)}, {"f": ((3, 3),)}, id="share-a-line"),
        pytest.param({"f": ((1, 2),)}, {"f": ((3, 4),)}, {}, id="adjacent-ranges-apart"),
        pytest.param({"f": ((4, 5),)}, {"f": ((5, 5),)}, {"f": ((5, 5),)}, id="insert-meets-edit"),
        pytest.param({"f": ((1, 9),)}, {"g": ((1, 9),)}, {}, id="other-files"),
        pytest.param({"f": ((1, 0),)}, {"f": ((7, 8),)}, {"f": ((7, 8),)}, id="whole-file-a"),
        pytest.param({"f": ((2, 2),)}, {"f": ((1, 0),)}, {"f": ((2, 2),)}, id="whole-file-b"),
        pytest.param(
            {"f": ((1, 2), (10, 20))},
            {"f": ((2, 3), (15, 15), (30, 31))},
            {"f": ((2, 2), (15, 15))},
            id="several",
        ),
        pytest.param({}, {"f": ((1, 1),)}, {}, id="one-changed-nothing"),
    ],
)
def test_overlap_of_two_agents_ranges(
    a: rules.Ranges, b: rules.Ranges, expected: dict[str, object]
) -> None:
    assert rules.overlaps(a, b) == expected
    assert rules.overlaps(b, a) == expected  # whichever agent's turn ended


@pytest.mark.parametrize(
    ("out", "code", "expected"),
    [
        pytest.param("4b825dc\0", 0, rules.MergeTree("4b825dc"), id="clean"),
        pytest.param(
            "abc\0app.py\0src/x y.py\0\0001\0app.py\0Auto-merging\0Auto-merging app.py\n\0",
            1,
            rules.MergeTree("abc", ("app.py", "src/x y.py")),
            id="conflicts",
        ),
        pytest.param("abc\0a\0a\0\0", 1, rules.MergeTree("abc", ("a",)), id="a-file-named-once"),
        pytest.param("fatal: bad revision\n", 128, rules.MergeTree(None), id="git-failed"),
    ],
)
def test_merge_tree_output(out: str, code: int, expected: rules.MergeTree) -> None:
    found = rules.merge_tree(out, code)
    assert found == expected
    assert found.clean == (code == 0)


OK = Facts("api", branch="roost/api", target="main")


@pytest.mark.parametrize(
    ("facts", "words"),
    [
        pytest.param(OK, None, id="go-ahead"),
        pytest.param(Facts("api", has_worktree=False), "api has no worktree", id="no-worktree"),
        pytest.param(Facts("api", working=True), "api is mid-turn", id="mid-turn"),
        pytest.param(
            Facts("api", branch="roost/api", branch_exists=False),
            "api's branch roost/api was deleted",
            id="branch-deleted",
        ),
        pytest.param(
            Facts("api", branch="roost/api", target=None), "detached HEAD", id="detached-main"
        ),
        pytest.param(
            Facts("api", branch="b", target="rel", target_exists=False),
            "branch rel does not exist",
            id="no-target",
        ),
        pytest.param(
            Facts("api", branch="b", target="rel", into_main=False, checked_out_elsewhere="/w/x"),
            "branch rel is checked out in the worktree /w/x",
            id="target-checked-out-elsewhere",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", main_busy="rebase"),
            "a rebase is in progress in the main checkout",
            id="main-busy",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", main_dirty=("a", "b")),
            "the main checkout has uncommitted changes (a, b)",
            id="main-dirty",
        ),
        pytest.param(
            Facts("api", branch="b", target="rel", into_main=False, main_dirty=("a",)),
            None,
            id="dirty-main-no-matter-for-another-branch",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", ahead=0),
            "nothing to merge: every commit of b is in main already",
            id="nothing-to-merge",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", mode="rebase", merges_in_range=1),
            "--rebase replays plain commits only",
            id="rebase-of-merges",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", conflicts=tuple("abcdefg")),
            "would conflict in a, b, c, d, e and 2 more",
            id="conflicts-named",
        ),
        pytest.param(
            Facts("api", branch="b", target="main", mode="files", missing_files=("x",)),
            "--files: x in neither b nor main",
            id="files-missing",
        ),
        pytest.param(
            Facts("api", working=True, branch_exists=False, main_dirty=("a",)),
            "api is mid-turn",
            id="first-reason-only",
        ),
    ],
)
def test_refusal_reasons(facts: Facts, words: str | None) -> None:
    said = rules.refusal(facts)
    if words is None:
        assert said is None
    else:
        assert said is not None and words in said and "\n" not in said


@pytest.mark.parametrize(
    ("ranges", "conflicts", "expected"),
    [
        pytest.param(
            {"a": {"f": ((1, 3),)}, "b": {"f": ((3, 3),)}},
            {},
            [("a", "b", {"f": ((3, 3),)}, ())],
            id="lines",
        ),
        pytest.param(
            {"a": {"f": ((1, 3),)}, "b": {"f": ((5, 6),)}},
            {"b": ["g"]},
            [("a", "b", {}, ("g",))],
            id="predicted-conflict-only",
        ),
        pytest.param({"a": {"f": ((1, 3),)}, "b": {"f": ((5, 6),)}}, {"b": []}, [], id="apart"),
        pytest.param(
            {"a": {"f": ((1, 1),)}, "0": {"f": ((1, 1),)}},
            {},
            [("0", "a", {"f": ((1, 1),)}, ())],
            id="pair-key-sorted",
        ),
    ],
)
def test_collisions_of_one_agent(
    ranges: dict[str, rules.Ranges],
    conflicts: dict[str, list[str]],
    expected: list[tuple[object, ...]],
) -> None:
    found = rules.collisions("a", ranges, conflicts)
    assert [(c.a, c.b, dict(c.lines), c.conflicts) for c in found] == expected


def test_words_hold_no_control_characters() -> None:
    said = rules.base_moved("main\x1b[2J", "abc", "api\r\x07", "/r")
    assert said.isprintable() and said.startswith("[roost] main[2J moved to abc")
