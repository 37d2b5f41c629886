"""Alerts to the person (issue 21, part 4) end to end: fake agent CLIs on a real tmux, the
command, ntfy and webhook channels against a loopback stand-in, `roost notify run` and `roost
notify test` as a person runs them, and quiet for an agent the person looks at."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from notify_stub import Stub

from roost.alerts.rules import DEBOUNCE

from conftest import Env

pytestmark = pytest.mark.tmux

ARGV_TO_FILE = str(Path(__file__).parent / "bin" / "argv-to-file")


@pytest.fixture
def stub() -> Iterator[Stub]:
    made = Stub().start()
    yield made
    made.stop()


def configure(world: Env, out: Path, stub: Stub) -> None:
    command = json.dumps([sys.executable, ARGV_TO_FILE, str(out)])
    world.home.mkdir(mode=0o700, exist_ok=True)
    (world.home / "config.toml").write_text(
        f'[notify]\ncommand = {command}\nntfy = "{stub.url}/topic"\n'
        f'webhook = "{stub.url}/hook"\ntimeout = 30\n'
    )


def spawn(world: Env, name: str) -> None:
    world.roost("spawn", name, "--cwd", str(world.tmp / "work"))


def sent(out: Path) -> list[list[str]]:
    return [json.loads(x)[-2:] for x in out.read_text().splitlines()] if out.exists() else []


def all_answered(world: Env) -> bool:
    """Every queued alert's channels answered, as the store says (read-only)."""
    with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
        rows = db.execute("SELECT outcome FROM alerts").fetchall()
    return bool(rows) and all(r[0] and len(json.loads(r[0])) == 3 for r in rows)


def test_waiting_reaches_every_channel_once(world: Env, stub: Stub) -> None:
    out = world.tmp / "argv.jsonl"
    spawn(world, "api")
    world.wait_status("api", "idle")
    configure(world, out, stub)
    world.roost("send", "api", "ask")
    world.wait_status("api", "waiting")  # `ls` records the change in the event log
    world.roost("notify", "run", "--once")
    world.roost("notify", "run", "--once")  # a second pass (a restart) repeats nothing
    assert sent(out) == [["roost: api is waiting for you", "Do you want to proceed?"]]
    assert [p["headers"]["Title"] for p in stub.posts if p["path"] == "/topic"] == [
        "roost: api is waiting for you"
    ]
    hook = [json.loads(p["body"]) for p in stub.posts if p["path"] == "/hook"]
    assert hook == [
        {
            "title": "roost: api is waiting for you",
            "body": "Do you want to proceed?",
            "agent": "api",
            "edge": "waiting",
        }
    ]


def test_quiet_for_an_agent_the_person_looks_at(world: Env, stub: Stub) -> None:
    out = world.tmp / "argv.jsonl"
    for name in ("looked", "tiled"):
        spawn(world, name)
    for name in ("looked", "tiled"):
        world.wait_status(name, "idle")
    configure(world, out, stub)
    # A person's terminal attached to "looked"'s home (a client in a pane of another server),
    # and "tiled" shown as a tile of a view nobody looks at.
    outer = f"outer-{uuid.uuid4().hex[:8]}"
    attach = ["env", "-u", "TMUX", "tmux", "-L", world.socket, "attach-session", "-t"]
    try:
        subprocess.run(
            ["tmux", "-L", outer, "-f", "/dev/null", "new-session", "-d", *attach, "=looked"],
            env=world.env,
            check=True,
            timeout=30,
        )
        subprocess.run(
            [
                "tmux",
                "-L",
                f"{world.socket}-view",
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                *attach,
                "=tiled",
            ],
            env=world.env,
            check=True,
            timeout=30,
        )
        world.wait_for(
            lambda: len(world.tmux("list-clients", "-F", "#{client_tty}").split()) == 2,
            what="two clients",
        )
        for name in ("looked", "tiled"):
            world.roost("send", name, "ask")
        for name in ("looked", "tiled"):
            world.wait_status(name, "waiting")
        world.roost("notify", "run", "--once")
        assert sent(out) == [["roost: tiled is waiting for you", "Do you want to proceed?"]]
    finally:
        for server in (outer, f"{world.socket}-view"):
            subprocess.run(
                ["tmux", "-L", server, "kill-server"],
                env=world.env,
                capture_output=True,
                timeout=30,
            )
    # Detached now: the edge it had while looked at does not come late.
    world.roost("notify", "run", "--once")
    assert len(sent(out)) == 1


