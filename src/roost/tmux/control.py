"""One tmux control-mode client (`tmux -C`), as the roost service's ear: attached to the
service's own hidden session, never to an agent's home (that would send the agent focus events
and make its home look attached), with `no-output,ignore-size,read-only` set at attach and never
toggled (a control client that stops reading output blocks the agents' output; toggling flags
can wedge tmux: next-capabilities §1). Closed by EOF on its stdin.

`lines()` yields what tmux sends, one decoded line at a time; commands go in with `send` only
after tmux said `%session-changed` (before it, they fail with "no current client").
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

from roost.tmux.client import Tmux

FLAGS = "no-output,ignore-size,read-only"


class ControlClient:
    def __init__(self, tmux: Tmux, session: str) -> None:
        # The session name is roost's own constant (no user text); '=': that session exactly.
        argv = [
            tmux.binary,
            "-u",
            "-L",
            tmux.socket,
            "-f",
            tmux.config,
            "-C",
            "attach-session",
            "-t",
            f"={session}",
            "-f",
            FLAGS,
        ]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=tmux.server_env,
        )

    def lines(self) -> Iterator[str]:
        """tmux's lines until it closes (detached, its session gone, the server gone)."""
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            yield raw.decode(errors="replace").rstrip("\r\n")

    def send(self, *words: str) -> None:
        """One command; each word quoted for tmux's parser (single quotes: no expansion of
        `#{}` by the parser itself, which leaves formats to the command)."""
        if any("'" in w for w in words):
            raise ValueError("a control-mode command word with a single quote")
        line = " ".join(f"'{w}'" for w in words)
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()

    def close(self, timeout: float = 2.0) -> None:
        """EOF on stdin (tmux's clean way out), then a kill if it lingers."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
