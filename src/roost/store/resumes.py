"""Resume at a usage limit's reset (issue 23, part 2): the on-limit policies of agents and tabs,
the prompt roost sent each agent while its turn is open, and the durable schedule of resumes
(core/resuming.py decides, ops/resume.py acts). Writers run inside the caller's `store.write()`
transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

AGENT, TAB = "agent", "tab"


@dataclass(frozen=True, slots=True)
class Resume:
    agent_id: str
    name: str
    account: str
    due_at: float
    state: str
    tries: int
    prompt: str | None
    planned_at: float


def set_policy(c: sqlite3.Connection, scope: str, target_id: str, policy: str | None) -> None:
    """The agent's or tab's on-limit policy; None: none of its own (the next level decides)."""
    if policy is None:
        c.execute(
            "DELETE FROM on_limit_policies WHERE scope = ? AND target_id = ?", (scope, target_id)
        )
        return
    c.execute(
        "INSERT OR REPLACE INTO on_limit_policies (scope, target_id, policy) VALUES (?, ?, ?)",
        (scope, target_id, policy),
    )


def policies(c: sqlite3.Connection) -> dict[tuple[str, str], str]:
    """{(scope, target id): policy} of every agent and tab that has one of its own."""
    rows = c.execute("SELECT scope, target_id, policy FROM on_limit_policies").fetchall()
    return {(scope, target): policy for scope, target, policy in rows}


def note_prompt(c: sqlite3.Connection, agent_id: str, text: str, at: float) -> None:
    """The prompt roost just delivered: open until the agent's turn ends."""
    c.execute(
        "INSERT OR REPLACE INTO open_prompts (agent_id, text, sent_at) VALUES (?, ?, ?)",
        (agent_id, text, at),
    )


def close_prompts(c: sqlite3.Connection, agent_ids: Iterable[str]) -> None:
    """Their turns ended: no prompt of theirs is cut any more."""
    c.executemany("DELETE FROM open_prompts WHERE agent_id = ?", [(a,) for a in agent_ids])


def open_prompt(c: sqlite3.Connection, agent_id: str) -> str | None:
    row = c.execute("SELECT text FROM open_prompts WHERE agent_id = ?", (agent_id,)).fetchone()
    return str(row[0]) if row is not None else None


def put(
    c: sqlite3.Connection,
    agent_id: str,
    account: str,
    due_at: float,
    state: str,
    tries: int,
    prompt: str | None,
    planned_at: float,
) -> None:
    c.execute(
        "INSERT OR REPLACE INTO limit_resumes (agent_id, account, due_at, state, tries, prompt, "
        "planned_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (agent_id, account, due_at, state, tries, prompt, planned_at),
    )


def supersede(c: sqlite3.Connection, agent_id: str, text: str, began: float) -> None:
    """A send begun at `began` was delivered: the resume planned before it is cancelled; one
    planned since (the limit cut this very send's turn) resumes with its text."""
    c.execute("DELETE FROM limit_resumes WHERE agent_id = ? AND planned_at < ?", (agent_id, began))
    c.execute(
        "UPDATE limit_resumes SET prompt = ? WHERE agent_id = ? AND prompt IS NULL",
        (text, agent_id),
    )


def claim(c: sqlite3.Connection, agent_id: str, state: str, due_at: float, now: float) -> bool:
    """Move a resume that is due (`state`, due by `now`) to SENT, checked again at `due_at`;
    False when another process claimed it first (a resume is made once)."""
    moved = c.execute(
        "UPDATE limit_resumes SET state = 'sent', due_at = ? "
        "WHERE agent_id = ? AND state = ? AND due_at <= ?",
        (due_at, agent_id, state, now),
    )
    return moved.rowcount == 1


def drop(c: sqlite3.Connection, agent_ids: Iterable[str], state: str | None = None) -> None:
    """Cancel the agents' resumes (only those in `state`, when given)."""
    if state is None:
        c.executemany("DELETE FROM limit_resumes WHERE agent_id = ?", [(a,) for a in agent_ids])
    else:
        c.executemany(
            "DELETE FROM limit_resumes WHERE agent_id = ? AND state = ?",
            [(a, state) for a in agent_ids],
        )


def scheduled(c: sqlite3.Connection) -> list[Resume]:
    """Every resume, soonest first."""
    rows = c.execute(
        "SELECT r.agent_id, a.name, r.account, r.due_at, r.state, r.tries, r.prompt, "
        "r.planned_at "
        "FROM limit_resumes r JOIN agents a ON a.id = r.agent_id ORDER BY r.due_at, a.name"
    ).fetchall()
    return [Resume(*row) for row in rows]