def test_notify_test_reports_each_channel(world: Env, stub: Stub) -> None:
    out = world.tmp / "argv.jsonl"
    configure(world, out, stub)
    done = world.roost("notify", "test")
    assert done.stdout.splitlines() == ["command: ok", "ntfy: ok", "webhook: ok"]
    assert sent(out) == [["roost: test notification", "It works."]]
    stub.status = 404
    failed = world.roost("notify", "test", check=False)
    assert failed.returncode == 1
    assert f"ntfy: {stub.url}/topic answered 404 Not Found" in failed.stdout


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('command = "notify-send roost"', "notify.command must be a list of non-empty strings"),
        (
            'ntfy = "ntfy.sh/topic"',
            'notify.ntfy must be an http:// or https:// URL, not "ntfy.sh/topic"',
        ),
        ('webhook = "ftp://x/y"', "notify.webhook must be an http:// or https:// URL"),
    ],
)
def test_bad_notify_config_is_one_clear_line(world: Env, setting: str, said: str) -> None:
    world.home.mkdir(mode=0o700, exist_ok=True)
    (world.home / "config.toml").write_text(f"[notify]\n{setting}\n")
    for args in (("notify", "test"), ("notify", "run", "--once")):
        proc = world.roost_inprocess(*args)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and said in proc.stderr, proc.stderr
    assert not (world.home / "roost.db").exists()  # nothing stored


def test_watch_notify_writes_the_alert_to_its_terminal(world: Env) -> None:
    """The terminal channel: `roost watch --notify` writes OSC 777, OSC 9 and a bell for each
    alert the service decided (its JSON stays on stdout, the terminal's bytes go to stderr);
    inside tmux (TMUX set) wrapped for passthrough."""
    world.start_service()
    spawn(world, "api")
    world.wait_status("api", "idle")
    terminal = world.tmp / "terminal.out"
    with terminal.open("wb") as sink:
        watch = subprocess.Popen(
            [sys.executable, "-m", "roost", "watch", "--json", "--notify", "--interval", "0.2"],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            env={**world.env, "TMUX": "/tmp/outer-socket,1,0"},
            cwd=world.tmp,
        )
        lines: list[str] = []
        assert watch.stdout is not None
        threading.Thread(target=lambda: lines.extend(watch.stdout), daemon=True).start()  # type: ignore[arg-type]
        try:
            # it follows the log from its end: the alert must come after its first look (under
            # load, a Python start took longer than the service's decision)
            world.wait_for(lambda: any('"api"' in line for line in list(lines)), 60, "its look")
            world.roost("send", "api", "ask")
            wanted = (
                "\x1bPtmux;\x1b\x1b]777;notify;roost: api is waiting for you;"
                "Do you want to proceed?\x07\x1b\\"
                "\x1bPtmux;\x1b\x1b]9;roost: api is waiting for you: Do you want to proceed?\x07"
                "\x1b\\\x07"
            )
            world.wait_for(lambda: wanted in terminal.read_text(), what="the alert on the terminal")
        finally:
            watch.kill()
            watch.wait(timeout=30)
    assert terminal.read_text().count("\x1b]777;") == 1


def test_the_service_delivers_and_its_kill_9_repeats_nothing(world: Env, stub: Stub) -> None:
    """With the roost service running, alerts go out with no `roost notify run`; killed (-9)
    and restarted by its supervision, it picks up from the store: the next edge goes out, the
    earlier one is not sent again."""
    out = world.tmp / "argv.jsonl"
    configure(world, out, stub)
    spawn(world, "api")
    world.wait_status("api", "idle")
    first = json.loads(world.roost("service", "start", "--json").stdout)
    assert "alerts" in first["serves"]
    world.roost("send", "api", "ask")
    world.wait_status("api", "waiting")
    world.wait_for(lambda: sent(out), what="the service's alert")
    world.wait_for(lambda: all_answered(world), what="every channel's outcome stored")
    os.kill(first["pid"], signal.SIGKILL)
    world.wait_for(
        lambda: (
            (s := json.loads(world.roost("service", "status", "--json").stdout))["running"]
            and s["pid"] != first["pid"]
        ),
        timeout=30,
        what="the service restarted",
    )
    world.tmux("send-keys", "-t", world.pane_of("api"), "1")
    world.wait_status("api", "idle")
    world.roost("send", "api", "crash 3")
    try:
        world.wait_for(lambda: len(sent(out)) >= 2, timeout=60, what="the crash's alert")
    except AssertionError:
        with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
            for row in db.execute("select id, kind, at, detail from events"):
                print("EV", row)
            for row in db.execute("select * from alerts"):
                print("AL", row)
            for row in db.execute("select * from alert_cursor"):
                print("CUR", row)
        print(world.roost("service", "status", "--json").stdout)
        print(world.tmux("capture-pane", "-p", "-t", "=_roost_service"))
        raise
    assert sent(out) == [
        ["roost: api is waiting for you", "Do you want to proceed?"],
        ["roost: api crashed (exit 3)", "Its CLI ended with an error: roost wake api"],
    ]
    world.roost("service", "stop")


