"""Usage per agent from the CLIs' session files (issue 23 part 4): totals checked against sums
worked out by hand on recorded files of each CLI (tests/data/usage, written the way Claude Code
2.1.332, Codex 0.169.0 and Gemini CLI 0.61.0 write them), read whole, in pieces as a file grows,
and again after the file is cut short or replaced."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.core import prices, usage
from roost.core.model import Agent
from roost.core.usage import Tokens
from roost.ops import usage as ops_usage
from roost.ops.context import App
from roost.store import usage as rows

DATA = Path(__file__).parent / "data" / "usage"
SONNET = "claude-sonnet-4-5-20250929"

# Worked out by hand from the files (see each file's lines):
CLAUDE = {
    # msg_A written twice (text, tool_use): once, with the larger output (42, not 5 + 42);
    # msg_B once; the <synthetic> error line not at all.
    ("2026-11-01", SONNET): Tokens(
        input=10 + 3, output=42 + 7, cache_write=100, cache_read=1000 + 1100
    ),
    ("2026-11-02", "claude-opus-4-5-20251101"): Tokens(1, 1, 0, 0),
}
CODEX = {
    # cumulative totals 1000/200/50, the same again (adds nothing), then 2500/1200/80; cached
    # input is part of input: fresh input (1000-200) + ((2500-1000)-(1200-200)) = 800 + 500.
    ("2026-11-01", "gpt-5-codex"): Tokens(
        input=800 + 500, output=80, cache_write=0, cache_read=1200
    ),
}
GEMINI = {
    # g1: input 1000 of which 400 cached, output 10 + 5 thoughts; g2 (written twice, and again
    # in a $set): input 1200 + 30 tool, output 20; g3 written twice, its output grown 1 -> 9.
    ("2026-11-01", "gemini-2.5-pro"): Tokens(
        input=600 + 1230 + 100, output=15 + 20 + 9, cache_write=0, cache_read=400
    ),
}
CASES = [("claude", CLAUDE), ("codex", CODEX), ("gemini", GEMINI)]


def lines(provider: str) -> list[str]:
    return (DATA / f"{provider}.jsonl").read_text().splitlines()


@pytest.mark.parametrize(("provider", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_whole_file_sums_as_worked_out_by_hand(provider: str, expected: dict) -> None:
    found, _ = usage.read(provider, lines(provider), {})
    assert found == expected


@pytest.mark.parametrize(("provider", "expected"), CASES, ids=[c[0] for c in CASES])
def test_read_in_pieces_the_sum_is_the_same(provider: str, expected: dict) -> None:
    """Every split point: a message written again after the split adds only what grew, a
    cumulative count only its difference."""
    every = lines(provider)
    for cut in range(len(every) + 1):
        first, state = usage.read(provider, every[:cut], {})
        second, _ = usage.read(provider, every[cut:], state)
        summed = {k: first.get(k, Tokens()) + second.get(k, Tokens()) for k in {*first, *second}}
        assert {k: v for k, v in summed.items() if v.total} == expected, cut


def test_a_cli_without_usage_records_finds_nothing() -> None:
    assert usage.read("aider", lines("claude"), {})[0] == {}


def test_prices_are_per_million_longest_name_first_and_overridable() -> None:
    t = Tokens(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert prices.cost(SONNET, t) == pytest.approx(3 + 15 + 3.75 + 0.30)
    assert prices.cost("gpt-5-mini-2025", t) == pytest.approx(0.25 + 2 + 0.25 + 0.025)
    table = prices.table({"stub-model": {"input": 1, "output": 2}, SONNET: {"output": 10}})
    assert prices.cost("stub-model", t, table) == pytest.approx(3)
    assert prices.cost(SONNET, t, table) == pytest.approx(3 + 10 + 3.75 + 0.30)
    assert prices.cost("unknown", t, table) is None


# ---- the incremental reader, against the store ------------------------------------------


@pytest.fixture
def app(tmp_path: Path) -> App:
    return fake_app(tmp_path, fake_tmux(), manual_clock(), {})


def claude_agent(app: App, transcript: Path) -> Agent:
    agent = Agent(
        id="a1",
        name="api",
        provider="claude",
        cwd="/w",
        home="api",
        provider_session_id="0b7c3f8e-5d2a-4c1b-9e6f-1a2b3c4d5e6f",
        transcript_path=str(transcript),
    )
    app.store.insert(agent)
    return app.store.require("api")


def stored(app: App, agent: Agent) -> dict[tuple[str, str], Tokens]:
    return {(d, m): t for _, d, m, t in rows.totals(app.store.conn, [agent.id])}


def test_a_growing_file_is_read_from_where_the_last_read_stopped(app: App, tmp_path: Path) -> None:
    data = (DATA / "claude.jsonl").read_bytes()
    path = tmp_path / "t.jsonl"
    agent = claude_agent(app, path)
    half = data.index(b"\n", len(data) // 3) + 40  # in the middle of a line
    path.write_bytes(data[:half])
    ops_usage.scan(app, [agent])
    # The bytes already read are overwritten in place (same inode and length): a reader that
    # read them again would lose what they held. Only the appended bytes are read.
    with path.open("r+b") as fh:
        fh.write(b" " * data[:half].rindex(b"\n"))
    with path.open("ab") as fh:
        fh.write(data[half:])
    ops_usage.scan(app, [agent])
    assert stored(app, agent) == CLAUDE
    ops_usage.scan(app, [agent])  # nothing new: nothing added
    assert stored(app, agent) == CLAUDE


def test_a_file_cut_short_or_replaced_is_read_again_from_its_start(
    app: App, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    shutil.copy(DATA / "claude.jsonl", path)
    agent = claude_agent(app, path)
    ops_usage.scan(app, [agent])
    assert stored(app, agent) == CLAUDE
    last = lines("claude")[-1]
    path.write_text(last + "\n")  # cut short (same inode): only what it holds now counts
    ops_usage.scan(app, [agent])
    assert stored(app, agent) == {("2026-11-02", "claude-opus-4-5-20251101"): Tokens(1, 1, 0, 0)}
    spare = tmp_path / "new.jsonl"  # replaced (another inode), longer than the cursor
    shutil.copy(DATA / "claude.jsonl", spare)
    with spare.open("a") as fh:
        fh.write(last.replace("msg_C", "msg_D") + "\n")
    os.replace(spare, path)
    ops_usage.scan(app, [agent])
    assert stored(app, agent)[("2026-11-02", "claude-opus-4-5-20251101")] == Tokens(2, 2, 0, 0)
    assert stored(app, agent)[("2026-11-01", SONNET)] == CLAUDE[("2026-11-01", SONNET)]
    # what `ls --json` and the TUI read (per agent and model) follows the restarts too
    assert rows.tokens_by_agent(app.store.conn) == {agent.id: 13 + 49 + 100 + 2100 + 4}


def test_codex_rollout_is_found_and_read(app: App, tmp_path: Path) -> None:
    sid = "019a0000-0000-7000-8000-000000000001"
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "01"
    day.mkdir(parents=True)
    shutil.copy(DATA / "codex.jsonl", day / f"rollout-2026-11-01T09-00-00-{sid}.jsonl")
    app.environ["CODEX_HOME"] = str(tmp_path / "codex")
    app.store.insert(
        Agent(id="c1", name="cx", provider="codex", cwd="/w", home="cx", provider_session_id=sid)
    )
    agent = app.store.require("cx")
    assert ops_usage.scan(app, [agent]) == sum(t.total for t in CODEX.values())
    assert stored(app, agent) == CODEX


def test_totals_per_tree_and_per_tab(app: App) -> None:
    for id_, name, parent in (("L", "lead", None), ("K", "kid", "L"), ("G", "grandkid", "K")):
        app.store.insert(
            Agent(
                id=id_,
                name=name,
                provider="claude",
                cwd="/w",
                home="h",
                orchestration_parent=parent,
                orchestration_root="L" if parent else None,
            )
        )
    app.store.insert(Agent(id="S", name="solo", provider="claude", cwd="/w", home="h"))
    with app.store.write() as c:
        for id_, n in (("L", 1), ("K", 10), ("G", 100), ("S", 1000)):
            rows.advance(c, id_, "/f", 1, 0, {}, {("2031-03-04", "m"): Tokens(input=n)})
    everyone = app.store.agents()
    per_tree = ops_usage.report(app, everyone, None, "tree")
    assert [(ln.who, ln.tokens.input) for ln in per_tree] == [("lead", 111), ("solo", 1000)]
    kid_tree = ops_usage.tree_of(app, app.store.require("kid"))
    assert sorted(a.name for a in kid_tree) == ["grandkid", "kid"]
    merged = ops_usage.merged(ops_usage.report(app, kid_tree, None), "kid")
    assert [(ln.who, ln.tokens.input, ln.cost) for ln in merged] == [("kid", 110, None)]
    per_tab = ops_usage.report(app, everyone, "2031-03-05", "tab")
    assert per_tab == []  # --since after the only day
