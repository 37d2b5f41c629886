"""`roost export` / `roost import`: the whole workspace as versioned JSON, round-tripped exactly.

Import validates everything first and writes in one transaction, so bad input changes nothing.
The format and its rules are core/exchange.py; the rows are read and written by store/exchange.py.
The files of an agent's conversation that live in roost's home (aider's chat history) travel
with it ("agent_files"); an import writes them back before it commits, and says which agents
cannot resume here and why (their CLI's own files are elsewhere, or the export lacked them).

Without --allow-dangerous an agent's CLI arguments are left off and kept aside: the agent
`needs approval` and never starts until `roost approve NAME` shows them and the person says yes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from roost.core.errors import RoostError
from roost.core.exchange import (
    FORMAT,
    VERSION,
    check_agent_files,
    leave_off_permissions,
    refused,
    validate,
)
from roost.core.model import Agent
from roost.ops.context import App
from roost.providers import base as prov
from roost.providers import traits
from roost.providers.claude import claude_dir
from roost.store import exchange
from roost.store import worktrees as wtdb
from roost.system import locks, untrusted
from roost.worktrees import operations as worktrees


def export(app: App) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        **exchange.export_tables(app.store),
        "agent_files": _own_files(app),
        "worktrees": wtdb.exported(app.store.conn),
    }


def _own_files(app: App) -> dict[str, dict[str, str]]:
    """Each agent's conversation files kept in roost's home, by agent id and file name."""
    found: dict[str, dict[str, str]] = {}
    for agent in app.store.agents():
        for path in prov.get(agent.provider).own_files(agent, app.paths.home):
            try:
                text = untrusted.read(path).decode("utf-8", "replace")  # a CLI wrote it
                found.setdefault(agent.id, {})[path.name] = text
            except OSError:
                continue  # none yet: an agent never started
    return found


def import_(app: App, data: Any, allow_dangerous: bool = False) -> tuple[int, list[str]]:
    """Add the export's records; returns how many agents, and what was left off: unless
    `allow_dangerous` (the person said so), nothing that turns permission checks off.
    Refused whole on the first problem."""
    seen_at = app.store.now_iso()
    left: list[str] = []
    try:
        with app.store.write() as c:
            validate(
                data,
                exchange.taken(c),
                traits.SESSION_IDS,
                {"claude": str(claude_dir(app.environ))},
            )
            files = check_agent_files(data.get("agent_files"), {a["id"] for a in data["agents"]})
            names = {a["id"]: a["name"] for a in data["agents"]}
            try:
                trees = worktrees.verify_imported(app, data.get("worktrees"), names)
            except RoostError as exc:
                raise refused(str(exc)) from None
            proposed: dict[str, list[str]] = {}
            if not allow_dangerous:
                data, left, proposed = leave_off_permissions(data)
            exchange.insert_tables(c, data, seen_at)
            for agent_id, args in proposed.items():
                exchange.propose(c, agent_id, args, seen_at)
            for row in trees:
                wtdb.insert(c, row)
            _write_files(app, files)  # in the transaction: a failed write changes nothing
    except exchange.RecordRefused as exc:
        # validate() checks every constraint the schema has; this is its safety net
        raise refused(f"the database refused a record ({exc})") from None
    return len(data["agents"]), left


def _write_files(app: App, files: Mapping[str, Mapping[str, str]]) -> None:
    """Write the agents' files (owner-only) into their new folders, or none: on a failure the
    folders go again. The ids are new to this home (validate), so they hold nothing else."""
    made: list[Path] = []
    try:
        for agent_id, named in files.items():
            folder = app.paths.agent_dir(agent_id)
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            made.append(folder)
            for file_name, content in named.items():
                fd = os.open(folder / file_name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(content)
    except BaseException:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def cannot_resume(app: App, agent_ids: list[str]) -> list[tuple[str, str]]:
    """The imported agents whose conversation is not found here: (name, why)."""
    found = []
    for agent_id in agent_ids:
        agent: Agent | None = app.store.get_by_id(agent_id)
        if agent is None:
            continue
        why = prov.get(agent.provider).conversation_missing(agent, app.environ, app.paths.home)
        if why is not None:
            found.append((agent.name, why))
    return found


# ---- approving what an import kept aside ---------------------------------------------------
def proposal(app: App, name: str) -> tuple[Agent, list[str] | None]:
    """The agent, and the arguments awaiting its approval (None: nothing awaits it)."""
    import json

    agent = app.store.require(name)  # its proposal is joined to its record
    return agent, json.loads(agent.proposed_args) if agent.proposed_args is not None else None


def approve(app: App, name: str, shown: list[str]) -> Agent:
    """Make `shown` (what the person was shown and said yes to) the agent's arguments, with an
    `approved` event, under the agent's lock; refused, nothing changed, if what awaits approval
    is no longer that (an rm and another import meanwhile)."""
    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        with app.store.write() as c:
            if not exchange.approve(c, agent.id, agent.name, shown, c.now_iso()):
                raise RoostError(
                    f"nothing approved: what {name} awaits approval for changed meanwhile; "
                    f"look again: roost approve {name}",
                    code=2,
                )
        return app.store.require(name)
