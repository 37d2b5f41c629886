"""push/remote.py's reading of a host's stream, in an injected world (the fake tmux, a manual
clock, the real store): a host's alert line becomes one push per subscribed device, named
HOST:NAME, its words made printable and bounded; a line read again (a reconnect's replay) pushes
nothing; other kinds of lines, edges that need no person, over-long or malformed lines push
nothing. No ssh here: the error edge asks the host nothing (tests/test_push_hosts.py runs the
waiting edge and the answer over real OpenSSH)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app

from roost.ops.context import App
from roost.push import operations as push
from roost.push import remote, rules
from roost.store import hosts as hostsdb
from roost.store import push as rows

HOST = hostsdb.Host("h1", "me@h1", "roost", {}, "2031-01-01T00:00:00+00:00")
ENDPOINT = "https://push.example.com/x"


@pytest.fixture
def app(tmp_path: Path, fake: Any, clock: Any) -> Iterator[App]:
    made = fake_app(tmp_path, fake, clock, {"notify": {"terminal": False}})
    yield made
    made.close()


def subscribed(app: App) -> str:
    device = push.pair(app, push.pairing_code(app), "phone", None).device_id
    with app.store.write() as c:
        rows.subscribe(c, device, rules.Subscription(ENDPOINT, "BPk", "a2"), c.now_iso())
    return device


def line(seq: int, **fields: object) -> str:
    said = {"seq": seq, "kind": "alert", "name": "api", "edge": "error", "at": "T"}
    return json.dumps({**said, **fields})


def test_a_hosts_alert_is_one_push_per_device_and_a_replay_none(app: App) -> None:
    device = subscribed(app)
    hostile = "roost: api hit an error\x1b]52;c;bad\x07\x1b[2J" + "x" * 500
    [pushed] = remote.on_line(app, HOST, line(7, title=hostile, body="boom\r\n\x1b[31mred"))
    data = pushed.data
    assert pushed.device_id == device and data["agent"] == "h1:api" and data["edge"] == "error"
    title, body = str(data["title"]), str(data["body"])
    assert title.endswith("… (on h1)") and len(title) <= 120
    assert body == "boom [31mred" and not any(ord(ch) < 32 for ch in title + body)
    assert data["url"] == "/" and data["actions"] == [] and "capability" not in data
    assert rows.host_cursor(app.store.conn, "h1") == 7
    assert remote.on_line(app, HOST, line(7)) == []  # read before: a reconnect's replay
    assert remote.on_line(app, HOST, line(5)) == []
    assert len(remote.on_line(app, HOST, line(8, edge="crashed"))) == 1


@pytest.mark.parametrize(
    "text",
    [
        line(9, edge="exited"),  # needs no person
        line(9, kind="status"),
        line(9, name="a b"),  # no agent's name
        line(9, name="x:y"),
        line(True),
        "not json",
        "[1, 2]",
        line(9, body="y" * rules.MAX_HOST_LINE),  # over-long: not read
        "[" * 100000,
    ],
)
def test_other_or_malformed_lines_push_nothing(app: App, text: str) -> None:
    subscribed(app)
    assert remote.on_line(app, HOST, text) == []
    assert rows.host_cursor(app.store.conn, "h1") is None


def test_without_a_subscribed_device_a_line_pushes_nothing(app: App) -> None:
    assert remote.on_line(app, HOST, line(3)) == []
    assert rows.host_cursor(app.store.conn, "h1") == 3  # read: not pushed later


def test_an_alert_read_long_after_it_was_decided_is_not_pushed(app: App) -> None:
    """After a gap (this service stopped, or no device subscribed for a while) the stream is
    read from its cursor: an alert decided more than 10 minutes ago is no longer news."""
    from datetime import datetime, timedelta

    subscribed(app)
    now = datetime.fromisoformat(app.store.now_iso())
    old, recent = (now - timedelta(minutes=m) for m in (11, 9))
    assert remote.on_line(app, HOST, line(4, at=old.isoformat())) == []
    assert rows.host_cursor(app.store.conn, "h1") == 4  # read: not pushed later either
    assert len(remote.on_line(app, HOST, line(5, at=recent.isoformat()))) == 1
    ahead = now + timedelta(hours=1)  # a host whose clock runs ahead: still news
    assert len(remote.on_line(app, HOST, line(6, at=ahead.isoformat()))) == 1


def test_a_streams_over_long_line_comes_in_bounded_pieces_none_pushed(app: App) -> None:
    """system/ssh.lines reads a line at most MAX_LINE characters at a time: a host that sends
    one endless line costs bounded memory, and its pieces are no alert."""
    import sys

    from roost.system import ssh

    subscribed(app)
    spew = f"import sys; sys.stdout.write('{{' * {3 * ssh.MAX_LINE} + '\\n' + {line(9)!r} + '\\n')"
    pieces = list(ssh.lines([sys.executable, "-c", spew]))
    assert max(len(p) for p in pieces) <= ssh.MAX_LINE and len(pieces) >= 4
    assert [p for p in pieces if remote.on_line(app, HOST, p)] == [line(9) + "\n"]
