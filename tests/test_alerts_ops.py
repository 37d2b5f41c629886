"""Alerts to the person (issue 21, part 4), delivery on the fake tmux: the event log's cursor,
the dedupe state and the outbox in the store (a restart neither loses nor repeats one), every
channel at once within a bounded time (a slow or failing endpoint blocks nothing and is not
retried forever), and a command channel's texts always one argument each (alerts/operations.py)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_app import fake_app
from notify_stub import Stub

from roost.alerts import operations as alerts
from roost.core.settings import parse
from roost.ops.context import UNREAD, App, reread_settings
from roost.store import alerts as queue
from roost.store import events as event_log

ARGV_TO_FILE = str(Path(__file__).parent / "bin" / "argv-to-file")
AGENT = "11111111-2222-4333-8444-555555555555"


@pytest.fixture
def stub() -> Iterator[Stub]:
    made = Stub().start()
    yield made
    made.stop()


def make_app(tmp_path: Path, fake: Any, clock: Any, notify: dict[str, Any]) -> App:
    return fake_app(tmp_path, fake, clock, {"notify": notify})


def command(out: Path) -> list[str]:
    return [sys.executable, ARGV_TO_FILE, str(out)]


def lines(out: Path) -> list[list[str]]:
    return [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


def log_status(app: App, status: str, previous: str, name: str = "api", **detail: Any) -> None:
    with app.store.write() as c:
        event_log.append(
            c,
            AGENT,
            name,
            c.now_iso(),
            "status",
            {"status": status, "previous": previous, **detail},
        )


def test_a_restart_neither_loses_nor_repeats_an_alert(
    tmp_path: Path, fake: Any, clock: Any
) -> None:
    out = tmp_path / "argv.jsonl"
    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    log_status(app, "error", "working", reason="API Error: 500 overloaded")
    assert alerts.decide_new(app) == 1
    app.close()  # the process dies after deciding, before delivering

    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    alerts.run_pass(app)
    alerts.run_pass(app)
    assert lines(out) == [["roost: api hit an error", "API Error: 500 overloaded"]]
    app.close()

    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    assert alerts.run_pass(app) == []  # decided and delivered: nothing again
    assert len(lines(out)) == 1
    app.close()


def test_a_delivery_cut_off_is_tried_once_more_then_given_up(
    tmp_path: Path, fake: Any, clock: Any
) -> None:
    out = tmp_path / "argv.jsonl"
    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    log_status(app, "waiting", "working")
    alerts.decide_new(app)
    for _ in range(alerts.MAX_TRIES):  # killed while delivering, each time
        with app.store.write() as c:
            assert len(queue.claim(c, alerts.MAX_TRIES)) == 1
    assert alerts.run_pass(app) == []
    assert lines(out) == []
    assert [a["outcome"] for a in queue.delivered(app.store.conn)] == [
        {"given_up": "cut off 2 times"}
    ]
    app.close()


def test_a_pass_cut_off_sends_again_only_through_the_channels_that_had_not_answered(
    tmp_path: Path, fake: Any, clock: Any, stub: Stub
) -> None:
    out = tmp_path / "argv.jsonl"
    notify = {"command": command(out), "webhook": stub.url + "/hook"}
    app = make_app(tmp_path, fake, clock, notify)
    log_status(app, "waiting", "working")
    alerts.decide_new(app)
    with app.store.write() as c:  # the pass that dies after the command answered
        [pending] = queue.claim(c, alerts.MAX_TRIES)
    sends = alerts.channels(app.settings)
    alerts.deliver([pending], {"command": sends["command"]}, 5.0, None)
    with app.store.write() as c:
        queue.channel_done(c, pending.id, "command", "ok")
    app.close()  # killed here: the webhook never heard

    app = make_app(tmp_path, fake, clock, notify)
    [done] = alerts.run_pass(app)
    assert done.outcome == {"webhook": "ok"}
    assert len(lines(out)) == 1 and len(stub.posts) == 1
    assert queue.delivered(app.store.conn)[0]["outcome"] == {"command": "ok", "webhook": "ok"}
    app.close()


def test_two_deciders_at_once_queue_one_alert(tmp_path: Path, fake: Any, clock: Any) -> None:
    app = make_app(tmp_path, fake, clock, {})
    other = make_app(tmp_path, fake, clock, {})
    log_status(app, "waiting", "working")
    # The second read the cursor before the first moved it: its compare-and-set finds it moved.
    after = queue.cursor(other.store.conn)
    assert alerts.decide_new(app) == 1
    with other.store.write() as c:
        assert not queue.advance(c, after, after + 1, {})
    alerts.decide_new(other)  # only the `alert` event the first logged is new to it
    assert len(queue.delivered(app.store.conn)) == 1
    app.close()
    other.close()


def test_a_slow_endpoint_blocks_nothing_and_a_failing_one_is_logged_not_retried(
    tmp_path: Path, fake: Any, clock: Any, stub: Stub
) -> None:
    stub.delay = 30.0  # never answers within the timeout
    failing = Stub(status=500).start()
    out = tmp_path / "argv.jsonl"
    notify = {
        "command": command(out),
        "webhook": stub.url + "/hook",
        "ntfy": failing.url + "/topic",
        "timeout": 5,  # a Python started under load (CI's) takes more than 1 s
    }
    app = make_app(tmp_path, fake, clock, notify)
    log_status(app, "exited", "working", exit_code=3)
    began = time.monotonic()
    done = alerts.run_pass(app)
    took = time.monotonic() - began
    failing.stop()
    assert took < stub.delay / 2  # the timeout and its grace, never the slow endpoint's 30 s
    assert lines(out) == [
        ["roost: api crashed (exit 3)", "Its CLI ended with an error: roost wake api"]
    ]
    outcome = done[0].outcome
    assert outcome["command"] == "ok"
    assert outcome["webhook"] != "ok" and outcome["ntfy"].endswith(
        "answered 500 Internal Server Error"
    )
    failed = [e for e in app.store.events(AGENT) if e.kind == "alert-failed"]
    assert sorted(str(e.data["channel"]) for e in failed) == ["ntfy", "webhook"]
    assert alerts.run_pass(app) == []  # not retried
    assert len(stub.posts) == 1
    app.close()


def test_ntfy_and_webhook_get_the_title_and_body(
    tmp_path: Path, fake: Any, clock: Any, stub: Stub
) -> None:
    notify = {"ntfy": stub.url + "/topic", "webhook": stub.url + "/hook"}
    app = make_app(tmp_path, fake, clock, notify)
    log_status(
        app, "limited", "working", name="Ünïcode", reason="You've hit your limit · resets 3pm"
    )
    alerts.run_pass(app)
    posts = {p["path"]: p for p in stub.posts}
    topic = posts["/topic"]
    assert topic["body"].decode() == "You've hit your limit · resets 3pm"
    from email.header import decode_header

    raw, charset = decode_header(topic["headers"]["Title"])[0]
    assert raw.decode(charset or "ascii") == "roost: Ünïcode hit a usage limit"
    assert topic["headers"]["Priority"] == "high"
    sent = json.loads(posts["/hook"]["body"])
    assert sent == {
        "title": "roost: Ünïcode hit a usage limit",
        "body": "You've hit your limit · resets 3pm",
        "agent": "Ünïcode",
        "edge": "limited",
    }
    app.close()


@pytest.mark.parametrize(
    "hostile",
    [
        "$(touch {pwned})",
        "`touch {pwned}`; touch {pwned} && echo",
        "a 'quoted' \"word\" | tee {pwned}",
        "--help -x",
    ],
)
def test_a_hostile_text_stays_one_argument_of_the_command(tmp_path: Path, hostile: str) -> None:
    pwned = tmp_path / "pwned"
    out = tmp_path / "argv.jsonl"
    text = hostile.format(pwned=pwned)
    sends = alerts.channels(parse({"notify": {"command": [*command(out), "--"]}}))
    probe = queue.Pending(
        1, AGENT, text, "waiting", f"roost: {text} is waiting", text + "\n\x1b]0;x\x07", ()
    )
    assert alerts.deliver([probe], sends, 10.0) == {1: {"command": "ok"}}
    assert lines(out) == [["--", probe.title, probe.body]]
    assert not pwned.exists()


def test_a_finished_turn_alerts_for_a_child_of_a_persons_agent_only(
    tmp_path: Path, fake: Any, clock: Any
) -> None:
    """A person's agent has no orchestration parent; its child's finished turn notifies the
    person, a grandchild's only its parent agent (core/notify)."""
    from roost.ops import lifecycle

    out = tmp_path / "argv.jsonl"
    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    made = {
        name: lifecycle.spawn(
            app, name, provider="command", cwd=str(app.paths.home), args=("sh",)
        ).agent
        for name in ("lead", "kid", "grandkid")
    }
    app.store.update(made["kid"].id, orchestration_parent=made["lead"].id)
    app.store.update(made["grandkid"].id, orchestration_parent=made["kid"].id)
    alerts.run_pass(app)  # the spawns' events: no edge
    for name in ("kid", "grandkid", "lead"):
        app.store.log(made[name], "status", status="idle", previous="working")
    alerts.run_pass(app)
    assert lines(out) == [
        ["roost: kid finished its turn", "Its result went to its parent: roost attach kid"]
    ]
    app.close()


