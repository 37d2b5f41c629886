"""`roost usage` and `roost policy --budget` as a person runs them (issue 23 parts 4, 5), on a
real tmux with the fake claude: the recorded Claude lines appended to its transcript are summed
as worked out by hand (tests/test_usage_unit.py), `ls --json` shows the stored totals, and bad
input is one line on stderr, exit 2, nothing stored."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

DATA = Path(__file__).parent / "data" / "usage"


@pytest.fixture
def keep(world: Env) -> Env:
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    world.wait_status("keep", "idle")
    return world


def transcript(world: Env, name: str) -> Path:
    a = world.ls()[name]
    return (
        world.user_home
        / ".claude"
        / "projects"
        / re.sub(r"[^A-Za-z0-9]", "-", a["cwd"])
        / f"{a['provider_session_id']}.jsonl"
    )


def test_usage_sums_the_transcript_and_ls_json_shows_it(keep: Env) -> None:
    path = transcript(keep, "keep")
    with path.open("a") as fh:
        fh.write((DATA / "claude.jsonl").read_text())
    shown = keep.roost("usage", "keep").stdout
    assert re.search(
        r"keep\s+2026-11-01\s+claude-sonnet-4-5-20250929\s+13\s+49\s+100\s+2100", shown
    )
    assert "costs are estimates" in shown
    report = json.loads(keep.roost("usage", "--json", "--since", "2026-11-02").stdout)
    assert [(r["who"], r["day"], r["total"]) for r in report["rows"]] == [("keep", "2026-11-02", 2)]
    # sonnet: 13 in, 49 out, 100 cache write, 2100 cache read at 3 / 15 / 3.75 / 0.30 per million;
    # opus 4.5: 1 in, 1 out at 5 / 25
    cost = (13 * 3 + 49 * 15 + 100 * 3.75 + 2100 * 0.30 + 5 + 25) / 1e6
    listed = keep.ls()["keep"]["usage"]
    assert (listed["total"], listed["cost_is_estimate"]) == (13 + 49 + 100 + 2100 + 2, True)
    assert listed["cost_usd"] == pytest.approx(cost)


def budgets(world: Env) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(world.home / "roost.db")
    try:
        return conn.execute("SELECT * FROM usage_budgets").fetchall()
    finally:
        conn.close()


BAD = [
    (["usage", "--since", "1 Nov"], "--since wants a day as YYYY-MM-DD", 2),
    (["usage", "--since", "2026-13-45"], "--since wants a day as YYYY-MM-DD", 2),
    (["usage", "--tab", "--tree"], "give one", 2),
    (["usage", "nobody"], "nobody", 4),
    (["policy", "keep", "--budget", "5 dollars"], "a budget is tokens", 2),
    (["policy", "keep", "--budget", "1k", "--tree-budget", "$-1"], "a budget is tokens", 2),
    (["policy", "keep"], "give a restart POLICY, --on-limit, --budget or --tree-budget", 2),
]


def test_bad_input_is_one_line_and_stores_nothing(keep: Env) -> None:
    for args, says, code in BAD:
        proc = keep.roost(*args, check=False)
        assert proc.returncode == code, (args, proc.stderr)
        assert proc.stderr.splitlines() == [proc.stderr.strip()] and says in proc.stderr, args
        assert budgets(keep) == [], args


def test_a_budget_is_stored_and_cleared(keep: Env) -> None:
    assert "keep: budget 500.0k tokens" in keep.roost("policy", "keep", "--budget", "500k").stdout
    said = keep.roost("policy", "keep", "--tree-budget", "$2.50").stdout
    assert "keep's orchestration tree: budget $2.50 (estimated)" in said
    assert [b[1:5] for b in budgets(keep)] == [(500000, None, None, 2.5)]
    keep.roost("policy", "keep", "--budget", "off", "--tree-budget", "off")
    assert [b[1:5] for b in budgets(keep)] == [(None, None, None, None)]
    assert keep.ls()["keep"]["state"] == "running"  # nothing reached: nothing parked


def own_turn(text: str, msg: str, tokens: tuple[int, int]) -> str:
    """One assistant line of the agent's own, with its own message id and usage."""
    line = json.loads(text.splitlines()[-1])
    line["message"]["id"], line["requestId"] = msg, f"req_{msg}"
    line["message"]["usage"]["input_tokens"], line["message"]["usage"]["output_tokens"] = tokens
    return json.dumps(line) + "\n"


