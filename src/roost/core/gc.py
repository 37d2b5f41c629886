"""`roost gc`'s choice of what to forget. Pure: the records, the workspace and what tmux showed
(which agents run, when each one's screen last changed) in; the agents to remove, with why, out.

Never a pinned agent, a live tile, or an agent that runs: a process is activity, whatever the
store's last_active_at says (it moves only at a launch or on a claude hook). A screen that changed
is activity too, so an agent that printed a moment ago and then stopped is not idle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from datetime import datetime

from roost.core import workspace as ws
from roost.core.model import Agent

STALE = "stale: no tab, park or burial owns it"


def candidates(
    agents: Sequence[Agent],
    workspace: ws.Workspace,
    running: Set[str],
    screen_activity: Mapping[str, datetime],
    cutoff: datetime | None,
) -> list[tuple[Agent, str]]:
    """Stale records, and (with a cutoff) parked or buried agents idle since before it."""
    stale = ws.stale(workspace)
    kept = ws.live(workspace) | set(workspace.pins) | set(running)
    found = []
    for agent in agents:
        if agent.id in kept:
            continue
        if agent.id in stale:
            found.append((agent, STALE))
        elif cutoff is not None and agent.placement in (ws.DETACHED, ws.BURIED):
            last = last_activity(agent, screen_activity.get(agent.id))
            if last < cutoff:
                found.append(
                    (agent, f"{agent.placement}, idle since {last.isoformat(timespec='seconds')}")
                )
    return found


def last_activity(agent: Agent, screen: datetime | None) -> datetime:
    """The later of the store's last activity (or creation) and the screen's last change."""
    stored = datetime.fromisoformat(agent.last_active_at or agent.created_at)
    return stored if screen is None or screen < stored else screen