def test_the_tuis_live_source_hands_over_each_new_alert_once(
    world: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TUI's terminal channel: its data source hands each `alert` the service logged since
    its last look to the app, as the terminal's text, once."""
    from roost.alerts.rules import osc
    from roost.tui.live import LiveSource

    world.start_service()
    spawn(world, "api")
    world.wait_status("api", "idle")
    monkeypatch.delenv("TMUX", raising=False)
    for key, value in world.env.items():
        monkeypatch.setenv(key, value)
    source = LiveSource()
    assert source.snapshot().alerts == []  # the first look marks where the log ends
    world.roost("send", "api", "ask")
    world.wait_status("api", "waiting")
    shown: list[str] = []

    def looked() -> list[str]:
        shown.extend(source.snapshot().alerts)
        return shown

    world.wait_for(looked, 30, "the alert")
    assert shown == [osc("roost: api is waiting for you", "Do you want to proceed?", in_tmux=False)]
    assert source.snapshot().alerts == []


def test_a_waiting_agent_is_alerted_once_across_a_service_restart_and_a_flicker(
    world: Env,
) -> None:
    """An agent that stays waiting, the service stopped and started, then its dialog gone for
    a moment and back (a redraw, a brief other screen) long after its alert: one alert in
    all, as the edge is remembered in the store (before: a second one after the restart)."""
    world.home.mkdir(mode=0o700, exist_ok=True)
    (world.home / "config.toml").write_text('[status.patterns.command]\nwaiting = ["Proceed?"]\n')
    # Enter: the dialog scrolls away under other output, Enter again: it is back
    dialog = "while :; do echo Proceed?; read a; seq 40; read b; done"
    world.start_service()
    world.roost("spawn", "asker", "--detached", "--provider", "command", "--", "sh", "-c", dialog)

    def asker_alerts() -> list[tuple[str, str]]:
        with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
            rows = db.execute("SELECT edge, created_at FROM alerts WHERE agent_name = 'asker'")
            return [(str(e), str(at)) for e, at in rows]

    def stored_status() -> str:
        with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
            return str(db.execute("SELECT status FROM agents WHERE name = 'asker'").fetchone()[0])

    def all_decided() -> bool:
        with contextlib.closing(sqlite3.connect(world.home / "roost.db")) as db:
            after = db.execute("SELECT after FROM alert_cursor").fetchone()[0]
            return bool(after == db.execute("SELECT max(id) FROM events").fetchone()[0])

    [(edge, alerted)] = world.wait_for(asker_alerts, timeout=60, what="the waiting alert")
    assert edge == "waiting"
    # The flicker comes after the debounce since the alert, where the same edge could alert
    # again had the agent really left it.
    first = datetime.fromisoformat(alerted)
    world.wait_for(
        lambda: datetime.now(UTC) - first > timedelta(seconds=DEBOUNCE + 0.5),
        what="the debounce since the alert",
    )
    world.roost("service", "stop")
    world.start_service(hearing="asker")
    world.wait_for(all_decided, timeout=30, what="the new service's first pass")
    world.type(world.pane_of("asker"), "")
    world.wait_for(lambda: stored_status() != "waiting", timeout=30, what="the dialog gone")
    world.type(world.pane_of("asker"), "")
    world.wait_for(lambda: stored_status() == "waiting", timeout=30, what="the dialog back")
    world.wait_for(all_decided, timeout=30, what="the alerts' passes")
    assert [e for e, _ in asker_alerts()] == ["waiting"]
    world.roost("service", "stop")