def totals(world: Env) -> dict[str, int]:
    report = json.loads(world.roost("usage", "--json").stdout)
    by_who: dict[str, int] = {}
    for row in report["rows"]:
        by_who[row["who"]] = by_who.get(row["who"], 0) + row["total"]
    return {**by_who, "all": report["total"]["total"]}


def test_a_fork_counts_only_its_own_turns(keep: Env) -> None:
    """Issue 35: Claude Code's fork copies the original's transcript into the fork's file (the
    fake CLI as the real one: message ids kept); the copy is the original's usage, not the
    fork's. The fork counts nothing until it takes a turn of its own."""
    data = (DATA / "claude.jsonl").read_text()
    with transcript(keep, "keep").open("a") as fh:
        fh.write(data)
    parent = 13 + 49 + 100 + 2100 + 2
    assert totals(keep) == {"keep": parent, "all": parent}
    keep.roost("fork", "keep", "fk")
    keep.wait_status("fk", "idle")
    copy = transcript(keep, "fk")
    assert "msg_A" in copy.read_text()  # the original's history, copied
    assert totals(keep) == {"keep": parent, "all": parent}  # the copy counts nothing
    assert keep.ls()["fk"]["usage"]["total"] == 0
    with copy.open("a") as fh:
        fh.write(own_turn(data, "msg_F", (300, 40)))
    assert totals(keep) == {"keep": parent, "fk": 340, "all": parent + 340}
    assert keep.ls()["fk"]["usage"]["total"] == 340
    # the original goes on: its own turns are its own, the fork's stay the fork's
    with transcript(keep, "keep").open("a") as fh:
        fh.write(own_turn(data, "msg_K", (5, 5)))
    assert totals(keep) == {"keep": parent + 10, "fk": 340, "all": parent + 10 + 340}


def test_a_price_override_changes_the_cost_and_a_bad_one_is_refused(keep: Env) -> None:
    """Issue 35: config.toml's [prices."MODEL"] prices that model in `roost usage` and
    `ls --json`; a figure that is no price (negative, TOML's nan or inf, a string) is one line
    naming the file, line and key, exit 2, and nothing read or stored."""
    with transcript(keep, "keep").open("a") as fh:
        fh.write((DATA / "claude.jsonl").read_text())
    plain = json.loads(keep.roost("usage", "--json").stdout)
    assert plain["prices_taken"] >= "2026-12"
    assert "roost's price table of 2026-" in keep.roost("usage").stdout
    config = keep.home / "config.toml"
    config.write_text('[prices."claude-sonnet-4-5-20250929"]\ninput = 1000.0\n')
    dearer = plain["total"]["cost_usd"] + 13 * (1000 - 3) / 1e6  # 13 input tokens of sonnet
    report = json.loads(keep.roost("usage", "--json").stdout)
    assert report["total"]["cost_usd"] == pytest.approx(dearer)
    listed = keep.ls()["keep"]["usage"]
    assert listed["cost_usd"] == pytest.approx(dearer) and listed["prices_taken"] >= "2026-12"
    for bad in ("nan", "inf", "-1.0", '"3"'):
        config.write_text(f'[prices."claude-sonnet-4-5-20250929"]\noutput = {bad}\n')
        for args in (["usage"], ["ls", "--json"]):
            proc = keep.roost(*args, check=False)
            assert proc.returncode == 2, (bad, args, proc.stderr)
            assert proc.stderr.splitlines() == [proc.stderr.strip()], (bad, args)
            assert "line 2: prices.claude-sonnet-4-5-20250929.output must be a number" in (
                proc.stderr
            ), (bad, args)
    config.unlink()
    assert json.loads(keep.roost("usage", "--json").stdout) == plain  # nothing changed
