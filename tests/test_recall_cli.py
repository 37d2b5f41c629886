"""`roost search` and `roost show` as a person runs them (issue 39), on a real tmux with the
fake CLIs (tests/fake_agent.py writes each CLI's record as the pinned one does): a turn sent
through roost is found by a word only it holds, with its agent and turn, across /clear; bad
input is one line on stderr and a non-zero exit; the service indexes as records grow, and not
at all with `[recall] index = false`."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def search(world: Env, *args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(world.roost("search", *args, "--json").stdout)
    return found


def spawn(world: Env, name: str, provider: str = "claude") -> str:
    world.roost("spawn", name, "--provider", provider, "--cwd", str(world.tmp / "work"))
    world.wait_status(name, "idle")
    return str(world.ls()[name]["provider_session_id"])


def test_a_sent_turn_is_found_with_its_agent_and_turn_across_clear(world: Env) -> None:
    first = spawn(world, "cl")
    world.roost("send", "cl", "please look at the kumquat parser")
    world.roost("send", "cl", "/clear")
    second = world.wait_for(
        lambda: (sid := world.ls()["cl"]["provider_session_id"]) != first and sid,
        what="the id after /clear",
    )
    world.roost("send", "cl", "and now the kumquat tests")
    hits = world.wait_for(
        lambda: len(h := search(world, "kumquat", "--role", "user")) == 2 and h,
        what="both prompts indexed",
    )
    assert sorted((h["ref"], h["session"], h["provider"]) for h in hits) == [
        ("cl@1", first, "claude"),
        ("cl@2", second, "claude"),
    ]
    assert "«kumquat»" in hits[0]["snippet"]
    shown = world.roost("show", "cl@2", "--context", "1").stdout
    assert "-- cl@1" in shown and ">> cl@2" in shown
    assert shown.index("kumquat parser") < shown.index("kumquat tests")
    table = world.roost("search", '"kumquat tests"').stdout
    assert table.splitlines()[0].startswith("cl@2  ") and "«kumquat tests»" in table
    assert world.roost("search", "kumquat", "--agent", "other", check=False).returncode == 1


def test_each_fake_clis_record_is_indexed(world: Env) -> None:
    (world.home).mkdir(parents=True, exist_ok=True)
    for name, provider in (("cx", "codex"), ("gm", "gemini"), ("ai", "aider")):
        spawn(world, name, provider)
        world.roost("send", name, f"{provider} asks about tamarind")
    hits = world.wait_for(
        lambda: len(h := search(world, "tamarind", "--role", "user")) == 3 and h,
        what="the three prompts indexed",
    )
    assert sorted((h["ref"], h["provider"]) for h in hits) == [
        ("ai@1", "aider"),
        ("cx@1", "codex"),
        ("gm@1", "gemini"),
    ]
    assert {h["ref"] for h in search(world, "tamarind", "--provider", "gemini")} == {"gm@1"}


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        pytest.param(("search", '"unclosed'), 2, "search: FTS5 cannot read this query", id="query"),
        pytest.param(("search", "x", "--since", "yesterday"), 2, "not a time", id="since"),
        pytest.param(("search",), 2, "give a QUERY", id="no-query"),
        pytest.param(("search", "x", "--role", "boss"), 2, "Invalid value", id="role"),
        pytest.param(("show", "cl"), 2, "is not NAME@TURN", id="show-ref"),
        pytest.param(("show", "ghost@1"), 4, "no conversation of 'ghost'", id="show-unknown"),
        pytest.param(("search", "--forget", "ghost"), 4, "no conversation of 'ghost'", id="forget"),
        pytest.param(("search", "--remember", "ghost"), 4, "ghost is not forgotten", id="remember"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(
    world: Env, args: tuple[str, ...], code: int, said: str
) -> None:
    done = world.roost(*args, check=False)
    assert done.returncode == code, done
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) <= 4  # click's usage


def test_forget_keeps_a_live_agent_out_until_remembered(world: Env) -> None:
    spawn(world, "cl")
    world.roost("send", "cl", "remember the persimmon")
    world.wait_for(lambda: search(world, "persimmon"), what="the prompt indexed")
    said = world.roost("search", "--forget", "cl").stdout
    assert "forgot" in said and "roost search --remember cl" in said
    index = sqlite3.connect(world.home / "recall.db")
    try:
        assert index.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    finally:
        index.close()
    assert (world.home / "recall.db").stat().st_mode & 0o777 == 0o600
    # it goes on talking: neither its old turn nor its new one comes back
    world.roost("send", "cl", "and now the sapodilla")
    world.wait_for(lambda: "sapodilla" in transcript_text(world, "cl"), what="the turn recorded")
    assert world.roost("search", "persimmon OR sapodilla", check=False).returncode == 1
    world.roost("search", "--reindex")
    assert world.roost("search", "persimmon OR sapodilla", check=False).returncode == 1
    again = world.roost("search", "--forget", "cl", check=False)
    assert again.returncode == 4 and "cl is already forgotten" in again.stderr
    assert "indexed again" in world.roost("search", "--remember", "cl").stdout
    found = search(world, "persimmon OR sapodilla", "--role", "user")
    assert sorted(h["ref"] for h in found) == ["cl@1", "cl@2"]


def indexed(world: Env, word: str) -> bool:
    """Whether the index holds `word` (read directly: `roost search` would index first)."""
    if not (world.home / "recall.db").exists():
        return False
    index = sqlite3.connect(world.home / "recall.db")
    try:
        return bool(
            index.execute(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (word,)
            ).fetchone()[0]
        )
    finally:
        index.close()


@pytest.mark.service
def test_the_service_indexes_a_turn_as_its_record_grows(world: Env) -> None:
    spawn(world, "cl")
    world.start_service(hearing="cl")
    world.roost("send", "cl", "the service hears about rambutan")
    world.wait_for(lambda: indexed(world, "rambutan"), what="the service indexing the turn")
    assert "recall" in world.roost("doctor", check=False).stdout


def test_switched_off_nothing_is_indexed(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text("[recall]\nindex = false\n")
    spawn(world, "cl")
    world.roost("send", "cl", "this one speaks of salak")
    world.wait_for(lambda: "salak" in transcript_text(world, "cl"), what="the turn recorded")
    done = world.roost("search", "salak", check=False)
    assert (done.returncode, indexed(world, "salak")) == (1, False)
    assert "indexing is off" in world.roost("doctor", check=False).stdout


def transcript_text(world: Env, name: str) -> str:
    import re

    a = world.ls()[name]
    folder = world.user_home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", a["cwd"])
    path = folder / f"{a['provider_session_id']}.jsonl"
    return path.read_text() if path.exists() else ""


def test_fork_at_an_earlier_turn_starts_on_a_copy_up_to_that_turn(world: Env) -> None:
    spawn(world, "cl")
    world.roost("send", "cl", "first turn about guava")
    world.roost("send", "cl", "second turn about feijoa")
    world.wait_for(lambda: len(search(world, "guava OR feijoa", "--role", "user")) == 2, what="2")
    original = transcript_text(world, "cl")
    world.roost("fork", "cl@1", "early")
    world.wait_status("early", "idle")
    assert transcript_text(world, "cl") == original
    world.roost("send", "early", "the fork asks about jabuticaba")
    world.wait_for(lambda: "jabuticaba" in transcript_text(world, "early"), what="its turn")
    copied = transcript_text(world, "early")
    assert "guava" in copied and "feijoa" not in copied
    hits = search(world, "guava OR feijoa OR jabuticaba", "--role", "user", "--agent", "early")
    assert sorted(h["ref"] for h in hits) == ["early@1", "early@2"]
    world.roost("fork", "cl@2", "alt")  # the last turn: the conversation as it stands
    world.wait_status("alt", "idle")
    assert "feijoa" in transcript_text(world, "alt")


@pytest.mark.parametrize(
    ("ref", "new", "code", "said"),
    [
        pytest.param("gm@1", "g2", 2, "cannot fork gm@1: gemini 0.61 has no way", id="gemini"),
        pytest.param("cl@7", "c2", 4, "cl has no turn 7 in the recall index", id="no-turn"),
        pytest.param("cl@1", "gm", 2, "agent 'gm' already exists", id="taken"),
        pytest.param("cl@x", "c2", 2, "is not NAME@TURN", id="ref"),
        pytest.param("ghost@1", "c2", 4, "ghost", id="ghost"),
    ],
)
def test_a_fork_at_a_turn_it_cannot_make_is_refused_and_nothing_is_stored(
    world: Env, ref: str, new: str, code: int, said: str
) -> None:
    spawn(world, "cl")
    spawn(world, "gm", "gemini")
    for name in ("cl", "gm"):
        world.roost("send", name, f"{name} first turn about ackee")
        world.roost("send", name, f"{name} second turn about ackee")
    world.wait_for(lambda: len(search(world, "ackee", "--role", "user")) == 4, what="indexed")
    agents = set(world.ls())
    records = sorted(p.name for p in world.user_home.rglob("*.jsonl"))
    refused = world.roost("fork", ref, new, check=False)
    assert refused.returncode == code, refused
    assert said in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert set(world.ls()) == agents
    assert sorted(p.name for p in world.user_home.rglob("*.jsonl")) == records


def test_reindex_rebuilds_from_the_records(world: Env) -> None:
    spawn(world, "cl")
    world.roost("send", "cl", "a note on loquat")
    world.wait_for(lambda: search(world, "loquat"), what="indexed")
    (world.home / "recall.db").write_bytes(b"garbage" * 1000)
    broken = world.roost("search", "loquat", check=False)
    assert broken.returncode == 3 and "roost search --reindex" in broken.stderr
    assert "Traceback" not in broken.stderr
    done = world.roost("search", "--reindex").stdout
    assert done.startswith("indexed ") and "message(s) from 1 record(s)" in done
    assert [h["ref"] for h in search(world, "loquat", "--role", "user")] == ["cl@1"]
