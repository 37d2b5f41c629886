"""The roost service's session on roost's tmux server: made, respawned and killed here
(ops/service.py decides when). One command list makes it, tagged and hooked, so nobody sees it
half made.

Its pane-died hook is the session's own: it shadows the global one (which respawns window 0 of
an agent's home at once, the keeper) and only runs `roost _supervise PANE`, so the service's
restart goes through ops/service.py's backoff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roost.core.service import SESSION, WINDOW
from roost.tmux.client import Tmux, _command_string, reap_missed
from roost.tmux.format import SEP
from roost.tmux.protocol import TmuxError

SIZE = ("80", "24")  # nobody looks at it


def create(tmux: Tmux, argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, int]:
    """The service's session running `argv` (no user text: roost's own command line), with
    `env` in its environment. Returns (pane id, pid). DuplicateSession: it exists already."""
    env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]  # -e: never expanded
    hook = f'run-shell -b "{_command_string(tmux.supervisor)} #{{hook_pane}}"'
    out = tmux._create(
        *tmux._server_setup(),
        "new-session",
        "-d",
        "-s",
        SESSION,
        "-n",
        WINDOW,
        "-x",
        SIZE[0],
        "-y",
        SIZE[1],
        # out of the folder of the command that started it (a project, an agent's worktree:
        # a process working there keeps `rm` from removing it)
        "-c",
        "/",
        *env_args,
        "-P",
        "-F",
        f"#{{pane_id}}{SEP}#{{pane_pid}}{SEP}#{{pid}}",
        *argv,
        ";",
        "set-option",
        "-t",
        f"={SESSION}:",
        "@roost_service",
        "1",
        *([";", "set-hook", "-t", f"={SESSION}:", "pane-died", hook] if tmux.supervisor else []),
    )
    pane_id, pid, server_pid = out.strip().split(SEP)
    reap_missed(server_pid)  # a service that died at once is restarted (tmux/client.py)
    return pane_id, int(pid)


def respawn(tmux: Tmux, pane_id: str) -> int:
    """Start the service's dead pane again with its own command; the new pid. TmuxError when
    it is not dead (another roost started it meanwhile: never killed for this one, no -k)."""
    tmux.run("respawn-pane", "-t", pane_id)
    found = tmux.run("display-message", "-p", "-t", pane_id, f"#{{pane_pid}}{SEP}#{{pid}}")
    pid, _, server_pid = found.strip().partition(SEP)
    reap_missed(server_pid)
    return int(pid)


def kill(tmux: Tmux) -> bool:
    """Kill the service's session; False when there was none."""
    try:
        tmux.run("kill-session", "-t", f"={SESSION}")
    except TmuxError:
        return False
    return True
