"""roost web's pure decisions (core/web.py): what a screen becomes in HTML, the fleet's order,
which requests are the server's own."""

from __future__ import annotations

import pytest

from roost.core.errors import RoostError
from roost.core.web import (
    check_bind,
    fleet_groups,
    host_allowed,
    same_origin,
    screen_html,
)


@pytest.mark.parametrize(
    ("screen", "html"),
    [
        ("plain", "plain"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("\"q\" & 'a'", "&quot;q&quot; &amp; &#x27;a&#x27;"),
        ("\x1b[1;32mok\x1b[22;39m.", '<span style="color:#0dbc79;font-weight:bold">ok</span>.'),
        ("\x1b[38;5;196mX", '<span style="color:#ff0000">X</span>'),
        ("\x1b[48;2;1;2;3mX", '<span style="background:#010203">X</span>'),
        ("\x1b[7mR\x1b[27m", '<span style="color:var(--bg);background:var(--fg)">R</span>'),
        # escapes that are not colours never reach the page, nor does a lone ESC
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07\x1b[2Jz\x1b", "linkz"),
        ("\x1b[38;5mbad", "bad"),  # a truncated colour: dropped, the text kept
    ],
)
def test_screen_html(screen: str, html: str) -> None:
    assert screen_html(screen) == html


def test_fleet_puts_who_needs_you_first_then_tabs_parked_buried() -> None:
    rows: list[dict[str, object]] = [
        {"name": "z", "placement": "tile", "tab": "b", "status": "idle"},
        {"name": "y", "placement": "tile", "tab": "a", "status": "working"},
        {"name": "x", "placement": "buried", "tab": None, "status": "error"},
        {"name": "w", "placement": "detached", "tab": None, "status": "stopped"},
        {"name": "v", "placement": "buried", "tab": None, "status": "hibernated"},
    ]
    assert [(t, [r["name"] for r in rs]) for t, rs in fleet_groups(rows)] == [
        ("Needs you", ["x"]),
        ("Tab a", ["y"]),
        ("Tab b", ["z"]),
        ("Parked", ["w"]),
        ("Buried", ["v"]),
    ]


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        pytest.param("127.0.0.1:80", True, id="its-address"),
        pytest.param("[::1]:80", True, id="ipv6-loopback"),
        pytest.param("127.0.0.1:81", False, id="another-port"),
        pytest.param("attacker.example:80", False, id="another-name"),
        pytest.param(None, False, id="no-host"),
    ],
)
def test_requests_from_elsewhere_are_told_by_their_host(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, 80, "127.0.0.1", False) is allowed


@pytest.mark.parametrize(
    ("origin", "host", "same"),
    [
        pytest.param("https://box.tail:7377", "box.tail:7377", True, id="same"),
        pytest.param("null", "127.0.0.1:80", False, id="null"),
        pytest.param("http://127.0.0.1:81", "127.0.0.1:80", False, id="another-port"),
    ],
)
def test_requests_from_elsewhere_are_told_by_their_origin(
    origin: str, host: str, same: bool
) -> None:
    assert same_origin(origin, host) is same


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "box.example"])
def test_beyond_loopback_needs_the_flag(host: str) -> None:
    with pytest.raises(RoostError, match="--allow-remote"):
        check_bind(host, False)
    check_bind(host, True)


def test_a_token_that_is_not_ascii_is_refused_not_an_error() -> None:
    """hmac.compare_digest raises TypeError on a str with non-ASCII characters: a /login with
    such a token must be a refusal, not a server error."""
    from roost.web.auth import Sessions

    sessions = Sessions("watch-token", "typing-token")
    assert sessions.login("wätch-token") is None
    assert sessions.login("") is None
    made = sessions.login("watch-token")
    assert made is not None and not made[1].typing
    assert not sessions.csrf_ok(made[1], "ü")


def test_usage_where_known_on_the_fleet_and_agent_pages() -> None:
    """Issue 25: the fleet shows usage where known (tokens, and the estimated cost, labelled as
    one); an agent that used none shows nothing."""
    from roost.core.web import usage_text
    from roost.web.pages import agent, fleet_section

    used = {"total": 12_345, "cost_usd": 0.0421, "cost_is_estimate": True}
    assert usage_text(used) == "12.3k tokens · ~$0.04 (est.)"
    assert usage_text({"total": 950, "cost_usd": None}) == "950 tokens · cost ?"
    assert usage_text({"total": 0, "cost_usd": 0.0}) == ""
    assert usage_text(None) == ""
    row = {"name": "a", "id": "1", "provider": "claude", "placement": "tile", "tab": "main"}
    assert "12.3k tokens" in fleet_section([{**row, "status": "idle", "usage": used}])
    assert "tokens" not in fleet_section([{**row, "status": "idle", "usage": None}])
    page = agent({**row, "status": "idle", "usage": used}, "", None, [], "csrf")
    assert "<dt>usage</dt><dd>12.3k tokens · ~$0.04 (est.)</dd>" in page


def test_the_agent_page_shows_its_question_and_what_roost_holds_for_it() -> None:
    from roost.core.questions import Choice, Question
    from roost.web.pages import agent

    q = Question("Trust this folder?", (Choice("1", "Trust <and> go"), Choice("2", "Back")), 0)
    row = {"name": "a", "id": "1", "provider": "codex", "status": "waiting", "held_inputs": 1}
    page = agent(row, "", q, [], "csrf")
    assert '<p class="question">Trust this folder?</p>' in page
    assert f'data-key="1" data-question="{q.fingerprint}">1. Trust &lt;and&gt; go<' in page
    assert "<dt>held</dt><dd>1 (sent once it is at its input)</dd>" in page
    assert "<dt>held</dt><dd>-</dd>" in agent({**row, "held_inputs": 0}, "", None, [], "csrf")


def test_an_agent_whose_changes_collide_is_marked_on_the_fleet() -> None:
    from roost.web.pages import fleet_section

    row = {"id": "1", "name": "api", "provider": "claude", "status": "idle", "tab": "main"}
    marked = fleet_section([{**row, "collides_with": ["web", "<b>x"]}])
    assert '<span class="usage collides">collides: web, &lt;b&gt;x</span>' in marked
    assert "collides" not in fleet_section([{**row, "collides_with": []}])
