"""`roost doctor` says, per agent, how many lines of its CLI's files roost left out and why
(issue 35): a line over 8 MiB (system/untrusted.LINE_LIMIT), one that is no JSON object, one
whose token count no model could reach (usage/rules.MAX_TOKENS). Before, they were skipped in
silence; and a line longer than one read (4 MiB) held that agent's usage cursor where it was
for good: nothing after it was ever counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_usage_cli import DATA, transcript

from roost.system import untrusted
from roost.usage.rules import MAX_TOKENS

from conftest import Env

pytestmark = pytest.mark.tmux

GOOD_TOTAL = 13 + 49 + 100 + 2100 + 2  # what tests/data/usage/claude.jsonl holds


def absurd_line() -> str:
    """An assistant message whose input count is 10^30 (and its output one over the cap)."""
    return json.dumps(
        {
            "type": "assistant",
            "timestamp": "2026-11-01T10:00:00Z",
            "message": {
                "id": "msg_absurd",
                "model": "claude-sonnet-4-5-20250929",
                "usage": {"input_tokens": 10**30, "output_tokens": MAX_TOKENS + 1},
            },
        }
    )


def too_long_line() -> str:
    return json.dumps({"type": "assistant", "pad": "x" * (untrusted.LINE_LIMIT + 16)})


def doctor(world: Env) -> tuple[int, dict[str, dict[str, Any]]]:
    proc = world.roost("doctor", "--json", check=False)
    return proc.returncode, {c["name"]: c for c in json.loads(proc.stdout)["checks"]}


def test_doctor_names_the_agent_and_counts_its_skipped_lines(world: Env) -> None:
    for name in ("bad", "good"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    for name in ("bad", "good"):
        world.wait_status(name, "idle")
    code_before, checks = doctor(world)
    assert not [n for n in checks if n.startswith("records ")]

    with transcript(world, "bad").open("a") as fh:
        fh.write(too_long_line() + "\n")
        fh.write(absurd_line() + "\n")
        fh.write("{not json\n")
        fh.write((DATA / "claude.jsonl").read_text())  # after them: still counted
    with transcript(world, "good").open("a") as fh:
        fh.write((DATA / "claude.jsonl").read_text())

    code, checks = doctor(world)
    assert code == code_before  # a warning: the set-up is as good as it was
    found = checks["records bad"]
    assert found["ok"] is True and found["warning"] is True, found
    assert found["detail"] == (
        "3 lines of its CLI's files left out (usage, replies and read skip them): "
        "1 not a JSON object, "
        "1 with a token count out of range (below 0 or over 10^9: counted as 0), "
        "1 too long (over 8 MiB)"
    ), found
    assert "records good" not in checks
    text = world.roost("doctor", check=False).stdout
    assert "WARN records bad: 3 lines of its CLI's files left out" in text, text

    # the usage read went on past the long line: what follows it counts
    usage = json.loads(world.roost("usage", "--json").stdout)
    totals: dict[str, int] = {}
    for row in usage["rows"]:
        totals[row["who"]] = totals.get(row["who"], 0) + row["total"]
    assert totals.get("good") == GOOD_TOTAL
    assert totals.get("bad") == GOOD_TOTAL  # the absurd counts as nothing, the rest as it says

    # counted once: a second look reads nothing new and says the same
    assert doctor(world)[1]["records bad"]["detail"] == found["detail"]


def test_each_reason_is_counted_once_per_line() -> None:
    from roost.usage import rules as usage

    codex_absurd = json.dumps(
        {
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": -5, "output_tokens": 10**30}},
                "rate_limits": {"primary": {"resets_at": 4_000_000_000}},  # no token count
            },
        }
    )
    _found, state = usage.read("codex", [codex_absurd, "", "[1]", "{x", "null"], {})
    assert usage.skipped(state) == {"out_of_range": 1, "malformed": 3}
    _found, state = usage.read("claude", [absurd_line()], state)
    assert usage.skipped(state) == {"out_of_range": 2, "malformed": 3}


def test_a_line_longer_than_a_read_is_read_whole_and_one_over_the_limit_passed_by(
    tmp_path: Path,
) -> None:
    from roost.usage import rules as usage
    from roost.usage.operations import CHUNK, complete_lines

    long_ok = b"m" * (CHUNK + 100)  # longer than one read, within the line limit
    too_long = b"x" * (untrusted.LINE_LIMIT + CHUNK)  # passed by over more than one read
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"first\n" + long_ok + b"\n" + too_long + b"\nlast\npartial")
    state: dict[str, Any] = {}
    offset, lines = 0, []
    with path.open("rb") as fh:
        for _ in range(10):
            fh.seek(offset)
            data, moved = complete_lines(fh, state)
            lines += data.splitlines()
            if not moved:
                break
            offset += moved
    assert lines == [b"first", long_ok, b"last"]  # "partial" waits for its newline
    assert offset == path.stat().st_size - len(b"partial")
    assert usage.skipped(state) == {"too_long": 1} and "passing" not in state
