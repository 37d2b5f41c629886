"""Lineage (issue 13) without tmux: which hook lines may change an agent's session id (launch
tokens, launch time, cwd; the lines of roosts before tokens), and the history's migration."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from roost.core.model import Agent
from roost.ops.learn import apply_hook_log
from roost.providers import hooks
from roost.store import schema
from roost.store.db import Store

LAUNCH_AT = 1_800_000_000.0
OLD, NEW = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


def one_claude(tmp_path: Path) -> SimpleNamespace:
    """A store holding claude agent `a` (session OLD, launched once, cwd /w): enough of an App
    for the hook log's readers."""
    store = Store.open(tmp_path / "roost.db")
    store.insert(
        Agent(
            id="id-a",
            name="a",
            provider="claude",
            cwd="/w",
            home="a",
            provider_session_id=OLD,
            created_at="2027-01-01T00:00:00+00:00",
            started_at="2027-01-15T08:00:00+00:00",
            launches=1,
        )
    )
    return SimpleNamespace(store=store, paths=SimpleNamespace(home=tmp_path))


@pytest.fixture
def app(tmp_path: Path) -> SimpleNamespace:
    return one_claude(tmp_path)


def clear_line(token: str | None, at: float = LAUNCH_AT + 5, cwd: str = "/w") -> str:
    payload = json.dumps(
        {
            "session_id": NEW,
            "transcript_path": f"/t/{NEW}.jsonl",
            "cwd": cwd,
            "hook_event_name": "SessionStart",
            "source": "clear",
        }
    )
    fields = [str(int(at)), "SessionStart", *([token] if token is not None else []), payload]
    return "\t".join(fields) + "\n"


def apply(app: SimpleNamespace, *lines: str) -> Agent:
    log = Path(hooks.log_path(str(app.paths.home), "id-a"))
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:
        fh.writelines(lines)
    apply_hook_log(app, app.store.require("a"))  # type: ignore[arg-type]
    return app.store.require("a")


def kinds(app: SimpleNamespace) -> list[tuple[str, object]]:
    return [(e.kind, e.data.get("reason")) for e in app.store.events("id-a")]


def test_the_launch_token_in_a_subfolder_of_the_cwd_is_adopted(app: SimpleNamespace) -> None:
    app.store.begin_launch("id-a", "tok", LAUNCH_AT)
    agent = apply(app, clear_line("tok", cwd="/w/src"))
    assert (agent.provider_session_id, agent.transcript_path) == (NEW, f"/t/{NEW}.jsonl")
    assert [
        (h["session_id"], h["previous"], h["reason"]) for h in app.store.session_changes("id-a")
    ] == [(OLD, None, "spawn"), (NEW, OLD, "clear")]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        pytest.param(clear_line(None), "no launch token", id="a line of a roost before tokens"),
        pytest.param(clear_line(""), "no launch token", id="no token in the writer's environment"),
        pytest.param(clear_line("other"), "another launch's token", id="an earlier launch's twin"),
        pytest.param(clear_line("tok", cwd="/wx"), "cwd /wx", id="a neighbour's cwd"),
    ],
)
def test_anything_else_is_logged_and_changes_nothing(
    app: SimpleNamespace, line: str, why: str
) -> None:
    app.store.begin_launch("id-a", "tok", LAUNCH_AT)
    agent = apply(app, line)
    assert agent.provider_session_id == OLD and agent.transcript_path is None
    [(kind, reason)] = kinds(app)[-1:]
    assert kind == "session-ignored" and why in str(reason)
    assert len(app.store.session_changes("id-a")) == 1


def test_an_agent_launched_before_tokens_takes_its_tokenless_lines(app: SimpleNamespace) -> None:
    """Launched by an older roost (no launch token on record): its hook lines have none, and are
    taken when they are from this launch (its recorded start) in its cwd; until it is launched
    again, with a token."""
    started = 1_800_000_000.0  # 2027-01-15T08:00:00Z, the record's started_at
    assert apply(app, clear_line(None, at=started - 3600)).provider_session_id == OLD
    assert apply(app, clear_line("tok", at=started + 5)).provider_session_id == OLD
    assert apply(app, clear_line(None, at=started + 5)).provider_session_id == NEW
    assert [k for k, _r in kinds(app)] == ["session-ignored", "session-ignored", "session"]


def test_other_foreign_lines_are_summed_up_in_one_event(app: SimpleNamespace) -> None:
    app.store.begin_launch("id-a", "tok", LAUNCH_AT)
    prompt = json.dumps({"session_id": OLD, "cwd": "/w", "prompt": "hi"})
    agent = apply(app, f"{int(LAUNCH_AT) + 1}\tUserPromptSubmit\t\t{prompt}\n" * 2)
    assert not agent.conversation_seen  # a stray prompt is no conversation of this agent's
    [event] = app.store.events("id-a")
    assert (event.kind, event.data["count"]) == ("hook-events-ignored", 2)


def test_v4_lineage_becomes_the_v5_history(tmp_path: Path) -> None:
    path = tmp_path / "roost.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    schema.apply(conn, 0, 4)
    conn.execute(
        "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
        "VALUES ('id-a', 'a', 'claude', '/w', 'a', 't0', 'running')"
    )
    conn.executemany(
        "INSERT INTO provider_sessions VALUES (?, 'id-a', ?)",
        [(OLD, "2027-01-01"), (NEW, "2027-01-02")],
    )
    conn.execute(
        "INSERT INTO events (agent_id, agent_name, at, kind, detail) VALUES "
        "('id-a', 'a', '2027-01-02', 'session', ?)",
        (json.dumps({"session_id": NEW, "previous": OLD, "source": "compact"}),),
    )
    conn.execute("COMMIT")
    conn.close()
    store = Store.open(path)
    assert [
        (h["session_id"], h["previous"], h["at"], h["reason"])
        for h in store.session_changes("id-a")
    ] == [(OLD, None, "2027-01-01", "earlier-roost"), (NEW, OLD, "2027-01-02", "compact")]
    assert store.launch("id-a") is None  # launched before tokens


