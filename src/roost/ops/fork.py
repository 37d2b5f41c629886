"""`roost fork NAME NEW [--worktree]`: a new agent that goes on with a copy of NAME's
conversation while NAME keeps the original.

Claude Code (checked on 2.1.332): `--resume ID --fork-session --session-id NEW_ID` writes the
copy under NEW_ID (the original history, then the new turns) and leaves ID's transcript as it
was, so roost names the fork's id up front, as for every claude start. A resume must run in the
cwd whose project folder holds the transcript: a fork into another folder (its own worktree)
gets a copy of the original transcript in that folder's project folder first.
Codex (checked on 0.169.0): `codex fork ID` starts a new session whose rollout begins with ID's
history and leaves ID's rollout as it was; its id is codex's own, learnt as for every codex start
(the rollout its process holds open). Gemini 0.61 and Aider 0.86 have no fork: refused (README).
At an earlier turn (`roost fork NAME@TURN NEW`, issue 39), recall writes a copy of the record up
to that turn under a fresh id and the fork starts on that copy (`session`) the same way.

Usage (issue 35): the fork counts its own turns only. Claude's copy repeats the original's
messages (ids kept) and codex's totals go on from the original's, so the original's state at the
fork is kept as the fork's starting point (usage/operations.py record_fork_point).
"""

from __future__ import annotations

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.names import check_name
from roost.ops import lifecycle
from roost.ops.context import App
from roost.providers import forking
from roost.system import git
from roost.usage import operations as usage
from roost.worktrees import operations as worktrees


def fork(
    app: App, name: str, new: str, worktree: bool = False, session: str | None = None
) -> lifecycle.WakeResult:
    """`session`: start on this conversation of NAME's CLI instead of NAME's own (a copy up to
    an earlier turn, recall/operations.py fork_point)."""
    check_name(name)
    check_name(new)
    origin = app.store.require(name)
    why = forking.cannot(origin.provider)
    if why is not None:
        raise RoostError(f"cannot fork {name}: {why}", code=2)
    sid = session or origin.provider_session_id
    source = forking.conversation(origin.provider, sid, origin.cwd, app.environ) if sid else None
    if sid is None or source is None or not source.is_file():
        raise RoostError(f"cannot fork {name}: it has no conversation yet (send it a message)")
    if app.store.get(new) is not None:
        raise RoostError(f"agent {new!r} already exists", code=2)
    ask = None
    if worktree:  # branched from the commit the original has checked out now
        ask = worktrees.Ask(base=git.head(origin.cwd) or "HEAD")

    def resume_origin(agent: Agent) -> list[str]:
        app.store.log(agent, "forked", origin=origin.name, origin_id=origin.id, session=sid)
        started = origin if session is None else origin.replace(provider_session_id=sid)
        usage.record_fork_point(app, started, agent)  # its usage: its own turns only
        return forking.start_args(origin.provider, sid, origin.cwd, agent.cwd, app.environ, source)

    return lifecycle.spawn(
        app,
        new,
        provider=origin.provider,
        cwd=origin.cwd,
        dangerous=origin.dangerous,
        args=origin.args,
        mcp=origin.mcp,
        worktree=ask,
        first_args=resume_origin,
    )
