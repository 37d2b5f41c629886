"""Usage per agent from the CLIs' session files (issue 23 part 4): totals checked against sums
worked out by hand on recorded files of each CLI (tests/data/usage, written the way Claude Code
2.1.332, Codex 0.169.0 and Gemini CLI 0.61.0 write them), read whole, in pieces as a file grows,
and again after the file is cut short or replaced."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.core.model import Agent
from roost.ops.context import App
from roost.store import usage as rows
from roost.usage import operations as ops_usage
from roost.usage import prices
from roost.usage import rules as usage
from roost.usage.rules import Tokens

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
def test_a_whole_file_sums_as_worked_out_by_hand(
    provider: str, expected: dict[tuple[str, str], Tokens]
) -> None:
    found, _ = usage.read(provider, lines(provider), {})
    assert found == expected


@pytest.mark.parametrize(("provider", "expected"), CASES, ids=[c[0] for c in CASES])
def test_read_in_pieces_the_sum_is_the_same(
    provider: str, expected: dict[tuple[str, str], Tokens]
) -> None:
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


# The models the pinned CLIs use unless told otherwise (issue 35), as found in their installs
# (tests/.cache) and seen by the API stand-ins: Claude Code's main loop (an API key) and its
# small model, Codex's first listed model, Gemini CLI's turn model with and without preview
# access, its router's and its flash model, aider's with an OpenAI or an Anthropic key.
PINNED_DEFAULTS = {
    ("claude", "2.1.332"): ("claude-opus-5-5", "claude-haiku-5-5"),
    ("codex", "0.169.0"): ("gpt-6.1-sol",),
    ("gemini", "0.61.0"): (
        "gemini-3.1-pro-preview",
        "gemini-2.5-pro",
        "gemini-3.5-flash-lite",
        "gemini-3-flash-preview",
        "gemini-3.5-flash",
    ),
    ("aider", "0.86.2"): ("gpt-4o", "claude-sonnet-4-5", "openai/gpt-4o"),
}


def test_every_pinned_clis_default_model_has_a_price() -> None:
    import real_aider
    import real_claude
    import real_codex
    import real_gemini

    pinned = {
        "claude": real_claude.PINNED_VERSION,
        "codex": real_codex.PINNED_VERSION,
        "gemini": real_gemini.PINNED_VERSION,
        "aider": real_aider.PINNED_VERSION,
    }
    # a CLI pinned anew: look its default models (and their prices) up again
    assert dict(PINNED_DEFAULTS.keys()) == pinned
    one = Tokens(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    for (cli, _), models in PINNED_DEFAULTS.items():
        for model in models:
            assert prices.cost(model, one) is not None, (cli, model)
    assert prices.TAKEN >= "2026-12"  # the table these came from


@pytest.mark.parametrize(
    ("model", "dollars"),
    [
        # not claude-opus-5's 5.0, nor claude-opus-4's 15.0
        pytest.param("claude-opus-5-5", 4.0, id="opus-5-5"),
        pytest.param("claude-opus-4-8", 5.0, id="opus-4-8"),
        pytest.param("claude-opus-5-5[1m]", 4.0, id="opus-5-5-1m"),
        pytest.param("claude-sonnet-4-5-20250929", 3.0, id="dated-sonnet"),
        pytest.param("gpt-5.5", None, id="gpt-5-5-is-not-gpt-5"),  # another model
        pytest.param("gpt-4o-mini-2024-07-18", 0.15, id="dated-gpt-4o-mini"),  # not gpt-4o's 2.5
    ],
)
def test_a_price_applies_to_its_model_and_dated_names_not_to_another_version(
    model: str, dollars: float | None
) -> None:
    """The dollars of a million input tokens."""
    assert prices.cost(model, Tokens(1_000_000, 0, 0, 0)) == dollars


def test_an_override_with_no_price_in_it_is_left_out() -> None:
    """config.toml refuses these (core/settings.py); the table leaves them out as well."""
    table = prices.table({"m": {"input": float("nan"), "output": float("inf"), "cache_read": -1}})
    assert table["m"] == (0.0, 0.0, 0.0, 0.0)
    assert "m" not in prices.table({"m": "3"})  # type: ignore[dict-item]


# ---- the incremental reader, against the store ------------------------------------------


@pytest.fixture
def app(tmp_path: Path) -> App:
    return fake_app(tmp_path, fake_tmux(), manual_clock(), {})


def claude_agent(
    app: App,
    transcript: Path,
    name: str = "api",
    session: str = "0b7c3f8e-5d2a-4c1b-9e6f-1a2b3c4d5e6f",
) -> Agent:
    agent = Agent(
        id=f"id-{name}",
        name=name,
        provider="claude",
        cwd="/w",
        home=name,
        provider_session_id=session,
        transcript_path=str(transcript),
    )
    app.store.insert(agent)
    return app.store.require(name)


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


# ---- a fork counts its own turns (issue 35) ------------------------------------------------


def assistant(msg: str, tokens: tuple[int, int], day: str = "2026-11-03") -> str:
    return json.dumps(
        {
            "type": "assistant",
            "requestId": f"req_{msg}",
            "timestamp": f"{day}T00:00:00Z",
            "message": {
                "id": msg,
                "model": SONNET,
                "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
            },
        }
    )


def test_a_claude_fork_skips_the_copied_history_however_long() -> None:
    """Claude Code copies every message of the original (ids kept) ahead of the fork's own:
    more than the reader's usual memory of REMEMBERED keys, and each message written twice."""
    original = [m for i in range(usage.REMEMBERED + 50) for m in [assistant(f"m{i}", (i, 1))] * 2]
    start = usage.fork_point("claude", original)
    mine = [assistant("own", (7, 3)), assistant("own2", (1, 1))]
    found, state = usage.read("claude", [*original, *mine], start)
    assert found == {("2026-11-03", SONNET): Tokens(8, 4, 0, 0)}
    assert usage.COPIED not in state  # the copy is behind: its keys are not kept on
    # read in pieces, split anywhere: the same
    for cut in (0, 1, len(original) - 1, len(original) + 1):
        first, state = usage.read("claude", [*original, *mine][:cut], start)
        second, _ = usage.read("claude", [*original, *mine][cut:], state)
        summed = {k: first.get(k, Tokens()) + second.get(k, Tokens()) for k in {*first, *second}}
        assert {k: v for k, v in summed.items() if v.total} == found, cut