def test_the_service_rereads_config_only_when_it_changed_and_says_a_breakage_once(
    tmp_path: Path, fake: Any, clock: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """[notify] set while the service runs is heard at the next pass; a broken config.toml is
    said once (not at every pass, filling the service's pane) and the last good one kept."""
    app = make_app(tmp_path, fake, clock, {"terminal": False})
    config = app.paths.config_file
    config.write_text("[notify]\nterminal = false\n")
    seen = reread_settings(app, UNREAD, "alerts")
    assert app.settings.notify.terminal is False
    config.write_text("[notify\n")  # broken
    for _ in range(3):
        seen = reread_settings(app, seen, "alerts")
    assert capsys.readouterr().err.count("keeping the last good config") == 1
    assert app.settings.notify.terminal is False
    config.write_text("[notify]\nterminal = true\n")
    seen = reread_settings(app, seen, "alerts")
    assert app.settings.notify.terminal is True


def test_one_alert_per_edge_across_restarts_second_readers_and_flickers(
    tmp_path: Path, fake: Any, clock: Any
) -> None:
    """An agent that stays waiting: each restart (a new App: nothing kept in memory) sees it
    flicker out of waiting and back within the debounce, as a redraw does, while a second
    reader runs passes too. Its edge is remembered in the store: one alert in all (before:
    one more at each restart)."""
    out = tmp_path / "argv.jsonl"
    app = make_app(tmp_path, fake, clock, {"command": command(out)})
    log_status(app, "waiting", "working")
    alerts.run_pass(app)
    app.close()
    for _ in range(3):
        clock.advance(60)
        app = make_app(tmp_path, fake, clock, {"command": command(out)})
        other = make_app(tmp_path, fake, clock, {"command": command(out)})
        log_status(app, "idle", "waiting")
        alerts.run_pass(other)
        clock.advance(0.5)
        log_status(app, "waiting", "idle")
        alerts.run_pass(app)
        alerts.run_pass(other)
        other.close()
        app.close()
    assert lines(out) == [
        ["roost: api is waiting for you", "It asks you something: roost attach api"]
    ]


def test_an_agents_remembered_edges_go_with_its_record(app: App) -> None:
    """alert_edges has no foreign key (the alerts read events, which outlive their agent):
    `roost rm` left each removed agent's edges behind for good."""
    from roost.ops import lifecycle

    agent = lifecycle.spawn(
        app, "gone", provider="command", cwd=str(app.paths.home), args=("sh",)
    ).agent
    with app.store.write() as c:
        event_log.append(
            c, agent.id, "gone", c.now_iso(), "status", {"status": "waiting", "previous": "idle"}
        )
    alerts.decide_new(app)
    assert any(key[0] == agent.id for key in queue.seen(app.store.conn))
    lifecycle.rm(app, "gone")
    assert not any(key[0] == agent.id for key in queue.seen(app.store.conn))