# ---- status signals: the pane's title, claude's error words --------------------------------
NOW = 1_000_000.0


def classify(
    title: str,
    hook: tuple[str, float, str | None] | None = None,
    screen: str | None = "",
    provider: str = "command",
) -> tuple[str, str, str | None]:
    from roost.core import status
    from roost.providers import traits

    return status.classify(
        alive=True,
        has_window=True,
        base_state="running",
        roost_stopped=False,
        hook=hook,
        screen=screen,
        activity=NOW - 60,
        started_at=NOW - 5,
        patterns=status.patterns_for(traits.of(provider).patterns),
        now=NOW,
        title=title,
    )


@pytest.mark.parametrize(
    ("title", "wanted"),
    [
        pytest.param("⠋ Fix the tests", "working", id="braille spinner (codex)"),
        pytest.param("◐ Claude Code", "working", id="claude outside tmux"),
        pytest.param("✦  Working… (proj)", "working", id="gemini working"),
        pytest.param("✳ Claude Code", "starting", id="claude's still mark says nothing"),
        pytest.param("◇  Ready (proj)", "starting", id="gemini ready"),
        pytest.param("", "starting", id="no title"),
    ],
)
def test_a_spinner_title_is_work(title: str, wanted: str) -> None:
    assert classify(title)[0] == wanted


def test_a_spinner_title_outranks_idle_but_not_a_dialog_or_an_error() -> None:
    assert classify("⠙ x", hook=("idle", NOW - 2, None), provider="claude") == (
        "working",
        "title",
        None,
    )
    assert (
        classify("⠙ x", screen="Do you want to proceed?\n❯ 1. Yes", provider="claude")[0]
        == "waiting"
    )
    assert (
        classify("⠙ x", hook=("error", NOW - 2, "API Error: 500"), provider="claude")[0] == "error"
    )


def test_the_title_comes_with_the_listing_and_stays_text() -> None:
    from roost.tmux import format as panefmt

    row = "\t".join(
        [
            "$1",
            "a",
            "@1",
            "a",
            "1",
            "%1",
            "42",
            "0",
            "",
            "",
            "id-a",
            "",
            "1",
            "9",
            "100",
            "⠋ #(rm -rf ~)\tand a tab",
        ]
    )
    [pane] = panefmt.panes(row)
    assert pane.title == "⠋ #(rm -rf ~)\tand a tab" and pane.agent_id == "id-a"
    assert panefmt.FORMAT.endswith(f"#{{={panefmt.TITLE_LIMIT}:pane_title}}")


@pytest.mark.parametrize(
    "words",
    [
        "Please run /login · API Error: 403 OAuth token has been revoked",
        "Not logged in · Please run /login",
        "API Error: 429 Claude usage limit reached. Your limit will reset at 5pm",
        "API Error: 500 Internal server error",
    ],
)
def test_claude_failures_on_screen_are_not_idle(words: str) -> None:
    """Claude Code 2.1.332 prints a failed turn's words as an answer and keeps a hint in its
    empty prompt box until the next message: the screen says error when no hook does (its
    StopFailure hook carries the words as the reason when it fires)."""
    hint = (
        "Once fixed, resend your message"
        if "login" in words
        else "Resend your message to try again"
    )
    screen = f"❯ hello\n\n● {words}\n\n{'─' * 40}\n❯ {hint}\n{'─' * 40}\n  ? for shortcuts"
    found = classify("✳ Claude Code", screen=screen, provider="claude")
    assert found[:2] == ("error", "screen") and found[2] == hint


def test_a_status_comes_only_from_lines_of_the_current_launch(tmp_path: Path) -> None:
    """A stray writer (an orphaned twin after a server loss) appending "Stop" while the agent
    works does not make it idle: the launch line carries the launch's token, and the hook
    status is read from lines with that token only."""
    home = str(tmp_path)
    hooks.mark_launch(home, "id-a", LAUNCH_AT, "t0k")
    log = Path(hooks.log_path(home, "id-a"))
    with log.open("a") as fh:
        fh.write(f'{int(LAUNCH_AT) + 1}\tUserPromptSubmit\tt0k\t{{"prompt": "go"}}\n')
        fh.write(f"{int(LAUNCH_AT) + 2}\tStop\tother\t{{}}\n")  # another launch's process
        fh.write(f"{int(LAUNCH_AT) + 3}\tStop\t{{}}\n")  # no token at all
    found = hooks.last_status(home, "id-a", "t0k")
    assert found is not None and found[0] == "working"
    with log.open("a") as fh:
        fh.write(f"{int(LAUNCH_AT) + 4}\tStop\tt0k\t{{}}\n")
    found = hooks.last_status(home, "id-a", "t0k")
    assert found is not None and found[0] == "idle"


def test_a_launch_line_of_a_roost_before_tokens_reads_every_line(tmp_path: Path) -> None:
    home = str(tmp_path)
    log = Path(hooks.log_path(home, "id-a"))
    log.parent.mkdir(parents=True)
    log.write_text(
        f"{LAUNCH_AT:.3f}\t{hooks.LAUNCH}\t{{}}\n"
        f'{int(LAUNCH_AT) + 1}\tUserPromptSubmit\t{{"prompt": "go"}}\n'
    )
    found = hooks.last_status(home, "id-a", None)
    assert found is not None and found[0] == "working"
