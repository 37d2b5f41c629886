"""The recall index's rows (issue 39): a SQLite database of its own beside roost.db
(`$ROOST_HOME/recall.db`, owner-only like the store), since what it holds is derived from the
CLIs' records, large, and rebuilt at will (`roost search --reindex`).

- `agents`: each agent ever indexed (kept after `rm` until gc prunes it), its name, CLI, cwd
  and the number its next turn gets (turns are numbered per agent across its lineage);
- `records`: each record file read (a CLI's transcript, rollout, chat file or history), whose
  agent and session it is, how far it was read (inode, byte offset, the parser's state, the
  record's current turn), the lines left out and, when the whole file was refused, why;
- `messages`: one row a message (its turn, role, time, text, the files it touched), and
  `messages_fts`, an FTS5 index over their text and files (external content: the text is
  stored once; bm25 ranks, snippet() shows);
- `forgotten`: the agents `roost search --forget` took out, by roost id (with the name they
  had): never indexed again, by the service, a search's catch-up or a --reindex, until
  `roost search --remember NAME` takes the mark away.

Writes run in one `BEGIN IMMEDIATE` (`writing`); a piece of a record is added with its new
offset in the same transaction, so a crash loses no message and indexes none twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.core.errors import RoostError

SCHEMA = 2
_FORGOTTEN = """
CREATE TABLE forgotten (
    agent_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    at REAL NOT NULL
)"""
_SCHEMA = (
    """
CREATE TABLE agents (
    n INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    provider TEXT NOT NULL,
    cwd TEXT NOT NULL,
    next_turn INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX agents_name ON agents(name);
CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    agent INTEGER NOT NULL REFERENCES agents(n),
    session TEXT,
    inode INTEGER,
    offset INTEGER NOT NULL DEFAULT 0,
    turn INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT '{}',
    skipped INTEGER NOT NULL DEFAULT 0,
    refused TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    record INTEGER NOT NULL,
    agent INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role TEXT NOT NULL,
    at REAL,
    key TEXT,
    text TEXT NOT NULL,
    files TEXT NOT NULL
);
CREATE INDEX messages_turn ON messages(agent, turn);
CREATE INDEX messages_key ON messages(record, key) WHERE key IS NOT NULL;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text, files, content='messages', content_rowid='id', tokenize='unicode61'
);
"""
    + _FORGOTTEN
)


Connection = sqlite3.Connection  # what the recall room names (it never imports sqlite3)


class BadQuery(RoostError):
    """A query FTS5 cannot parse."""


class Damaged(RoostError):
    """The index file is no recall index SQLite can read."""


@dataclass(frozen=True, slots=True)
class Record:
    id: int
    path: str
    agent: int
    session: str | None
    inode: int | None
    offset: int
    turn: int
    state: dict[str, Any]
    skipped: int
    refused: str | None


# One message to add: its turn, role, time, the record's key for it, text, files.
Row = tuple[int, str, float, str | None, str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Found:
    id: int
    agent_id: str
    name: str
    provider: str
    cwd: str
    session: str | None
    turn: int
    role: str
    at: float | None
    snippet: str
    files: tuple[str, ...]
    rank: float


@dataclass(frozen=True, slots=True)
class Said:
    turn: int
    role: str
    at: float | None
    text: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Filters:
    agent: str | None = None
    provider: str | None = None
    since: float | None = None
    until: float | None = None
    role: str | None = None
    file: str | None = None
    agent_ids: tuple[str, ...] | None = None  # only these agents (an MCP caller's subtree)


# ---- opening -------------------------------------------------------------------------------
def open_index(path: Path) -> sqlite3.Connection:
    """The index at `path`, made owner-only (0600 in a 0700 folder) when missing."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise Damaged(f"the recall index {path} cannot be opened: {exc}", code=3) from None
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    conn.execute("ROLLBACK")
                    raise Damaged(
                        f"{path} is not a recall index; `roost search --reindex` replaces it",
                        code=3,
                    )
                for statement in _SCHEMA.split(";\n"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA}")
            conn.execute("COMMIT")
        elif version == 1:  # schema 1 had no forgotten agents
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("PRAGMA user_version").fetchone()[0] == 1:
                conn.execute(_FORGOTTEN)
                conn.execute(f"PRAGMA user_version = {SCHEMA}")
            conn.execute("COMMIT")
        elif version != SCHEMA:
            raise Damaged(
                f"the recall index {path} has schema {version}, not {SCHEMA}: "
                "`roost search --reindex` rebuilds it",
                code=3,
            )
        conn.execute("PRAGMA synchronous = NORMAL")  # derived data: a rebuild restores it
        conn.execute("PRAGMA cache_size = -16384")  # KiB: FTS5's merges reread less
    except sqlite3.Error as exc:
        conn.close()
        raise Damaged(
            f"the recall index {path} is damaged ({exc}): `roost search --reindex` rebuilds it",
            code=3,
        ) from None
    except BaseException:
        conn.close()
        raise
    return conn


