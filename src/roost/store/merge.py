"""The merge room's rows (issue 38; the tables: schema.MERGES): each merge roost made, recorded
before its branch moves; each agent's base as it moved since (a sibling's merge); and the pairs of
worktree agents that collide, with their one alert.

Every function that writes runs inside the caller's `store.write()` transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from roost.merge.rules import Collision


@dataclass(frozen=True, slots=True)
class Merge:
    id: int
    agent_id: str
    agent_name: str
    repo: str
    branch: str
    target: str
    mode: str
    source: str
    before: str
    result: str
    state: str
    at: str
    done_at: str | None
    error: str | None


_MERGE = (
    "id, agent_id, agent_name, repo, branch, target, mode, source, before, result, state, at, "
    "done_at, error"
)


def begin(
    c: sqlite3.Connection,
    agent_id: str,
    agent_name: str,
    repo: str,
    branch: str,
    target: str,
    mode: str,
    source: str,
    before: str,
    result: str,
    at: str,
) -> int:
    """Record a merge about to move `target` from `before` to `result` (intent first)."""
    cur = c.execute(
        "INSERT INTO merges (agent_id, agent_name, repo, branch, target, mode, source, before, "
        "result, state, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'moving', ?)",
        (agent_id, agent_name, repo, branch, target, mode, source, before, result, at),
    )
    return int(cur.lastrowid or 0)


def finish(c: sqlite3.Connection, merge_id: int, at: str, error: str | None = None) -> None:
    c.execute(
        "UPDATE merges SET state = ?, done_at = ?, error = ? WHERE id = ?",
        ("failed" if error else "done", at, error, merge_id),
    )


def merges(c: sqlite3.Connection, agent_id: str | None = None) -> list[Merge]:
    """The merges recorded (of one agent), oldest first."""
    where, args = ("WHERE agent_id = ?", (agent_id,)) if agent_id else ("", ())
    rows = c.execute(f"SELECT {_MERGE} FROM merges {where} ORDER BY id", args)
    return [Merge(*r) for r in rows]


# ---- bases that moved --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BaseMove:
    agent_id: str
    repo: str
    branch: str
    commit: str
    merge_id: int
    by_name: str
    at: str


def move_base(
    c: sqlite3.Connection,
    agent_id: str,
    repo: str,
    branch: str,
    commit: str,
    merge_id: int,
    by_name: str,
    at: str,
) -> None:
    c.execute(
        "INSERT INTO base_moves (agent_id, repo, branch, commit_id, merge_id, by_name, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET repo = excluded.repo, "
        "branch = excluded.branch, commit_id = excluded.commit_id, "
        "merge_id = excluded.merge_id, by_name = excluded.by_name, at = excluded.at",
        (agent_id, repo, branch, commit, merge_id, by_name, at),
    )


def base_move(c: sqlite3.Connection, agent_id: str) -> BaseMove | None:
    row = c.execute(
        "SELECT agent_id, repo, branch, commit_id, merge_id, by_name, at FROM base_moves "
        "WHERE agent_id = ?",
        (agent_id,),
    ).fetchone()
    return BaseMove(*row) if row else None


# ---- collisions ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Pair:
    a_id: str
    b_id: str
    a_name: str
    b_name: str
    repo: str
    collision: Collision
    active: bool
    found_at: str
    seen_at: str
    alerted_at: str | None


def _detail(c: Collision) -> str:
    lines = {path: [list(r) for r in ranges] for path, ranges in c.lines.items()}
    return json.dumps({"lines": lines, "conflicts": list(c.conflicts)}, sort_keys=True)


def _collision(a: str, b: str, detail: str) -> Collision:
    d = json.loads(detail)
    lines = {p: tuple((int(x[0]), int(x[1])) for x in r) for p, r in d.get("lines", {}).items()}
    return Collision(a, b, lines, tuple(d.get("conflicts", ())))


def judged(
    c: sqlite3.Connection,
    agent_id: str,
    repo: str,
    found: Iterable[Collision],
    others: Iterable[str],
    at: str,
) -> list[Collision]:
    """Store what one look found of `agent_id`'s pairs with each of `others` (the agents it was
    compared with): a pair found is marked (active), one not found any more is unmarked. Returns
    the pairs never alerted yet, now marked alerted: the caller logs their one alert."""
    fresh: list[Collision] = []
    found_pairs = {(x.a, x.b): x for x in found}
    for other in others:
        a, b = (agent_id, other) if agent_id < other else (other, agent_id)
        hit = found_pairs.get((a, b))
        row = c.execute(
            "SELECT alerted_at FROM collisions WHERE a_id = ? AND b_id = ?", (a, b)
        ).fetchone()
        if hit is None:
            if row is not None:
                c.execute(
                    "UPDATE collisions SET active = 0, seen_at = ? WHERE a_id = ? AND b_id = ?",
                    (at, a, b),
                )
            continue
        if row is None:
            c.execute(
                "INSERT INTO collisions (a_id, b_id, repo, detail, active, found_at, seen_at, "
                "alerted_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)",
                (a, b, repo, _detail(hit), at, at, at),
            )
            fresh.append(hit)
            continue
        c.execute(
            "UPDATE collisions SET detail = ?, active = 1, seen_at = ?, "
            "alerted_at = COALESCE(alerted_at, ?) WHERE a_id = ? AND b_id = ?",
            (_detail(hit), at, at, a, b),
        )
        if row[0] is None:
            fresh.append(hit)
    return fresh


def pairs(c: sqlite3.Connection, active: bool = True) -> list[Pair]:
    """The marked pairs (all of them with active=False), by repository and names."""
    rows = c.execute(
        "SELECT x.a_id, x.b_id, a.name, b.name, x.repo, x.detail, x.active, x.found_at, "
        "x.seen_at, x.alerted_at FROM collisions x JOIN agents a ON a.id = x.a_id "
        "JOIN agents b ON b.id = x.b_id "
        + ("WHERE x.active = 1 " if active else "")
        + "ORDER BY x.repo, a.name, b.name"
    )
    return [
        Pair(r[0], r[1], r[2], r[3], r[4], _collision(r[0], r[1], r[5]), bool(r[6]), *r[7:])
        for r in rows
    ]


def names(c: sqlite3.Connection, ids: Iterable[str]) -> Mapping[str, str]:
    wanted = list(ids)
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    rows = c.execute(f"SELECT id, name FROM agents WHERE id IN ({marks})", wanted)
    return {str(r[0]): str(r[1]) for r in rows}
