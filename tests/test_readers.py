"""The roost service's socket for readers (issue 21: `roost ls` with the service, and the event
stream pushed to readers): service/readers.py and system/servicesock.py on a real tmux."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from roost.core.events import Event
from roost.system import servicesock

from conftest import Env

pytestmark = pytest.mark.tmux


def ls_with_importtime(world: Env, *args: str) -> tuple[str, str]:
    """`roost ls` in a fresh interpreter (never the tests' warm one), with the modules it loaded."""
    proc = world.roost_importtime("ls", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def own_ident(world: Env) -> str:
    """The ident `roost ls` sends, as a fresh interpreter in the world computes it."""
    code = (
        "import os; from roost.system import servicesock as s; "
        "print(s.ident(os.environ['ROOST_TMUX_SOCKET'], os.environ), end='')"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=world.env, capture_output=True, text=True, check=True
    ).stdout


def sock_path(world: Env) -> str:
    found = servicesock.path(os.path.realpath(world.home))
    assert found is not None
    return found


def start_service(world: Env) -> None:
    world.roost("service", "start")
    world.wait_for(lambda: os.path.exists(sock_path(world)), 20, "the readers' socket")


def test_roost_ls_is_the_services_answer_computed_at_the_call(world: Env) -> None:
    world.roost("spawn", "a", "--provider", "command", "--", "sleep", "300")
    world.wait_status("a", "idle", 30)
    own_table, loaded = ls_with_importtime(world)
    own_json, _ = ls_with_importtime(world, "--json")
    assert "roost.ops.quicklist" in loaded  # no service: its own quick answer

    start_service(world)
    table, loaded = ls_with_importtime(world)
    assert table == own_table
    assert "roost.ops.quicklist" not in loaded and "roost.store" not in loaded
    as_json, _ = ls_with_importtime(world, "--json")
    assert json.loads(as_json) == json.loads(own_json)

    # never staler than the store and tmux at the call: a change made just now is in it
    world.roost("spawn", "b", "--provider", "command", "--", "sleep", "300")
    world.roost("park", "a")
    table, loaded = ls_with_importtime(world)
    assert "roost.ops.quicklist" not in loaded or "b " in table  # a hand-over is allowed...
    rows = {line.split()[0]: line.split()[1] for line in table.splitlines()[1:]}
    assert set(rows) == {"a", "b"}  # ...but never an old answer
    assert world.ls()["a"]["status"] == rows["a"]


def test_the_service_answers_only_callers_of_its_own_server_and_build(world: Env) -> None:
    world.roost("spawn", "a", "--provider", "command", "--", "sleep", "300")
    world.wait_status("a", "idle", 30)  # a change not yet recorded: the full CLI records it
    start_service(world)
    home = os.path.realpath(world.home)
    ident = own_ident(world)
    assert servicesock.ask_ls(home, False, ident) is not None
    other_server = ident.replace(world.env["ROOST_TMUX_SOCKET"], "x")
    assert servicesock.ask_ls(home, False, other_server) is None
    assert servicesock.follow(home, ident + "-other") is None
    # a request that is not one line of its words is closed without an answer, and the
    # service goes on answering the next caller
    for junk in (b"ls\t2\tx\n", b"\xff\xfe\n", b"hello", b"ls\t0\n" + b"x" * 9000):
        with socket.socket(socket.AF_UNIX) as raw:
            raw.settimeout(10)
            raw.connect(sock_path(world))
            raw.sendall(junk)
            raw.shutdown(socket.SHUT_WR)
            try:
                answer = raw.recv(100)
            except ConnectionResetError:  # closed with the rest of a long line unread
                answer = b""
            assert answer == b""
    assert servicesock.ask_ls(home, True, ident) is not None
    assert servicesock.request("ls", "0", "a\tb") is None  # never sent


def test_the_socket_is_owner_only_and_goes_with_the_service(world: Env) -> None:
    start_service(world)
    info = os.lstat(sock_path(world))
    assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    world.roost("service", "stop")
    assert not os.path.exists(sock_path(world))
    # without the service, `roost ls` answers itself, as before
    _, loaded = ls_with_importtime(world)
    assert "roost.ops.quicklist" in loaded


def reader(
    world: Env,
    interval: float,
    until: Callable[[Event], bool],
    on_app: Callable[[Any], None] | None = None,
) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """`stream.follow` in a thread of its own (its App opened there: SQLite connections stay in
    theirs, its paths from the world's environment) from the log's end, until `until(event)`:
    the thread (to start), set once it drained the log, set once `until` said yes."""
    from roost.ops import stream
    from roost.ops.root import open_app

    ready, done = threading.Event(), threading.Event()

    class Enough(Exception):
        pass

    def emit(event: Event) -> None:
        if until(event):
            done.set()
            raise Enough

    def read() -> None:
        with mock.patch.dict(os.environ, world.env, clear=True):
            app = open_app()
        if on_app is not None:
            on_app(app)
        start = stream.drain(app, 0, lambda e: None)
        ready.set()
        try:
            with pytest.raises(Enough):
                stream.follow(app, start, interval, emit, start_service=False)
        finally:
            app.close()

    return threading.Thread(target=read, daemon=True), ready, done


def test_a_reader_hears_of_each_new_event_without_polling(world: Env) -> None:
    """`follow` waits on the service's news, not on a timer: with the service up, it reads the
    log when news comes and sleeps on no clock; each event is emitted once, in order. Its look
    every RECHECK seconds is put off past the test, so only the news can bring the event."""
    from roost.ops import stream

    world.roost("spawn", "a", "--provider", "command", "--", "sleep", "300")
    world.wait_status("a", "idle", 30)
    start_service(world)
    sleeps: list[float] = []
    seen: list[str] = []

    def stopped(event: Event) -> bool:
        seen.append(f"{event.kind} {event.data.get('status')}")
        return event.kind == "status" and event.data.get("status") == "stopped"

    def no_clock(app: Any) -> None:
        app.clock.sleep = sleeps.append  # a poll shows here

    with mock.patch.object(stream, "RECHECK", 600.0):
        thread, ready, done = reader(world, 1.0, stopped, no_clock)
        thread.start()
        assert ready.wait(30)
        world.roost("kill", "a")
        assert done.wait(30), seen
        thread.join(10)
    assert seen.count("status stopped") == 1
    assert sleeps == []


def test_a_reader_looks_itself_as_soon_as_the_service_goes(world: Env) -> None:
    """The service stopped under a reader: the reader runs the looks itself from its next
    interval on, not from its next look for the service (RECHECK, put off past the test here).
    It used to stay blind until then, and a turn that began and ended in that gap (up to 5 s;
    found when a service killed mid-burst lost a 3-second turn) was never recorded."""
    from roost.core.service import SESSION
    from roost.ops import stream

    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(world.tmp / "work"))
    world.wait_status("cx", "idle", 30)
    world.start_service(hearing="cx")
    subscribed: list[object] = []
    subscribe = stream._subscribe

    def subscribing(app: Any) -> Any:
        subscribed.append(news := subscribe(app))
        return news

    def working(event: Event) -> bool:
        return event.kind == "status" and event.data.get("status") == "working"

    with (
        mock.patch.object(stream, "RECHECK", 600.0),
        mock.patch.object(stream, "_subscribe", subscribing),
    ):
        thread, ready, done = reader(world, 0.2, working)
        thread.start()
        assert ready.wait(30)
        world.wait_for(lambda: subscribed, 30, "the reader subscribing")
        assert subscribed[0] is not None  # the service's news, not the reader's own looks
        # nobody else looks: no pane-died hook (`roost _supervise` looks at every agent)
        world.tmux("set-hook", "-gu", "pane-died")
        world.tmux("set-hook", "-u", "-t", f"={SESSION}:", "pane-died")
        world.roost("service", "stop")  # the reader's news ends here
        world.type(world.pane_of("cx"), "work 30")
        assert done.wait(30), "the reader never looked after the service went"
        thread.join(10)


def _one_answer_server(home: Path, answer: bytes) -> threading.Thread:
    """A stand-in service at home's socket that answers one caller with `answer`, then closes."""
    where = servicesock.path(str(home))
    assert where is not None
    os.makedirs(os.path.dirname(where), mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(where)
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            conn.recv(4096)
            conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("answer", "printed"),
    [
        (b"ok 5\nhello", b"hello"),
        (b"ok 500\nhello", None),  # cut short (the service died while sending): never printed
        (b"ok\nhello", None),  # no length: an older service's answer
        (b"no\n", None),
        (b"", None),
    ],
)
def test_only_a_whole_answer_is_printed(
    tmp_path: Path, answer: bytes, printed: bytes | None
) -> None:
    server = _one_answer_server(tmp_path, answer)
    assert servicesock.ask_ls(str(tmp_path), False, "ident") == printed
    server.join(10)


def test_words_of_any_bytes_the_environment_holds_are_sent() -> None:
    word = os.fsdecode(b"/tmp/caf\xe9")  # not UTF-8: Python keeps it as a surrogate
    line = servicesock.request("follow", servicesock.ident("roost", {"TMUX_TMPDIR": word}))
    assert line is not None and b"caf\xe9" in line


def test_ls_all_with_a_damaged_store_says_so_as_the_full_cli_does(world: Env) -> None:
    world.home.mkdir(mode=0o700, exist_ok=True)
    (world.home / "roost.db").write_bytes(b"this is not a database" * 100)
    fast = world.roost("ls", "--all", check=False)
    full = world.roost_inprocess("ls", "--all")
    assert "Traceback" not in fast.stderr
    assert (fast.returncode, fast.stderr) == (full.returncode, full.stderr)
    assert fast.returncode != 0 and len(fast.stderr.strip().splitlines()) == 1


def test_the_services_answer_lists_and_captures_in_one_tmux_call(world: Env) -> None:
    """The panes whose screens the last answer read are captured in the listing's own tmux call
    (one process, not two); the answer is the one two calls give, and a guessed pane that is
    gone since is no error (the listing is asked again alone)."""
    import time

    from roost.ops import quicklist
    from roost.tmux import run

    world.roost("spawn", "a", "--provider", "command", "--", "sh", "-c", "echo ready-a; sleep 300")
    world.roost("spawn", "b", "--provider", "command", "--", "sh", "-c", "echo ready-b; sleep 300")
    world.wait_status("a", "idle", 30)
    world.wait_status("b", "idle", 30)
    calls: list[list[str]] = []
    real_call = run.call

    def counted(argv: list[str], *rest: Any) -> Any:
        calls.append(argv)
        return real_call(argv, *rest)

    with (
        mock.patch.dict(os.environ, world.env, clear=True),
        mock.patch.object(run, "call", counted),
    ):
        warm = quicklist.Warm(os.path.join(world.env["ROOST_HOME"], "roost.db"))
        try:
            cold = quicklist.answer(True, os.environ, time.time())
            first = quicklist.answer(True, os.environ, time.time(), warm)
            assert warm.captured  # the screens it read: guessed for the next answer
            calls.clear()
            second = quicklist.answer(True, os.environ, time.time(), warm)
            assert len(calls) == 1 and "capturep" in calls[0]
            assert cold is not None and first is not None and second is not None
            shown = [
                {k: a[k] for k in ("name", "status", "state", "pid")} for a in json.loads(cold[1])
            ]
            for answer in (first, second):
                assert [
                    {k: a[k] for k in ("name", "status", "state", "pid")}
                    for a in json.loads(answer[1])
                ] == shown
            world.tmux("kill-pane", "-t", world.pane_of("b"))  # a guessed pane gone since
            calls.clear()
            third = quicklist.answer(True, os.environ, time.time(), warm)
            assert len(calls) >= 2  # the combined call failed; the listing was asked again alone
            assert third is None or "b" in {a["name"] for a in json.loads(third[1])}
        finally:
            warm.close()
