"""The first thing that runs in an agent's pane: `python -m roost.launch SPEC_FILE`.

roost hands the agent's argv and environment over in a private file instead of tmux's command
line: tmux would read a lone ";" in argv as a command separator, its messages are limited to
16 KiB (a long prompt or a big environment would not fit), and a command line is visible to
every user in `ps` while API keys in the environment must not be. The file is read, deleted at
once, and the process replaces itself with the agent (same pid, so tmux's pane_pid is the agent).
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m roost.launch SPEC_FILE", file=sys.stderr)
        return 2
    path = argv[0]
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"roost: cannot read launch spec {path}: {exc}", file=sys.stderr)
        return 126
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    env = dict(spec["env"])
    # The pane's own TMUX/TMUX_PANE (roost's server), never the caller's.
    for key in ("TMUX", "TMUX_PANE"):
        if key in os.environ:
            env[key] = os.environ[key]
        else:
            env.pop(key, None)
    command = spec["argv"]
    if os.isatty(1):
        # A respawned pane still shows the previous run: clear the screen and its history, so
        # what the pane shows (and a start that dies at once leaves as its reason) is this run's.
        os.write(1, b"\x1b[H\x1b[2J\x1b[3J")
    try:
        os.chdir(spec["cwd"])
        os.execvpe(command[0], command, env)
    except OSError as exc:
        print(f"roost: cannot start {command[0]}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