def test_a_codex_fork_counts_from_the_originals_running_totals() -> None:
    """Codex writes no copy, but the fork's first cumulative total goes on from the original's
    (seen on 0.169.0: 13,533 in the original, 20,429 = 13,533 + 6,896 in the fork)."""
    start = usage.fork_point("codex", lines("codex"))
    total = {"input_tokens": 2500 + 600, "cached_input_tokens": 1200 + 100, "output_tokens": 90}
    fork = [
        '{"type":"session_meta","payload":{"id":"f","forked_from_id":"o"}}',
        '{"timestamp":"2026-11-02T00:00:00Z","type":"turn_context","payload":{"model":"gpt-5"}}',
        json.dumps(
            {
                "timestamp": "2026-11-02T00:00:01Z",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"total_token_usage": total}},
            }
        ),
    ]
    found, _ = usage.read("codex", fork, start)
    assert found == {("2026-11-02", "gpt-5"): Tokens(500, 10, 0, 100)}


def test_a_forks_starting_point_is_its_first_files_only(app: App, tmp_path: Path) -> None:
    """The fork point binds to the first file read for the fork (read again from there if
    that file is replaced); a later conversation's file starts from nothing."""
    original = [assistant("m1", (100, 10))]
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    agent = claude_agent(app, first)
    with app.store.write() as c:
        rows.set_fork_point(c, agent.id, usage.fork_point("claude", original))
    first.write_text("\n".join([*original, assistant("own", (5, 5))]) + "\n")
    ops_usage.scan(app, [agent])
    assert sum(t.total for t in stored(app, agent).values()) == 10
    spare = tmp_path / "spare.jsonl"  # the same file replaced: the copy is skipped again
    spare.write_text(first.read_text())
    os.replace(spare, first)
    ops_usage.scan(app, [agent])
    assert sum(t.total for t in stored(app, agent).values()) == 10
    with app.store.write() as c:  # the fork's next conversation (a new session file)
        c.execute("UPDATE agents SET transcript_path = ? WHERE id = ?", (str(later), agent.id))
    later.write_text("\n".join(original) + "\n")  # the same message again: its own now
    ops_usage.scan(app, [app.store.require("api")])
    assert sum(t.total for t in stored(app, agent).values()) == 10 + 110


def test_a_fault_in_one_agents_file_is_that_agents_nothing(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35: one agent's file never stops the read for the others (the budget component
    reads every running agent in one pass). A fault no check foresaw stands in for the
    OverflowError one transcript line once raised."""
    good_path, bad_path = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    shutil.copy(DATA / "claude.jsonl", good_path)
    shutil.copy(DATA / "claude.jsonl", bad_path)
    bad = claude_agent(app, bad_path)
    good = claude_agent(app, good_path, "web", "1c8d4f9f-6e3b-4d2c-8f7a-2b3c4d5e6f70")
    real_scan_one = ops_usage.scan_one

    def scan_one(app_: App, agent: Agent) -> int:
        if agent.name == bad.name:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return real_scan_one(app_, agent)

    monkeypatch.setattr(ops_usage, "scan_one", scan_one)
    added = ops_usage.scan(app, [bad, good])
    assert added == sum(t.total for t in CLAUDE.values())
    assert stored(app, good) == CLAUDE and stored(app, bad) == {}
    assert "api's usage was not read: OverflowError" in capsys.readouterr().err


def test_doctors_catch_up_isolates_one_agents_fault_as_the_service_does(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """catch_up (doctor's read) called scan_one bare: a fault the service's scan survives (a
    RecursionError in one agent's reader) became doctor's traceback, and the agents after it
    went unread."""
    bad = claude_agent(app, tmp_path / "bad.jsonl", "bad", "11111111-5d2a-4c1b-9e6f-1a2b3c4d5e6f")
    good = claude_agent(app, tmp_path / "good.jsonl", "good")
    for agent in (bad, good):
        shutil.copy(DATA / "claude.jsonl", agent.transcript_path or "")
    scan_one = ops_usage.scan_one

    def faulty(app: App, agent: Agent) -> int:
        if agent.id == bad.id:
            raise RecursionError("maximum recursion depth exceeded")
        return scan_one(app, agent)

    monkeypatch.setattr(ops_usage, "scan_one", faulty)
    ops_usage.catch_up(app, [bad, good])
    assert stored(app, bad) == {}
    assert stored(app, good) == CLAUDE