def discard(path: Path) -> None:
    """Remove the index file and its WAL (a rebuild from nothing)."""
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        name.unlink(missing_ok=True)


@contextmanager
def writing(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# ---- agents and records --------------------------------------------------------------------
def agent(c: sqlite3.Connection, agent_id: str, name: str, provider: str, cwd: str) -> int:
    """The agent's number in the index (added, or its name brought up to date)."""
    c.execute(
        "INSERT INTO agents (agent_id, name, provider, cwd) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(agent_id) DO UPDATE SET name = excluded.name, cwd = excluded.cwd",
        (agent_id, name, provider, cwd),
    )
    return int(c.execute("SELECT n FROM agents WHERE agent_id = ?", (agent_id,)).fetchone()[0])


def next_turn(c: sqlite3.Connection, n: int) -> int:
    return int(c.execute("SELECT next_turn FROM agents WHERE n = ?", (n,)).fetchone()[0])


_RECORD = "id, path, agent, session, inode, offset, turn, state, skipped, refused"


def _record(row: Sequence[Any]) -> Record:
    try:
        state = json.loads(row[7]) if row[7] else {}
    except ValueError:
        state = {}
    return Record(
        id=int(row[0]),
        path=str(row[1]),
        agent=int(row[2]),
        session=row[3],
        inode=row[4],
        offset=int(row[5]),
        turn=int(row[6]),
        state=state if isinstance(state, dict) else {},
        skipped=int(row[8]),
        refused=row[9],
    )


def record(c: sqlite3.Connection, path: str, n: int, session: str | None) -> Record:
    """The record file at `path` (added, unread, when new)."""
    c.execute(
        "INSERT INTO records (path, agent, session) VALUES (?, ?, ?) ON CONFLICT(path) DO NOTHING",
        (path, n, session),
    )
    return _record(c.execute(f"SELECT {_RECORD} FROM records WHERE path = ?", (path,)).fetchone())


def find_record(c: sqlite3.Connection, path: str) -> Record | None:
    """The record file at `path`, if the index holds it (a read: no write)."""
    row = c.execute(f"SELECT {_RECORD} FROM records WHERE path = ?", (path,)).fetchone()
    return None if row is None else _record(row)


def records(c: sqlite3.Connection, agent_ids: Iterable[str] | None = None) -> list[Record]:
    if agent_ids is None:
        rows = c.execute(f"SELECT {_RECORD} FROM records").fetchall()
    else:
        ids = list(agent_ids)
        rows = c.execute(
            f"SELECT {_RECORD} FROM records WHERE agent IN "
            f"(SELECT n FROM agents WHERE agent_id IN ({','.join('?' * len(ids))}))",
            ids,
        ).fetchall()
    return [_record(r) for r in rows]


def known_keys(c: sqlite3.Connection, record_id: int, keys: Iterable[str]) -> dict[str, int]:
    """The turns of the messages the index holds under these keys of a record."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        rows = c.execute(
            f"SELECT key, min(turn) FROM messages WHERE record = ? AND key IN "
            f"({','.join('?' * len(part))}) GROUP BY key",
            (record_id, *part),
        )
        found.update({str(k): int(t) for k, t in rows})
    return found


def _drop(c: sqlite3.Connection, where: str, args: Sequence[object]) -> int:
    c.execute(
        "INSERT INTO messages_fts (messages_fts, rowid, text, files) "
        f"SELECT 'delete', id, text, files FROM messages WHERE {where}",
        args,
    )
    return c.execute(f"DELETE FROM messages WHERE {where}", args).rowcount


def add(
    c: sqlite3.Connection,
    rec: Record,
    rows: Sequence[Row],
    *,
    inode: int,
    offset: int,
    turn: int,
    next_turn: int,
    state: dict[str, Any],
    skipped: int,
) -> None:
    """A piece of a record: its messages (replacing those held under the same keys) and the
    record's new offset, state and turn, the agent's next turn, in the caller's transaction."""
    keys = [r[3] for r in rows if r[3] is not None]
    for start in range(0, len(keys), 500):
        part = list(dict.fromkeys(keys[start : start + 500]))
        _drop(c, f"record = ? AND key IN ({','.join('?' * len(part))})", (rec.id, *part))
    first = c.execute("SELECT coalesce(max(id), 0) + 1 FROM messages").fetchone()[0]
    record, agent = rec.id, rec.agent
    values = [
        (first + i, record, agent, turn_, role, at, key, text, "\n".join(files))
        for i, (turn_, role, at, key, text, files) in enumerate(rows)
    ]
    c.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
    c.executemany(
        "INSERT INTO messages_fts (rowid, text, files) VALUES (?, ?, ?)",
        [(v[0], v[7], v[8]) for v in values],
    )
    c.execute(
        "UPDATE records SET inode = ?, offset = ?, turn = ?, state = ?, skipped = skipped + ?, "
        "refused = NULL WHERE id = ?",
        (inode, offset, turn, json.dumps(state), skipped, rec.id),
    )
    c.execute("UPDATE agents SET next_turn = max(next_turn, ?) WHERE n = ?", (next_turn, rec.agent))


def restart(c: sqlite3.Connection, rec: Record) -> None:
    """A record replaced or cut shorter than its offset: its messages go, read from 0 again."""
    _drop(c, "record = ?", (rec.id,))
    c.execute(
        "UPDATE records SET inode = NULL, offset = 0, turn = 0, state = '{}', skipped = 0 "
        "WHERE id = ?",
        (rec.id,),
    )


def refuse(c: sqlite3.Connection, rec: Record, why: str) -> None:
    """The whole record is left out (not a regular file, too big): said once, counted."""
    c.execute("UPDATE records SET refused = ? WHERE id = ?", (why, rec.id))


def forget(c: sqlite3.Connection, agent_ids: Iterable[str]) -> int:
    """Every message and record of these agents; how many messages went."""
    gone = 0
    for agent_id in agent_ids:
        row = c.execute("SELECT n FROM agents WHERE agent_id = ?", (agent_id,)).fetchone()
        if row is None:
            continue
        gone += _drop(c, "agent = ?", (row[0],))
        c.execute("DELETE FROM records WHERE agent = ?", (row[0],))
        c.execute("DELETE FROM agents WHERE n = ?", (row[0],))
    return gone


def mark_forgotten(c: sqlite3.Connection, marks: Iterable[tuple[str, str]], at: float) -> int:
    """Mark these (agent id, name) as forgotten; how many were not marked already."""
    before = c.total_changes
    c.executemany(
        "INSERT INTO forgotten (agent_id, name, at) VALUES (?, ?, ?) "
        "ON CONFLICT(agent_id) DO NOTHING",
        [(agent_id, name, at) for agent_id, name in marks],
    )
    return c.total_changes - before


def unmark_forgotten(c: sqlite3.Connection, agent_ids: Iterable[str]) -> int:
    """Take the forgotten mark off these agents; how many had one."""
    before = c.total_changes
    c.executemany("DELETE FROM forgotten WHERE agent_id = ?", [(a,) for a in agent_ids])
    return c.total_changes - before


def forgotten(c: sqlite3.Connection, name: str | None = None) -> set[str]:
    """The forgotten agents' ids (named `name`, when given)."""
    if name is None:
        rows = c.execute("SELECT agent_id FROM forgotten")
    else:
        rows = c.execute("SELECT agent_id FROM forgotten WHERE name = ?", (name,))
    return {str(r[0]) for r in rows}


def is_forgotten(c: sqlite3.Connection, agent_id: str) -> bool:
    row = c.execute("SELECT 1 FROM forgotten WHERE agent_id = ?", (agent_id,)).fetchone()
    return row is not None


def salvage_forgotten(path: Path) -> list[tuple[str, str, float]]:
    """The forgotten marks a damaged index still gives up (its table read as it can be),
    so that a rebuild keeps them; none when it gives up nothing."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error:
        return []
    try:
        return [
            (str(a), str(n), float(t))
            for a, n, t in conn.execute("SELECT agent_id, name, at FROM forgotten")
        ]
    except (sqlite3.Error, ValueError, TypeError):
        return []
    finally:
        conn.close()


def restore_forgotten(c: sqlite3.Connection, marks: Iterable[tuple[str, str, float]]) -> None:
    c.executemany(
        "INSERT INTO forgotten (agent_id, name, at) VALUES (?, ?, ?) "
        "ON CONFLICT(agent_id) DO NOTHING",
        list(marks),
    )


def agent_ids(c: sqlite3.Connection, name: str | None = None) -> list[str]:
    """The indexed agents (named `name`, when given), newest first."""
    if name is None:
        rows = c.execute("SELECT agent_id FROM agents ORDER BY n DESC")
    else:
        rows = c.execute("SELECT agent_id FROM agents WHERE name = ? ORDER BY n DESC", (name,))
    return [str(r[0]) for r in rows]


def agent_row(c: sqlite3.Connection, agent_id: str) -> tuple[int, str, str, str] | None:
    """(number, name, provider, cwd) of an indexed agent."""
    row = c.execute(
        "SELECT n, name, provider, cwd FROM agents WHERE agent_id = ?", (agent_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]), str(row[3]))


# ---- reading -------------------------------------------------------------------------------
# What SQLite says of a query FTS5 cannot read (any other error is the database's own).
QUERY_ERRORS = ("fts5", "syntax error", "no such column", "unterminated", "unknown special query")
MARK_START, MARK_END = "\x02", "\x03"  # the snippet's marks, made visible by whoever shows it


def search(
    c: sqlite3.Connection, query: str, filters: Filters, limit: int, tokens: int = 16
) -> list[Found]:
    """The best `limit` messages matching `query` (FTS5's syntax), bm25 first."""
    where, args = ["messages_fts MATCH ?"], [query]
    if filters.agent is not None:
        where.append("a.name = ?")
        args.append(filters.agent)
    if filters.agent_ids is not None:
        where.append(f"a.agent_id IN ({', '.join('?' * len(filters.agent_ids))})")
        args.extend(filters.agent_ids)
    if filters.provider is not None:
        where.append("a.provider = ?")
        args.append(filters.provider)
    if filters.since is not None:
        where.append("m.at >= ?")
        args.append(filters.since)  # type: ignore[arg-type]
    if filters.until is not None:
        where.append("m.at <= ?")
        args.append(filters.until)  # type: ignore[arg-type]
    if filters.role is not None:
        where.append("m.role = ?")
        args.append(filters.role)
    if filters.file is not None:  # turns in which a message names the file
        where.append(
            "(m.agent, m.turn) IN (SELECT t.agent, t.turn FROM messages t WHERE t.id IN "
            "(SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?) "
            "AND instr(t.files, ?) > 0)"
        )
        args += ['files : "' + filters.file.replace('"', '""') + '"', filters.file]
    sql = (
        "SELECT m.id, a.agent_id, a.name, a.provider, a.cwd, r.session, m.turn, m.role, m.at, "
        f"snippet(messages_fts, -1, '{MARK_START}', '{MARK_END}', '…', {int(tokens)}), "
        "m.files, bm25(messages_fts) "
        "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
        "JOIN agents a ON a.n = m.agent JOIN records r ON r.id = m.record "
        f"WHERE {' AND '.join(where)} ORDER BY bm25(messages_fts), m.id LIMIT ?"
    )
    try:
        rows = c.execute(sql, (*args, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if any(w in text for w in QUERY_ERRORS):
            raise BadQuery(f"search: FTS5 cannot read this query ({text})", code=2) from None
        raise
    return [
        Found(
            int(r[0]),
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            int(r[6]),
            r[7],
            r[8],
            r[9],
            tuple(f for f in str(r[10]).split("\n") if f),
            float(r[11]),
        )
        for r in rows
    ]


def said(c: sqlite3.Connection, n: int, first: int, last: int) -> list[Said]:
    """The messages of an agent's turns `first` to `last`, in order."""
    rows = c.execute(
        "SELECT turn, role, at, text, files FROM messages WHERE agent = ? AND turn BETWEEN ? "
        "AND ? ORDER BY turn, id",
        (n, first, last),
    )
    return [
        Said(int(r[0]), r[1], r[2], r[3], tuple(f for f in r[4].split("\n") if f)) for r in rows
    ]


def turn_record(c: sqlite3.Connection, n: int, turn: int, opener: str) -> tuple[Record, int] | None:
    """The record that holds the prompt (role `opener`) of agent `n`'s turn `turn`, and how
    many of that record's turns come up to it (that one included); None: no such prompt."""
    row = c.execute(
        "SELECT record FROM messages WHERE agent = ? AND turn = ? AND role = ? ORDER BY id LIMIT 1",
        (n, turn, opener),
    ).fetchone()
    if row is None:
        return None
    held = c.execute(f"SELECT {_RECORD} FROM records WHERE id = ?", (row[0],)).fetchone()
    if held is None:
        return None
    count = c.execute(
        "SELECT count(DISTINCT turn) FROM messages WHERE record = ? AND role = ? AND turn > 0 "
        "AND turn <= ?",
        (row[0], opener, turn),
    ).fetchone()[0]
    return _record(held), int(count)


def last_turn(c: sqlite3.Connection, n: int) -> int:
    row = c.execute("SELECT max(turn) FROM messages WHERE agent = ?", (n,)).fetchone()
    return int(row[0] or 0)


@dataclass(frozen=True, slots=True)
class Totals:
    messages: int
    agents: int
    records: int
    refused: int
    skipped_lines: int
    bytes: int  # the index file's size (with its WAL)


def totals(c: sqlite3.Connection, path: Path) -> Totals:
    messages = c.execute("SELECT count(*) FROM messages").fetchone()[0]
    agents = c.execute("SELECT count(*) FROM agents").fetchone()[0]
    recs, refused, skipped = c.execute(
        "SELECT count(*), count(refused), coalesce(sum(skipped), 0) FROM records"
    ).fetchone()
    size = sum(os.stat(p).st_size for p in (path, Path(f"{path}-wal")) if os.path.exists(p))
    return Totals(int(messages), int(agents), int(recs), int(refused), int(skipped), size)


def optimize(c: sqlite3.Connection) -> None:
    """Merge the FTS index's segments (after a rebuild)."""
    c.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
