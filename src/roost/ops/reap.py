"""Nothing roost started outlives it (issue 36 point 7): what the service reaps, and when.

An agent deaf to the hangup (nohup, setsid children, a CLI that ignores SIGHUP) outlives its
tmux server; a service killed -9 leaves its hosts' ssh masters up, and the followers of their
streams with them. The service's run (service/main.py) ends them:

- at its start, before any component serves: every process tagged with this roost home
  (system/procs: ROOST_HOME and an agent id; never this process or its ancestors) that
  core/orphans says is an orphan gets TERM, then KILL after a grace (App.procs.kill_tree), one
  `orphans-stopped` event per agent (no alert: it is no crash); and, when the run before it
  did not end cleanly (killed, crashed, or still open), every host's ssh master of this home,
  which ends the streams through it too;
- on its way out, once its components stopped (the followers of hosts' streams among them):
  every host's ssh master, and, when the tmux server it ran under is gone (its death is the
  service's hangup, and nothing would start it again), the same reap of orphans.

A wake does the same for its own agent under its lock (ops/lifecycle._stop_leftovers); doctor
lists what is left (ops/doctor._orphans).
"""

from __future__ import annotations

import contextlib
import os

from roost.core.errors import RoostError
from roost.core.events import EventKind
from roost.core.orphans import left_behind, parse_tmux, this_server
from roost.ops.context import App
from roost.store import events as event_log
from roost.store.service import Run

KIND: EventKind = "orphans-stopped"  # the event, as a wake that stops its agent's leftovers logs it


def at_start(app: App, previous: Run | None) -> dict[str, list[int]]:
    """The service starts: reap the orphans, and end the hosts' masters when the run before,
    `previous` (the newest run as it was before this one began), did not close cleanly."""
    # Run's fields 5 and 6: when it ended (None: still open) and its exit status
    if previous is not None and (previous[5] is None or previous[6] != 0):
        end_masters(app)
    return orphans(app)


def at_exit(app: App) -> dict[str, list[int]]:
    """The service stops, its components stopped: end the hosts' ssh masters (they would stay
    up for ControlPersist; whether one component's start failed or not), and reap the orphans
    when the tmux server it ran under is gone."""
    end_masters(app)
    return orphans(app) if server_gone(app) else {}


def orphans(app: App) -> dict[str, list[int]]:
    """Stop this roost home's tagged processes whose pane is gone (core.orphans): TERM, a
    grace, KILL; one event per agent. What was stopped, by agent id (the pids that survived
    even SIGKILL are in the event, as `survived`)."""
    # The processes first, then tmux: a process seen before the look whose pane lives is in
    # the look (an agent started meanwhile is not in `found`, so never taken for a leftover).
    found = app.procs.tagged(str(app.paths.home))
    if not found:
        return {}
    rows = app.tmux.list_pane_rows()
    server, live = this_server(rows)
    socket = os.path.realpath(app.tmux.socket_path())
    by_agent = left_behind((facts for _proc, facts in found), socket, server, live)
    handles = {facts.pid: proc for proc, facts in found}
    for agent_id, pids in sorted(by_agent.items()):
        survivors = app.procs.kill_tree([handles[pid] for pid in pids])
        agent = app.store.get_by_id(agent_id)
        detail: dict[str, object] = {"pids": pids, "by": "service"}
        if survivors:
            detail["survived"] = survivors
        with app.store.write() as c:
            name = agent.name if agent is not None else agent_id  # removed since: its id
            event_log.append(c, agent_id, name, c.now_iso(), KIND, detail)
    return by_agent


def server_gone(app: App) -> bool:
    """Whether the tmux server this process ran under (its TMUX) is gone: none answers on the
    socket, or another one does. Without TMUX (a service started by hand): whether none
    answers."""
    _socket, mine = parse_tmux(app.environ.get("TMUX", ""))
    rows = app.tmux.list_pane_rows()
    if not rows:
        return True  # no server, or one without panes (not the one this ran in)
    return mine is not None and rows[0]["server_pid"] != str(mine)


def end_masters(app: App) -> None:
    """End every host's ssh master of this home that answers (each bounded; one host's failure
    never keeps the others'): the streams a killed service followed through them end too."""
    from roost.hosts import operations as hosts

    with contextlib.suppress(RoostError, OSError):
        hosts.end_masters(hosts.reach_of(app))
