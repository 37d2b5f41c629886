"""Alerts to the person (issue 21, part 4), the pure decisions: edges only, one per agent per
edge, debounced on the events' own times, quiet for an agent the person looks at, and a message
that names the agent and keeps to plain text (alerts/rules.py, core/settings.py's [notify])."""

from __future__ import annotations

from typing import Any, cast

import pytest

from roost.alerts import rules as alerts
from roost.core.events import Event, EventKind
from roost.core.settings import Problem, problems

T0 = "2026-01-01T00:00:00.000+00:00"


def at(seconds: float) -> str:
    return f"2026-01-01T00:00:{seconds:06.3f}+00:00"


def status(n: int, agent: str, new: str, old: str | None, when: float, **more: Any) -> Event:
    return Event(
        n, agent, f"name-{agent}", at(when), "status", {"status": new, "previous": old, **more}
    )


def edges(events: list[Event], **kw: Any) -> list[tuple[str, str]]:
    found, _ = alerts.decide(
        events, kw.get("state", {}), kw.get("children", set()), kw.get("attached", set())
    )
    return [(a.agent_id, a.edge) for a in found]


@pytest.mark.parametrize(
    ("events", "wanted"),
    [
        pytest.param(
            [status(1, "a", "waiting", "working", 0), status(2, "a", "waiting", "waiting", 1)],
            [("a", "waiting")],
            id="a repeated status is no edge",
        ),
        pytest.param(
            [
                status(1, "a", "waiting", "working", 0),
                status(2, "a", "working", "waiting", 1),
                status(3, "a", "waiting", "working", 2),
            ],
            [("a", "waiting")],
            id="a dialog that flickers within the debounce alerts once",
        ),
        pytest.param(
            [
                status(1, "a", "waiting", "working", 0),
                status(2, "a", "working", "waiting", 3),
                status(3, "a", "waiting", "working", 9),
            ],
            [("a", "waiting"), ("a", "waiting")],
            id="waiting again after it left and the debounce passed",
        ),
        pytest.param(
            [status(1, "a", "waiting", "working", 0), status(2, "a", "waiting", "idle", 30)],
            [("a", "waiting")],
            id="no re-arm without leaving: one per edge",
        ),
        pytest.param(
            [
                Event(1, "a", "x", at(0), "exited", {"exit_code": 137}),
                status(2, "a", "exited", "working", 4, exit_code=137),
            ],
            [("a", "crashed")],
            id="the pane-died hook and a refresh report one crash once",
        ),
        pytest.param(
            [status(1, "a", "exited", "idle", 0, exit_code=0)],
            [("a", "exited")],
            id="a clean exit",
        ),
        pytest.param(
            [
                status(1, "a", "error", "working", 0, reason="API Error: 500"),
                status(2, "b", "limited", "working", 0),
                status(3, "c", "failed", "exited", 0),
            ],
            [("a", "error"), ("b", "limited"), ("c", "failed")],
            id="error, usage limit, crash loop",
        ),
        pytest.param(
            [
                status(1, "a", "idle", "working", 0),
                status(2, "a", "working", "idle", 1),
                status(3, "a", "starting", None, 2),
            ],
            [],
            id="ordinary turns are no edge",
        ),
    ],
)
def test_edges(events: list[Event], wanted: list[tuple[str, str]]) -> None:
    assert edges(events) == wanted


def event(n: int, agent: str, kind: str, when: float, **more: Any) -> Event:
    """An event of any kind the log may hold (`woke`: an older version's start, too)."""
    return Event(n, agent, f"name-{agent}", at(when), cast(EventKind, kind), more)


