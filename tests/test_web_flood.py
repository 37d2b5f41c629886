"""A flood of idle connections on the roost service's web server (issue 35, finding 3): the
service keeps its descriptors and keeps answering `roost ls`; the idle ones are closed at the
header deadline; the web answers again once they are gone. system/admission.py's own tests
are test_admission.py."""

from __future__ import annotations

import json
import resource
import socket
from collections.abc import Callable

import pytest
from test_readers import ls_with_importtime, start_service
from test_web_http import free_port

from roost.system import admission

from conftest import Env
from web_server import Client, Web, wait_until

pytestmark = pytest.mark.tmux

FLOOD = 2000


def _room_for(count: int) -> None:
    """This test's own descriptors: the flood's, and the service (a child of this process's
    tmux server) inherits the same limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 512
    if soft < want:
        assert hard == resource.RLIM_INFINITY or hard >= want, f"a hard limit of {hard} files"
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _service_pid(world: Env) -> object:
    status = json.loads(world.roost("service", "status", "--json").stdout)
    assert status["running"], status
    return status["pid"]


def _answers(me: Client) -> Callable[[], bool]:
    def answered() -> bool:
        try:
            return me.request("GET", "/")[0] == 200
        except ConnectionRefusedError:
            return False

    return answered


def _closed(conn: socket.socket) -> bool:
    """The server closed it (with or without its 503)."""
    conn.setblocking(False)
    try:
        while chunk := conn.recv(65536):
            if not chunk:
                break
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_two_thousand_idle_connections_leave_the_service_answering(world: Env) -> None:
    _room_for(FLOOD)
    port = free_port()
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text(f'[web]\nenabled = true\nbind = "127.0.0.1:{port}"\n')
    world.roost("spawn", "a", "--provider", "command", "--", "sleep", "300")
    world.wait_status("a", "idle", 30)
    start_service(world)
    url = world.roost("web", "--print-url", "--bind", f"127.0.0.1:{port}").stdout.strip()
    me = Client(Web(url))

    def logged_in() -> bool:
        try:
            me.login()
        except OSError:
            return False
        return True

    wait_until(logged_in, 30, "the service's roost web")
    quiet_table, _ = ls_with_importtime(world)
    service_pid = _service_pid(world)

    flood: list[socket.socket] = []
    try:
        for _ in range(FLOOD):
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        # The server takes connections in order: once the last is answered (or refused), it
        # has taken every one before it.
        last = flood[-1]
        last.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        last.settimeout(30)
        assert last.recv(65536).startswith(b"HTTP/1.1 ")  # 503 past the cap

        table, loaded = ls_with_importtime(world)
        assert "roost.ops.quicklist" not in loaded, "the service did not answer roost ls"
        assert table == quiet_table

        # A refused one is answered, then closed on the loop's next turn: on a loaded machine
        # the last answer can arrive before the closes of the ones refused just before it.
        held: list[socket.socket] = []

        def at_most_the_cap() -> bool:
            held[:] = [conn for conn in flood if not _closed(conn)]
            return len(held) <= admission.MAX_PER_PEER

        wait_until(at_most_the_cap, 30, f"at most {admission.MAX_PER_PEER} connections held")
        # the ones it holds send nothing: each goes at its header deadline
        wait_until(
            lambda: all(_closed(conn) for conn in held),
            admission.HEADER_TIMEOUT + 20,
            "the idle connections to be closed",
        )
    finally:
        for conn in flood:
            conn.close()
    # the web answers again, from the same service (a crash and restart would not pass): on a
    # loaded machine its loop may still be closing the last of the flood, so a few tries
    wait_until(_answers(me), 30, "the web to answer again")
    assert _service_pid(world) == service_pid
