"""Recall's operations (issue 39) in an injected world (tests/fake_app.py) with the real SQLite
index: incremental indexing by offset, lineage across /clear and fork, records left out and
counted (malformed, huge, a FIFO, a symlink), search and its filters, turns, forget, gc."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.ops.context import App
from roost.recall import operations as recall
from roost.recall.operations import Filters

DATA = Path(__file__).parent / "data" / "usage"
SID = "0b7c3f8e-5d2a-4c1b-9e6f-1a2b3c4d5e6f"
SID2 = "1b7c3f8e-5d2a-4c1b-9e6f-1a2b3c4d5e6f"


@pytest.fixture
def app(tmp_path: Path) -> App:
    return fake_app(tmp_path, fake_tmux(), manual_clock(), {})


def user(text: str, at: str = "2026-11-01T10:00:00.000Z") -> str:
    return json.dumps({"type": "user", "message": {"content": text}, "timestamp": at}) + "\n"


def said(text: str, at: str = "2026-11-01T10:00:01.000Z") -> str:
    content = [{"type": "text", "text": text}]
    return (
        json.dumps({"type": "assistant", "message": {"content": content}, "timestamp": at}) + "\n"
    )


def edit(path: str, at: str = "2026-11-01T10:00:02.000Z") -> str:
    content = [{"type": "tool_use", "name": "Edit", "input": {"file_path": path}}]
    return (
        json.dumps({"type": "assistant", "message": {"content": content}, "timestamp": at}) + "\n"
    )


def transcript(app: App, sid: str, cwd: str = "/w") -> Path:
    folder = Path(app.environ["HOME"], ".claude", "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{sid}.jsonl"


def claude_agent(app: App, name: str = "api", sid: str = SID) -> Agent:
    agent = Agent(
        id=f"id-{name}", name=name, provider="claude", cwd="/w", home=name, provider_session_id=sid
    )
    app.store.insert(agent)
    app.store.set_provider_session_id(agent.id, sid, "spawn")
    return app.store.require(name)


def refs(hits: list[recall.Hit]) -> list[str]:
    return [h.ref for h in hits]


def test_a_growing_record_is_read_from_where_the_last_read_stopped(app: App) -> None:
    agent = claude_agent(app)
    path = transcript(app, SID)
    first = user("fix the login redirect") + said("looking at the redirect")
    path.write_text(first + '{"type": "user", "mess')  # a line still being written
    assert recall.index(app).read == len(first)
    # The bytes read are overwritten in place: a reader that read them again would see it.
    with path.open("r+b") as fh:
        fh.write(b" " * (len(first) - 1))
    more = 'age": {"content": "now the retry policy"}}\n' + said("retries: three, backoff")
    with path.open("a") as fh:
        fh.write(more)
    done = recall.index(app, [agent])
    assert (done.read, done.messages) == (len('{"type": "user", "mess') + len(more), 2)
    assert refs(recall.search(app, "redirect")) == ["api@1", "api@1"]
    assert refs(recall.search(app, "retry OR retries")) == ["api@2", "api@2"]
    watcher = sqlite3.connect(recall.index_path(app))  # sees each commit of another's
    before = watcher.execute("PRAGMA data_version").fetchone()
    assert recall.index(app).read == 0  # nothing new: nothing read
    assert watcher.execute("PRAGMA data_version").fetchone() == before  # and nothing written
    watcher.close()


def test_a_record_replaced_or_cut_short_is_read_again(app: App) -> None:
    claude_agent(app)
    path = transcript(app, SID)
    path.write_text(user("alpha words") + said("beta words"))
    recall.index(app)
    path.write_text(user("gamma"))  # cut short (same inode)
    recall.index(app)
    assert refs(recall.search(app, "alpha OR beta")) == []
    # a turn number is never given twice: api@1 names what it named, or nothing
    assert refs(recall.search(app, "gamma")) == ["api@2"]


def test_every_session_of_the_lineage_is_indexed_turns_numbered_across_them(app: App) -> None:
    agent = claude_agent(app)
    transcript(app, SID).write_text(user("before the clear: kiwi") + said("kiwi noted"))
    recall.index(app)
    app.store.set_provider_session_id(agent.id, SID2, "clear")  # /clear: a new session
    transcript(app, SID2).write_text(user("after the clear: mango"))
    recall.index(app)
    hits = recall.search(app, "kiwi OR mango", Filters(role="user"))
    assert sorted((h.ref, h.session) for h in hits) == [("api@1", SID), ("api@2", SID2)]
    shown = recall.turns(app, "api", 2, context=1)
    assert [(t.ref, [m.role for m in t.messages]) for t in shown] == [
        ("api@1", ["user", "agent"]),
        ("api@2", ["user"]),
    ]


def test_a_forks_conversation_is_its_own_and_the_originals_stays(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(user("the original asks about papaya"))
    # roost fork: claude copies the history into the fork's new session, then it goes on
    claude_agent(app, "alt", SID2)
    transcript(app, SID2).write_text(
        user("the original asks about papaya") + user("the fork asks about quince")
    )
    recall.index(app)
    assert sorted(refs(recall.search(app, "papaya"))) == ["alt@1", "api@1"]
    assert refs(recall.search(app, "quince")) == ["alt@2"]
    assert refs(recall.search(app, "papaya", Filters(agent="api"))) == ["api@1"]


def test_bad_records_are_left_out_and_counted_and_never_block(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo, link, huge, long, good = (
        claude_agent(app, n, f"{i}" * 8)
        for i, n in enumerate(["fifo", "link", "huge", "long", "good"], start=1)
    )
    os.mkfifo(transcript(app, fifo.provider_session_id or ""))  # no writer: an open would block
    secret = tmp_path / "secret"
    secret.write_text(user("a secret"))
    os.symlink(secret, transcript(app, link.provider_session_id or ""))
    monkeypatch.setattr(recall, "FILE_LIMIT", 1000)
    monkeypatch.setattr(recall, "LINE_LIMIT", 200)
    transcript(app, huge.provider_session_id or "").write_text(user("h" * 1200))
    transcript(app, long.provider_session_id or "").write_text(
        user("x" * 300) + '{"type": "user", broken\n' + user("after the long line")
    )
    transcript(app, good.provider_session_id or "").write_text(user("all good here"))
    done = recall.index(app)
    assert sorted(why for _, why in done.refused) == [
        "a symlink",
        "not a regular file",
        "over 0 MiB",
    ]
    assert sorted(refs(recall.search(app, "good OR after OR secret"))) == ["good@1", "long@1"]
    totals = recall.stats(app).totals
    assert (totals.refused, totals.skipped_lines) == (3, 2)  # the long line and the broken one


def test_search_filters(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(
        user("rename the config loader", "2026-11-01T10:00:00.000Z")
        + edit("/w/src/config.py", "2026-11-01T10:00:02.000Z")
        + said("config loader renamed", "2026-11-01T10:00:03.000Z")
        + user("now the config docs", "2026-11-05T10:00:00.000Z")
        + edit("/w/docs/config.md", "2026-11-05T10:00:02.000Z")
    )
    recall.index(app)
    q = "config"
    assert refs(recall.search(app, q, Filters(file="/w/src/config.py"))) == ["api@1"] * 3
    assert [h.role for h in recall.search(app, q, Filters(role="tool"))] == ["tool", "tool"]
    since = Filters(since=1793836800.0)  # 2026-11-05
    assert refs(recall.search(app, q, since)) == ["api@2", "api@2"]
    assert refs(recall.search(app, q, Filters(until=1793836800.0))) == ["api@1"] * 3
    assert refs(recall.search(app, q, Filters(provider="codex"))) == []
    assert refs(recall.search(app, q, Filters(agent="nobody"))) == []
    assert len(recall.search(app, q, limit=2)) == 2
    assert refs(recall.search(app, '"config loader"')) == ["api@1", "api@1"]  # a phrase
    assert refs(recall.search(app, "renam*")) == ["api@1", "api@1"]  # a prefix


@pytest.mark.parametrize("query", ['"unclosed', "a AND", "(", "NOT", "col:x", " "])
def test_a_query_fts5_cannot_read_is_one_clear_error(app: App, query: str) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(user("anything"))
    recall.index(app)
    with pytest.raises(recall.BadQuery, match="search: ") as found:
        recall.search(app, query)
    assert found.value.code == 2


def test_a_snippet_shows_control_characters_never_sends_them(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(said("evil \x1b]52;c;ZXZpbA==\x07 payload\nnext"))
    recall.index(app)
    (hit,) = recall.search(app, "payload")
    assert "\x1b" not in hit.snippet and "\\x1b" in hit.snippet and "\n" not in hit.snippet
    assert "«payload»" in hit.snippet


def test_forget_and_gc(app: App) -> None:
    claude_agent(app)
    claude_agent(app, "other", SID2)
    transcript(app, SID).write_text(user("lemon tart"))
    transcript(app, SID2).write_text(user("lemon cake"))
    recall.index(app)
    assert recall.forget(app, "api") == 1
    assert refs(recall.search(app, "lemon")) == ["other@1"]
    with pytest.raises(RoostError, match="api is already forgotten"):
        recall.forget(app, "api")
    with pytest.raises(RoostError, match="no conversation of 'ghost'"):
        recall.forget(app, "ghost")
    other = app.store.require("other")
    app.store.delete(other.id)  # rm: its conversation stays findable until gc
    assert refs(recall.search(app, "lemon")) == ["other@1"]
    assert [t.ref for t in recall.turns(app, "other", 1)] == ["other@1"]
    assert recall.prune(app) == 1
    assert refs(recall.search(app, "lemon")) == []


def test_show_refuses_a_turn_it_does_not_hold(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(user("one"))
    recall.index(app)
    with pytest.raises(RoostError, match="api has no turn 5 in the recall index"):
        recall.turns(app, "api", 5)
    with pytest.raises(RoostError, match="no conversation of 'ghost'"):
        recall.turns(app, "ghost", 1)


def test_reindex_rebuilds_and_replaces_a_damaged_index(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(user("walnut"))
    recall.index(app)
    index = recall.index_path(app)
    index.write_bytes(b"not a database at all" * 100)
    with pytest.raises(RoostError, match="recall index"):
        recall.search(app, "walnut")
    done = recall.reindex(app)
    assert done.messages == 1
    assert refs(recall.search(app, "walnut")) == ["api@1"]
    assert stat.S_IMODE(index.stat().st_mode) == 0o600


def test_every_cli_record_is_found_through_its_provider(app: App, tmp_path: Path) -> None:
    """Codex's rollout, Gemini's chat file and Aider's history, found where each provider's
    own readers find them."""
    codex_sid = "019a0000-0000-7000-8000-000000000001"
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "01"
    day.mkdir(parents=True)
    lines = [
        {"type": "session_meta", "payload": {"id": codex_sid, "cwd": "/w"}},
        {
            "type": "event_msg",
            "payload": {
                "type": "item_completed",
                "item": {"type": "UserMessage", "content": [{"text": "codex durian"}]},
            },
        },
    ]
    (day / f"rollout-2026-11-01T09-00-00-{codex_sid}.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    app.environ["CODEX_HOME"] = str(tmp_path / "codex")
    app.store.insert(
        Agent(
            id="id-cx",
            name="cx",
            provider="codex",
            cwd="/w",
            home="cx",
            provider_session_id=codex_sid,
        )
    )
    app.store.insert(Agent(id="id-ai", name="ai", provider="aider", cwd="/w", home="ai"))
    history = app.paths.home / "agents" / "id-ai"
    from roost.providers.aider import history_file

    path = history_file(app.paths.home, app.store.require("ai"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#### aider durian  \n\nok\n")
    gemini_sid = "9f0e1d2c-0000-4000-8000-000000000003"
    gem = tmp_path / ".gemini"
    (gem / "tmp" / "w" / "chats").mkdir(parents=True)
    (gem / "projects.json").write_text(json.dumps({"projects": {"/w": "w"}}))
    chat = gem / "tmp" / "w" / "chats" / f"session-2026-11-01T08-00-{gemini_sid[:8]}.jsonl"
    shutil.copy(DATA / "gemini.jsonl", chat)
    with chat.open("a") as fh:
        fh.write(
            json.dumps({"id": "u9", "type": "user", "content": [{"text": "gemini durian"}]}) + "\n"
        )
    app.store.insert(
        Agent(
            id="id-gm",
            name="gm",
            provider="gemini",
            cwd="/w",
            home="gm",
            provider_session_id=gemini_sid,
        )
    )
    del history
    recall.index(app)
    hits = recall.search(app, "durian")
    assert sorted((h.ref, h.provider) for h in hits) == [
        ("ai@1", "aider"),
        ("cx@1", "codex"),
        ("gm@3", "gemini"),
    ]


def test_stats_say_the_lag_in_bytes_not_yet_indexed(app: App) -> None:
    claude_agent(app)
    path = transcript(app, SID)
    path.write_text(user("first"))
    recall.index(app)
    assert recall.stats(app).lag == 0
    more = user("second") + user("third")
    with path.open("a") as fh:
        fh.write(more)
    found = recall.stats(app)
    assert (found.lag, found.totals.messages, found.totals.agents) == (len(more), 1, 1)
    assert found.totals.bytes == recall.index_path(app).stat().st_size + (
        Path(f"{recall.index_path(app)}-wal").stat().st_size
        if Path(f"{recall.index_path(app)}-wal").exists()
        else 0
    )


def test_the_services_watch_reads_only_what_grew(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_app import clock_of

    from roost.core.model import INTENT_RUNNING

    agent = claude_agent(app)
    app.store.update(agent.id, intent=INTENT_RUNNING)
    path = transcript(app, SID)
    path.write_text(user("watched plum"))
    reads: list[str] = []
    real = recall.index_one

    def counted(*args: object, **kwargs: object) -> int | None:
        reads.append(args[2].path)  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recall, "index_one", counted)
    watch = recall.Watch()
    try:
        assert watch.look(app).messages == 1
        assert (watch.look(app).read, len(reads)) == (0, 1)  # nothing grew: no read at all
        more = user("watched pear")
        with path.open("a") as fh:
            fh.write(more)
        assert watch.look(app).read == len(more)
        # /clear: a new session, told by a status change; listed again at most every RELIST s
        app.store.set_provider_session_id(agent.id, SID2, "clear")
        transcript(app, SID2).write_text(user("watched fig"))
        assert watch.look(app, force=True).read == 0
        clock_of(app).advance(recall.RELIST)
        assert watch.look(app).messages == 1
    finally:
        watch.close()
    assert refs(recall.search(app, "watched", Filters(role="user"))) == ["api@1", "api@2", "api@3"]


def test_the_switch_follows_the_config(app: App) -> None:
    from fake_app import with_table

    app.settings = with_table(app.settings, recall={"index": False})
    recall._on_settings(app)
    assert recall._switch.enabled is False
    app.settings = with_table(app.settings, recall={"index": True})
    recall._on_settings(app)
    assert recall._switch.enabled is True


def test_a_forgotten_live_agent_stays_forgotten_until_remembered(app: App) -> None:
    """`search --forget` of a running agent: the next catch-up (and a --reindex) never reads
    its record back from offset 0, nor what it says after; `--remember` brings it back."""
    claude_agent(app)
    path = transcript(app, SID)
    path.write_text(user("the secret fig recipe"))
    recall.catch_up(app)
    assert refs(recall.search(app, "fig")) == ["api@1"]
    assert recall.forget(app, "api") == 1
    assert recall.catch_up(app).messages == 0  # its record is not read again
    assert refs(recall.search(app, "fig")) == []
    with path.open("a") as fh:
        fh.write(user("another fig, after the forget"))
    assert recall.index(app).read == 0
    recall.reindex(app)
    assert refs(recall.search(app, "fig")) == []
    with pytest.raises(RoostError, match="already forgotten"):
        recall.forget(app, "api")
    assert recall.remember(app, "api") == 1
    with pytest.raises(RoostError, match="api is not forgotten"):
        recall.remember(app, "api")
    recall.catch_up(app)
    assert refs(recall.search(app, "fig", Filters(role="user"))) == ["api@1", "api@2"]


def test_a_live_agent_not_yet_indexed_can_be_forgotten_and_a_forget_survives_a_damaged_index(
    app: App,
) -> None:
    claude_agent(app)
    assert recall.forget(app, "api") == 0  # nothing indexed yet: marked all the same
    transcript(app, SID).write_text(user("an early date palm"))
    recall.catch_up(app)
    assert refs(recall.search(app, "palm")) == []
    hurt = sqlite3.connect(recall.index_path(app))  # an index this roost cannot read
    hurt.execute("PRAGMA user_version = 99")
    hurt.close()
    with pytest.raises(RoostError, match="schema 99"):
        recall.search(app, "palm")
    recall.reindex(app)
    assert refs(recall.search(app, "palm")) == []


def test_an_index_of_schema_1_gains_the_forgotten_marks_and_keeps_its_entries(app: App) -> None:
    claude_agent(app)
    transcript(app, SID).write_text(user("an old medlar"))
    recall.index(app)
    old = sqlite3.connect(recall.index_path(app))
    old.execute("DROP TABLE forgotten")
    old.execute("PRAGMA user_version = 1")
    old.close()
    assert refs(recall.search(app, "medlar")) == ["api@1"]
    recall.forget(app, "api")
    assert refs(recall.search(app, "medlar")) == []
    check = sqlite3.connect(recall.index_path(app))
    try:
        assert check.execute("PRAGMA user_version").fetchone()[0] == 2
        assert check.execute("SELECT agent_id, name FROM forgotten").fetchall() == [
            ("id-api", "api")
        ]
    finally:
        check.close()


def claude_line(kind: str, text: str, sid: str) -> str:
    content = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps({"type": kind, "sessionId": sid, "message": {"content": content}}) + "\n"


def test_a_fork_point_before_the_last_turn_is_a_copy_of_the_record_that_holds_it(
    app: App,
) -> None:
    agent = claude_agent(app)
    old = transcript(app, SID)
    old.write_text(
        claude_line("user", "one: cherimoya", SID)
        + claude_line("assistant", "noted", SID)
        + claude_line("user", "two: soursop", SID)
    )
    recall.index(app)
    app.store.set_provider_session_id(agent.id, SID2, "clear")  # turn 3 in another session
    transcript(app, SID2).write_text(claude_line("user", "three: sapote", SID2))
    before = old.read_bytes()
    at_last = recall.fork_point(app, "api@3", "f3")
    assert (at_last.name, at_last.session) == ("api", None)
    one = recall.fork_point(app, "api@1", "f1")
    two = recall.fork_point(app, "api@2", "f2")  # the last of its session: that one whole
    assert old.read_bytes() == before
    kept = {"f1": ["one: cherimoya", "noted"], "f2": ["one: cherimoya", "noted", "two: soursop"]}
    for new, point in (("f1", one), ("f2", two)):
        assert point.session not in (None, SID, SID2) and point.path is not None
        copy = Path(point.path)
        assert copy == transcript(app, point.session or "")
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
        lines = [json.loads(x) for x in copy.read_text().splitlines()]
        said = [x["message"]["content"] for x in lines]
        assert [w if isinstance(w, str) else w[0]["text"] for w in said] == kept[new]
        assert {x["sessionId"] for x in lines} == {point.session}
    assert not list(old.parent.glob(".roost-fork-*"))


def test_a_fork_point_refuses_a_record_it_cannot_copy_whole_and_writes_nothing(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_agent(app)
    path = transcript(app, SID)
    path.write_text(
        claude_line("user", "one", SID)
        + claude_line("assistant", "x" * 300, SID)
        + claude_line("user", "two", SID)
    )
    monkeypatch.setattr(recall, "LINE_LIMIT", 200)
    recall.index(app)  # the long line left out of the index: turn 1 is still the prompt
    with pytest.raises(RoostError, match="cannot fork api@1: a line of its record is over"):
        recall.fork_point(app, "api@1", "f1")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    gm = Agent(id="id-gm", name="gm", provider="gemini", cwd="/w", home="gm")
    app.store.insert(gm)
    with pytest.raises(RoostError, match="no conversation of 'gm'"):
        recall.fork_point(app, "gm@1", "f2")
    with pytest.raises(RoostError, match="agent 'api' already exists"):
        recall.fork_point(app, "api@1", "api")