@pytest.mark.parametrize(
    ("events", "wanted"),
    [
        pytest.param(
            [
                status(1, "a", "waiting", "working", 0),
                status(2, "a", "idle", "waiting", 40),
                status(3, "a", "waiting", "idle", 41),
            ],
            [("a", "waiting")],
            id="a flicker long after the alert is no new edge",
        ),
        pytest.param(
            [
                status(1, "a", "waiting", "working", 0),
                status(2, "a", "error", "waiting", 40, reason="MCP server roost is not connected"),
                status(3, "a", "waiting", "error", 40.5),
            ],
            [("a", "waiting"), ("a", "error")],
            id="back to waiting after a brief other edge: waiting is not repeated",
        ),
        pytest.param(
            [
                event(1, "a", "exited", 0, exit_code=143),
                status(2, "a", "exited", "idle", 0.2),
            ],
            [("a", "crashed")],
            id="a crash and an exit of one process are one edge",
        ),
        pytest.param(
            [
                status(1, "a", "waiting", "working", 0),
                event(2, "a", "sent", 60),
                status(3, "a", "working", "waiting", 60),
                status(4, "a", "waiting", "working", 61),
            ],
            [("a", "waiting"), ("a", "waiting")],
            id="after an action a new question alerts at once",
        ),
        pytest.param(
            [
                event(1, "a", "exited", 0, exit_code=1),
                event(2, "a", "restarted", 1),
                event(3, "a", "exited", 2, exit_code=1),
                event(4, "a", "restarted", 4),
                event(5, "a", "exited", 6, exit_code=1),
            ],
            [("a", "crashed"), ("a", "crashed")],
            id="a crash loop alerts at most once per debounce",
        ),
        pytest.param(
            [
                event(1, "a", "stopping", 0, until=at(30)),
                status(2, "a", "exited", "idle", 1, exit_code=143),
                event(3, "a", "exited", 1.5, exit_code=143),
                event(4, "a", "killed", 2),
            ],
            [],
            id="an exit during roost's own stop is that stop's",
        ),
        pytest.param(
            [
                event(1, "a", "stopping", 0, until=at(30)),
                event(2, "a", "stop-failed", 1, error="survived SIGKILL"),
                status(3, "a", "exited", "idle", 5, exit_code=3),
            ],
            [("a", "crashed")],
            id="after a stop that failed the exit is the agent's",
        ),
        pytest.param(
            [
                event(1, "a", "stopping", 0, until=at(30)),
                event(2, "a", "killed", 1),
                event(3, "a", "started", 10),
                status(4, "a", "exited", "idle", 12, exit_code=3),
            ],
            [("a", "crashed")],
            id="a crash of the next launch is its own",
        ),
        pytest.param(
            [
                event(1, "a", "stopping", 0, until=at(30)),
                status(2, "a", "exited", "idle", 31, exit_code=3),
            ],
            [("a", "crashed")],
            id="past a stop's deadline an exit is the agent's (a stop cut off)",
        ),
        pytest.param(
            [
                event(1, "a", "stopping", 0, until=at(30)),
                event(2, "a", "exited", 1, exit_code=143),
                event(3, "a", "killed", 1.5),
                event(4, "a", "woke", 2),
                event(5, "a", "started", 2.5),
                event(6, "a", "exited", 5, exit_code=3),  # 4 s after the silenced one
            ],
            [("a", "crashed")],
            id="an exit a stop silenced is not remembered as alerted (no debounce after it)",
        ),
    ],
)
def test_one_alert_per_edge(events: list[Event], wanted: list[tuple[str, str]]) -> None:
    assert edges(events) == wanted


def test_the_same_events_decided_in_any_batches_alert_the_same() -> None:
    """The state between batches is all a decider keeps (a restart, a second decider): the
    events split anywhere decide as in one go."""
    events = [
        status(1, "a", "waiting", "working", 0),
        status(2, "a", "idle", "waiting", 40),
        status(3, "a", "waiting", "idle", 41),
        event(4, "b", "stopping", 41, until=at(50)),
        status(5, "b", "exited", "idle", 42, exit_code=143),
        status(6, "a", "error", "waiting", 43),
        status(7, "a", "waiting", "error", 44),
    ]
    whole = edges(events)
    for cut in range(len(events)):
        first, state = alerts.decide(events[:cut], {}, set(), set())
        later, _ = alerts.decide(events[cut:], state, set(), set())
        assert [(a.agent_id, a.edge) for a in first + later] == whole
    assert whole == [("a", "waiting"), ("a", "error")]


def test_a_childs_finished_turn_alerts_only_when_its_parent_is_a_persons_agent() -> None:
    turn = [status(1, "kid", "idle", "working", 0)]
    assert edges(turn, children={"kid"}) == [("kid", "finished")]
    assert edges(turn, children=set()) == []


def test_quiet_while_looked_at_and_no_late_alert_after() -> None:
    first = [status(1, "a", "waiting", "working", 0)]
    found, state = alerts.decide(first, {}, set(), {"a"})
    assert found == []
    assert state[("a", "waiting")].left is None  # remembered in that state
    later = [status(2, "a", "waiting", "waiting", 10)]
    assert alerts.decide(later, state, set(), set())[0] == []


def test_state_survives_a_restart_of_the_decider() -> None:
    """The state the first decider stored is all the next needs: no repeat."""
    events = [status(1, "a", "waiting", "working", 0)]
    _, state = alerts.decide(events, {}, set(), set())
    again = [status(2, "a", "waiting", "working", 1)]
    assert edges(again, state=dict(state)) == []


