"""Issue 22, the pure decisions: may a worktree go, given what git said (worktrees/rules.py)."""

from __future__ import annotations

import pytest

from roost.core.errors import RoostError
from roost.worktrees import rules as wt

KEEP = "roost rm a --keep-worktree"


@pytest.mark.parametrize(
    "facts, codes",
    [
        (wt.Facts("/w/a", "roost/a"), []),
        (wt.Facts("/w/a", "roost/a", exists=False, changed=("x",)), []),  # gone: nothing to lose
        (wt.Facts("/w/a", "roost/a", changed=("app.py",)), ["dirty"]),
        (wt.Facts("/w/a", "roost/a", untracked=("n.txt",)), ["untracked"]),
        (wt.Facts("/w/a", "roost/a", unpushed=2), ["unpushed"]),
        (wt.Facts("/w/a", "roost/a", unpushed=2, merged=True), []),  # squash-merged
        (wt.Facts("/w/a", "roost/a", stashes=("stash@{0}",)), ["stash"]),
        (wt.Facts("/w/a", "roost/a", in_progress="rebase"), ["rebase"]),
        (wt.Facts("/w/a", "roost/a", in_progress="merge"), ["merge"]),
        (wt.Facts("/w/a", "roost/a", processes=((7, "vim"),)), ["process"]),
        (
            wt.Facts("/w/a", "roost/a", changed=("f",), unpushed=1, processes=((7, "sh"),)),
            ["dirty", "unpushed", "process"],
        ),
    ],
)
def test_verdict_names_every_reason_to_keep(facts: wt.Facts, codes: list[str]) -> None:
    found = wt.verdict(facts, KEEP)
    assert [k.code for k in found.keep] == codes
    assert found.removable == (not codes)
    for k in found.keep:  # each says what the user can do, with the way to keep it
        assert KEEP in k.todo


def test_refusal_is_one_line_naming_each_reason() -> None:
    facts = wt.Facts("/w/a", "roost/a", untracked=tuple(f"f{i}" for i in range(5)), unpushed=1)
    line = wt.refusal("a", "/w/a", wt.verdict(facts, KEEP))
    assert "\n" not in line
    assert "untracked files f0, f1, f2 and 2 more" in line
    assert "1 commit of roost/a on no remote" in line


@pytest.mark.parametrize("word", ["-b", "--upload-pack=x", "", "a\nb"])
def test_branch_words_that_could_be_options_are_refused(word: str) -> None:
    with pytest.raises(RoostError) as caught:
        wt.check_branch_word(word)
    assert caught.value.code == 2


def test_lock_reason_round_trip() -> None:
    reason = wt.lock_reason("api", "1234-abcd")
    assert reason.startswith(wt.LOCK_PREFIX) and "roost rm api" in reason
    assert wt.agent_of_reason(reason) == "1234-abcd"
    assert wt.agent_of_reason("locked by hand (me)") is None


def test_paths_stay_stable_and_outside() -> None:
    one = wt.worktree_path("/r", "/src/app", "k1", "a")
    assert one == wt.worktree_path("/r", "/src/app/", "k1", "a") == "/r/app-k1/a"
    assert one != wt.worktree_path("/r", "/other/app", "k2", "a")  # same name, other repo
