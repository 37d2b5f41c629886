"""Join intent (store) with reality (tmux): pure functions, tested without tmux."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from roost.core.model import INTENT_RUNNING, Agent
from roost.core.observation import Observation, sighted
from roost.core.pane import Pane, agent_panes
from roost.core.present import command, counted
from roost.core.service import SESSION as SERVICE_SESSION
from roost.core.state import HIBERNATED

__all__ = ["Finding", "agent_panes", "drift", "view"]  # agent_panes: core/pane.py's, re-exported


def view(agent: Agent, pane: Pane | None) -> Observation:
    """The agent with its pane: observation.sighted's, the one view every reader takes."""
    return sighted(agent, pane)


@dataclass(frozen=True, slots=True)
class Finding:
    """One way store and tmux disagree, and what the user can do about it."""

    subject: str
    problem: str
    advice: str


def drift(
    agents: Sequence[Agent], panes: Sequence[Pane], socket: str, missing_cwds: Collection[str] = ()
) -> list[Finding]:
    """`missing_cwds`: the agents' working directories that no longer exist (a wake or a
    restore of their agents must fail, so neither is advised for them)."""

    def tmux(*args: str, note: str = "") -> str:
        """A tmux command for a person: quoted, its target an exact id (`$3`, `@5`)."""
        return command("tmux", "-L", socket, *args, note=note)

    by_id = agent_panes(panes)
    homeless = [
        _cwd_gone(a) for a in agents if a.cwd in missing_cwds and _should_run(a, by_id.get(a.id))
    ]
    if not panes:  # no server (a reboot, a kill-server): one restore brings the workspace back
        return (
            _server_gone(
                [a.name for a in agents if _should_run(a, None) and a.cwd not in missing_cwds]
            )
            + homeless
        )
    findings: list[Finding] = homeless
    known = {a.id for a in agents}

    for agent in agents:
        pane = by_id.get(agent.id)
        if _should_run(agent, pane) and agent.cwd not in missing_cwds:
            why = "its home is gone" if pane is None else f"it exited (status {pane.dead_status})"
            findings.append(
                Finding(
                    agent.name, f"should be running but {why}", command("roost", "wake", agent.name)
                )
            )
        if pane is not None and pane.session_name != agent.home:
            findings.append(
                Finding(
                    agent.name,
                    f"runs in session {pane.session_name!r}, its home is {agent.home!r}",
                    command("roost", "kill", agent.name)
                    + " && "
                    + command("roost", "wake", agent.name),
                )
            )

    counts: dict[str, int] = {}
    for pane in panes:
        if pane.agent_id and not pane.dead:
            counts[pane.agent_id] = counts.get(pane.agent_id, 0) + 1
        if pane.agent_id and pane.agent_id not in known:
            findings.append(
                Finding(
                    f"window {pane.window_id}",
                    f"window {pane.window_name!r} in session "
                    f"{pane.session_name!r} is tagged for roost agent "
                    f"{pane.agent_id}, which has no record",
                    tmux("kill-window", "-t", pane.window_id),
                )
            )
    for agent in agents:
        if counts.get(agent.id, 0) > 1:
            findings.append(
                Finding(
                    agent.name,
                    f"{counts[agent.id]} live panes carry its id",
                    command("roost", "kill", agent.name)
                    + " && "
                    + command("roost", "wake", agent.name),
                )
            )

    sessions: dict[str, list[Pane]] = {}
    for pane in panes:
        sessions.setdefault(pane.session_id, []).append(pane)
    for session_panes in sessions.values():
        first = session_panes[0]
        if first.session_name == SERVICE_SESSION:
            continue  # the roost service's own (ops/service.py)
        if not first.is_home:
            findings.append(
                Finding(
                    f"session {first.session_name}",
                    "a tmux session on roost's server that roost did not make",
                    tmux("kill-session", "-t", first.session_id),
                )
            )
            continue
        if not any(p.is_keeper and p.window_index == 0 for p in session_panes):
            findings.append(
                Finding(
                    f"home {first.session_name}",
                    "has no keeper in window 0",
                    tmux(
                        "kill-session",
                        "-t",
                        first.session_id,
                        note="when none of its agents run; then roost wake them",
                    ),
                )
            )
        if not any(p.agent_id for p in session_panes) and not any(
            a.home == first.session_name for a in agents
        ):
            findings.append(
                Finding(
                    f"home {first.session_name}",
                    "holds no agent any more",
                    tmux("kill-session", "-t", first.session_id),
                )
            )
    return findings


def _cwd_gone(agent: Agent) -> Finding:
    return Finding(
        agent.name,
        f"should be running but its working directory {agent.cwd} is gone, so a wake would fail",
        f"{command('mkdir', '-p', agent.cwd)} && "
        + command(
            "roost", "wake", agent.name, note=f"or put the folder back; or: roost rm {agent.name}"
        ),
    )


def _should_run(agent: Agent, pane: Pane | None) -> bool:
    """Meant to run and does not; a parked or buried agent without a window hibernates (a
    restore leaves it so), which is no problem."""
    return (
        agent.intent == INTENT_RUNNING
        and (pane is None or pane.dead)
        and view(agent, pane).state != HIBERNATED
    )


def _server_gone(expected: list[str]) -> list[Finding]:
    """The server is gone while agents should be running: one finding, one fix for them all.

    >>> [f.problem for f in _server_gone(["a", "b"])], _server_gone([])
    (['is not running: 2 agents should be running (a, b)'], [])
    """
    if not expected:
        return []
    names = ", ".join(expected[:6]) + (", …" if len(expected) > 6 else "")
    return [
        Finding(
            "roost's tmux server",
            f"is not running: {counted(len(expected), 'agent')} should be running ({names})",
            "roost restore (it starts every tab's tiles, hibernates the rest)",
        )
    ]
