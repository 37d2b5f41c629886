"""The browser terminal: a WebSocket bridged to `tmux attach` of the agent's home in a pty.

A watcher's client is attached read-only and ignores its size (`-f read-only,ignore-size`):
tmux drops its keys and the window keeps the size the person's own terminal gives it. With the
typing grant the client is an ordinary one, and the browser's keys reach the pane. Messages in:
binary frames are keystrokes (dropped for a watcher), a text frame `{"resize": [cols, rows]}`
sizes the pty. Out: the pty's bytes, as binary frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import struct
import subprocess
import termios

from starlette.websockets import WebSocket, WebSocketDisconnect

from roost.core.errors import RoostError
from roost.core.names import check_name
from roost.ops import lifecycle
from roost.ops.context import App

READ = 65536


def attach_argv(app: App, name: str, typing: bool) -> tuple[list[str], dict[str, str]]:
    """The argv that attaches to the agent's home (found in the store and tmux: only its
    window id reaches tmux), and the environment to run it in."""
    check_name(name)
    found = lifecycle.find_view(app, name)
    if found.pane is None:
        raise RoostError(f"{name} has no window (roost wake {name})")
    flags = [] if typing else ["-f", "read-only,ignore-size"]
    argv = [*app.tmux.attach_argv(found.pane.window_id), *flags]
    env = {k: v for k, v in app.tmux.env.items() if k != "TMUX"}
    env.update(TERM="xterm-256color", LANG=env.get("LANG") or "C.UTF-8")
    return argv, env


def _set_size(fd: int, cols: int, rows: int) -> None:
    cols, rows = max(2, min(cols, 500)), max(2, min(rows, 200))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


async def bridge(ws: WebSocket, argv: list[str], env: dict[str, str], typing: bool) -> None:
    """Run the attach in a new pty until either side ends; then end the other."""
    master, slave = os.openpty()
    _set_size(master, 80, 24)
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[bytes | None] = asyncio.Queue()

    def readable() -> None:
        try:
            data = os.read(master, READ)
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(master)
        out.put_nowait(data or None)

    loop.add_reader(master, readable)
    sender = asyncio.create_task(_pump(ws, out))
    try:
        await _receive(ws, master, typing)
    finally:
        sender.cancel()
        loop.remove_reader(master)
        _end(proc)
        os.close(master)
        with contextlib.suppress(RuntimeError):
            await ws.close()


async def _pump(ws: WebSocket, out: asyncio.Queue[bytes | None]) -> None:
    while (data := await out.get()) is not None:
        await ws.send_bytes(data)
    await ws.close()  # the attach ended (the window closed, the server went)


async def _receive(ws: WebSocket, master: int, typing: bool) -> None:
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                if typing:
                    os.write(master, message["bytes"])
            elif message.get("text"):
                _control(master, message["text"])


def _control(master: int, text: str) -> None:
    try:
        size = json.loads(text).get("resize")
        _set_size(master, int(size[0]), int(size[1]))
    except (ValueError, TypeError, AttributeError, IndexError, KeyError):
        pass  # not a resize: nothing else is understood


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Detach: the tmux client ends on SIGHUP as when a terminal closes; the agent runs on."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGHUP)
    try:
        proc.wait(2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(2)