def test_message_names_the_agent_and_keeps_to_plain_text() -> None:
    hostile = alerts.Alert(1, "a", "x\x1b]777;notify;pwn\x07", "waiting", T0, None)
    title, body = alerts.message(hostile, "Do you want\x1b[2J to proceed?\x07\n")
    assert title == "roost: x]777,notify,pwn is waiting for you".replace(",", ";")
    assert body == "Do you want[2J to proceed?"
    assert all(ord(ch) >= 32 for ch in title + body)
    out = alerts.osc(title, body, in_tmux=False)
    # Exactly the sequences roost writes: OSC 777, OSC 9, BEL; a ";" of the title cannot add
    # fields to OSC 777.
    assert out.count("\x1b") == 2 and out.count("\x07") == 3
    assert out.startswith("\x1b]777;notify;roost: x]777,notify,pwn is waiting for you;")


def test_passthrough_doubles_every_inner_escape() -> None:
    out = alerts.osc("t", "b", in_tmux=True)
    parts = out[:-1].split("\x1b\\")  # each wrapped sequence ends with ESC backslash
    assert [p for p in parts if p] == [
        "\x1bPtmux;\x1b\x1b]777;notify;t;b\x07",
        "\x1bPtmux;\x1b\x1b]9;t: b\x07",
    ]
    assert out.endswith("\x1b\\\x07")


@pytest.mark.parametrize(
    ("screen", "wanted"),
    [
        (
            "Bash command\n  rm -rf build\n\nDo you want to proceed?\n❯ 1. Yes\n  2. No\n"
            "Esc to cancel",
            "Do you want to proceed?",
        ),
        ("Allow command?\n│ > git push", "Allow command?"),
        # aider's: the question without its choices (the alert asks; the choices are buttons)
        ("Run shell command? (Y)es/(N)o [Yes]: ", "Run shell command?"),
        # Claude Code's folder trust: its question far above its unnumbered choices
        (
            "Quick safety check: Is this a project you created or one you trust? (Like your own"
            "\ncode.)\n Security guide\n\n ❯ No, exit\n   Yes, I trust this folder\n\n"
            " Enter to confirm · Esc to cancel",
            "Is this a project you created or one you trust?",
        ),
        ("hello\n> ", None),
    ],
)
def test_question_from_the_screen(screen: str, wanted: str | None) -> None:
    assert alerts.question(screen, ["Do you want", "(Y)es/(N)o"]) == wanted


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        ({"command": "notify-send roost"}, "notify.command", "must be a list of non-empty strings"),
        ({"command": []}, "notify.command", "must be a list of non-empty strings"),
        ({"command": ["notify-send", 3]}, "notify.command", "must be a list of non-empty"),
        ({"ntfy": "ntfy.sh/topic"}, "notify.ntfy", "must be an http:// or https:// URL"),
        ({"webhook": "file:///etc/passwd"}, "notify.webhook", "must be an http:// or https://"),
        ({"webhook": "http://exa mple.org/"}, "notify.webhook", "must be an http:// or https://"),
        ({"terminal": "yes"}, "notify.terminal", "must be true or false"),
        ({"timeout": 0}, "notify.timeout", "must be a number of seconds above 0"),
        ({"email": "me@x"}, "notify.email", "is not a setting roost knows"),
    ],
)
def test_notify_config_problems(table: dict[str, Any], key: str, message: str) -> None:
    found = problems({"notify": table})
    assert [p.key for p in found] == [key]
    assert message in found[0].message


def test_a_good_notify_table_has_no_problem() -> None:
    good = {
        "command": ["notify-send", "roost"],
        "ntfy": "https://ntfy.sh/t",
        "webhook": "http://127.0.0.1:8080/hook",
        "terminal": False,
        "timeout": 2.5,
    }
    assert problems({"notify": good}) == []
    assert problems({"notify": "x"}) == [Problem("notify", 'must be a table ([notify]), not "x"')]


# Claude Code 2.1.332's permission dialog as captured (tests/test_real_claude_alerts.py)
CLAUDE_DIALOG = "\n".join(
    [
        "earlier conversation: do you want anything?",
        "─" * 80,
        " Bash command",
        ' Tip: auto mode handles these prompts for you — choose "switch to auto mode" below',
        " Write a marker file",
        "╌" * 80,
        " echo roost > marker.txt",
        "╌" * 80,
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. Yes, and always allow access to /tmp/work from this project",
        "   3. Yes, and switch to auto mode · auto mode handles these prompts for you",
        "   4. No",
        "",
        " Esc to cancel · Tab to amend",
    ]
)


def test_claudes_dialog_says_the_tool_its_description_and_command() -> None:
    assert alerts.question(CLAUDE_DIALOG, ["Do you want to proceed?"]) == (
        "Do you want to proceed? — Bash command · Write a marker file · echo roost > marker.txt"
    )
