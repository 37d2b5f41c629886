"""The SQLite store: what the user wants (intent) for every agent. Reality lives in tmux.

This module opens the database and runs its transactions, and owns the agent records and their
provider session lineage. Every other SQL statement lives next to it in the store package:
schema.py (migrations), workspace.py (tabs, placements, pins, settings), events.py (the event
log), exchange.py (the rows of export and import).

Rules that keep it safe under concurrent roost invocations and kill -9:
- WAL, a busy timeout, and autocommit mode (`isolation_level=None`) so that every read-modify-write
  is an explicit `BEGIN IMMEDIATE` (deferred transactions deadlock into "database is locked").
- Never hold a transaction across a tmux call: callers read, release, act, then write.
- The schema is versioned with `PRAGMA user_version`; a newer, damaged (a quick check of roost's
  tables at every open), empty or foreign database is refused before anything is written to it,
  and only a missing file becomes a new store (store/failure.py words each refusal).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from roost.core.clock import Clock, iso
from roost.core.errors import RoostError
from roost.core.events import Event, EventKind
from roost.core.ids import flag_safe_problem
from roost.core.model import FIELDS, Agent
from roost.core.present import command
from roost.store import agents as agent_rows
from roost.store import events as event_log
from roost.store import failure
from roost.store.schema import SCHEMA_VERSION, apply, damage
from roost.system.clock import SystemClock


class Connection(sqlite3.Connection):
    """The connection every store function takes, named here so that no room above the store
    imports sqlite3 (pyproject.toml's contract keeps it in the store). It carries the App's
    clock, so whatever holds it stamps the App's time (`c.now_iso()`), never the wall's."""

    clock: Clock = SystemClock()

    def now_iso(self) -> str:
        return iso(self.clock.now())


def _connect(target: str | Path, clock: Clock, **options: Any) -> Connection:
    conn = sqlite3.connect(target, factory=Connection, **options)
    conn.clock = clock
    return conn


# The agents table's columns, in the order of Agent's parameters.
AGENT_FIELDS = FIELDS
_COLUMNS = ", ".join(AGENT_FIELDS)


class NameTaken(RoostError):
    pass


class SessionIdTaken(RoostError):
    pass


class SessionIdRefused(SessionIdTaken):
    """A provider session id that could read as a flag (`--dangerously-skip-permissions`) or
    is no id at all: never stored, whoever offers it (a hook payload, a provider's file).
    Refused like a taken one, so callers that skip a taken candidate skip this one too."""


def insert_row(c: sqlite3.Connection, fields: Mapping[str, Any]) -> None:
    """Insert one agent from its field values (Agent's types, args a sequence of strings),
    inside the caller's transaction. Its session lineage is the caller's to record."""
    values = [fields[f] for f in AGENT_FIELDS]
    values[AGENT_FIELDS.index("args")] = json.dumps(list(fields["args"]))
    values[AGENT_FIELDS.index("dangerous")] = int(bool(fields["dangerous"]))
    values[AGENT_FIELDS.index("conversation_seen")] = int(bool(fields["conversation_seen"]))
    values[AGENT_FIELDS.index("mcp")] = int(bool(fields["mcp"]))
    if fields["placement"] == "tile":  # a tile is stored as its tab's leaf (store/agents.py)
        values[AGENT_FIELDS.index("placement")] = None
        values[AGENT_FIELDS.index("tab_id")] = None
    c.execute(
        f"INSERT INTO agents ({_COLUMNS}) VALUES ({', '.join('?' * len(AGENT_FIELDS))})", values
    )


def _exists(path: Path) -> bool:
    """Anything at `path`, a dangling symlink included (SQLite would create its target)."""
    return os.path.lexists(path)


def _check_file(path: Path) -> None:
    """An existing file is used only as a store: never emptied into a new one."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        fix = command("rm", str(path))
        raise failure.StoreUnusable(
            f"{path} is a symlink to nothing; roost will not create its "
            f"database through it (remove it: {fix})"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise failure.StoreUnusable(f"{path} is not a file; roost keeps its database there")
    if info.st_size == 0:
        raise failure.damaged(path, "is empty (0 bytes), so it holds no roost store")
    if not failure.writable(path):  # a command that writes: say so up front
        raise failure.read_only(path, "this user cannot write to it or to its folder")
    _owner_only(path, info)


def _owner_only(path: Path, info: os.stat_result) -> None:
    """Files made by an older roost (0644) become 0600; SQLite gives -wal and -shm the
    database's mode when it creates them."""
    if info.st_uid != os.getuid() or not info.st_mode & 0o077:
        return
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            os.chmod(name, 0o600)
        except OSError:
            continue  # missing, or a read-only filesystem: opening says what matters


def _create(path: Path) -> None:
    """Build a new store under a temporary name (owner-only, never through a symlink) and link
    it into place whole: a file at `path` is always a complete store, so an empty one there is
    damage, never a store being born. Of two roosts creating it at once, one links and the
    other opens the winner's."""
    tmp = path.with_name(f".{path.name}.new-{os.urandom(6).hex()}")
    os.close(os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            # born in WAL mode (kept in the file's header): else every roost opening the new
            # store switches it, and twenty at once contend for the exclusive lock a switch takes
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            apply(conn, 0)
            conn.execute("COMMIT")
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        for leftover in (tmp, *(Path(f"{tmp}-{end}") for end in ("journal", "wal", "shm"))):
            leftover.unlink(missing_ok=True)


def add_to_lineage(c: sqlite3.Connection, agent_id: str, session_id: str, seen_at: str) -> None:
    """Record a provider session id of the agent; rowid keeps the order of equal times."""
    c.execute("INSERT INTO provider_sessions VALUES (?, ?, ?)", (session_id, agent_id, seen_at))


def add_to_history(
    c: sqlite3.Connection,
    agent_id: str,
    session_id: str,
    previous: str | None,
    reason: str,
    at: str,
) -> None:
    """Record that the agent's provider session id became `session_id` (from `previous`), when
    and why."""
    c.execute(
        "INSERT INTO session_history (agent_id, provider_session_id, previous, at, reason) "
        "VALUES (?, ?, ?, ?, ?)",
        (agent_id, session_id, previous, at, reason),
    )


class Store:
    def __init__(self, conn: Connection, path: Path, read_only: bool = False) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only  # opened only to read: the filesystem takes no write

    @property
    def clock(self) -> Clock:
        """The time the store stamps: its App's clock (ops/context.App binds it)."""
        return self.conn.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.conn.clock = clock

    def now_iso(self) -> str:
        return self.conn.now_iso()

    # ---- opening -------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path, reading: bool = False, clock: Clock | None = None) -> Store:
        """The store at `path`; a new one only where no file exists. Refused with one line
        (exit 3) before anything is written to it: an empty, damaged, foreign or newer file, a
        read-only or full filesystem. `reading`: the command only reads (ls, events, export),
        so a read-only or full filesystem opens it read-only instead. `clock`: the time it
        stamps (the system's unless given)."""
        clock = clock or SystemClock()
        try:
            try:
                return cls._open(path, clock)
            except (sqlite3.Error, OSError) as exc:
                problem = failure.explain(path, exc)
                if problem is None:
                    raise
                raise problem from exc
        except failure.StoreUnwritable:
            if not reading or not os.path.isfile(path):
                raise
            return cls._open_read_only(path, clock)

    @classmethod
    def _open_read_only(cls, path: Path, clock: Clock) -> Store:
        """mode=ro; immutable=1 too when SQLite cannot open the WAL's shared memory read-only
        (nobody writes a file on a read-only or full filesystem meanwhile)."""
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            conn = _connect(
                f"{path.as_uri()}?{flags}", clock, uri=True, isolation_level=None, timeout=30.0
            )
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                problem = damage(conn)
            except sqlite3.Error:
                conn.close()
                continue
            if problem or version != SCHEMA_VERSION:
                conn.close()
                if problem:
                    raise failure.damaged(path, f"is damaged ({problem})")
                raise failure.read_only(
                    path, f"schema {version}; only a write could bring it to {SCHEMA_VERSION}"
                )
            return cls(conn, path, read_only=True)
        raise failure.read_only(path, "SQLite cannot open it even to read")

    @classmethod
    def _open(cls, path: Path, clock: Clock) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if _exists(path):
            _check_file(path)
        else:
            _create(path)
        conn = _connect(path, clock, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RoostError(
                    f"the roost database {path} has schema version {version}, newer than this "
                    f"roost understands ({SCHEMA_VERSION}); upgrade roost. The database was "
                    "left untouched",
                    code=3,
                )
            problem = damage(conn)
            if problem:
                raise failure.damaged(path, f"is damaged ({problem})")
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise failure.StoreUnusable(
                    f"{path} is not a roost database (it holds tables of something else); it "
                    "was left untouched: point ROOST_HOME at a folder of roost's own"
                )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            store = cls(conn, path)
            if version < SCHEMA_VERSION:
                store._migrate()
        except BaseException:
            conn.close()
            raise
        return store

    def _migrate(self) -> None:
        with self.write():
            # Re-read inside the write lock: a concurrent roost may have migrated already.
            apply(self.conn, self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One read-modify-write: BEGIN IMMEDIATE takes the write lock up front. A database that
        cannot take the write (read-only, full, damaged) is one clear line, and nothing of the
        transaction stays."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:  # SQLite may have rolled back already (disk full)
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise  # a constraint: the caller says what it means (NameTaken...)
        except sqlite3.Error as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")  # a COMMIT that failed
            problem = failure.explain(self.path, exc)
            if problem is None:
                raise
            raise problem from exc

    # ---- reading -------------------------------------------------------------------------
    def agents(self) -> list[Agent]:
        return agent_rows.read(self.conn)

    def get(self, name: str) -> Agent | None:
        found = agent_rows.read(self.conn, "a.name = ?", (name,))
        return found[0] if found else None

    def get_by_id(self, agent_id: str) -> Agent | None:
        found = agent_rows.read(self.conn, "a.id = ?", (agent_id,))
        return found[0] if found else None

    def names_by_id(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT id, name FROM agents").fetchall())

    def require(self, name: str) -> Agent:
        agent = self.get(name)
        if agent is None:
            raise RoostError(f"no agent named {name!r} (see `roost ls`)", code=4)
        return agent

    def session_history(self, agent_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT provider_session_id FROM provider_sessions WHERE agent_id = ? "
            "ORDER BY seen_at, rowid",
            (agent_id,),
        )
        return [str(r[0]) for r in rows]

    def known_session_ids(self) -> set[str]:
        """Every provider session id an agent of this home has had."""
        return {
            str(r[0])
            for r in self.conn.execute("SELECT provider_session_id FROM provider_sessions")
        }

    def session_changes(self, agent_id: str) -> list[dict[str, object]]:
        """Every change of the agent's provider session id, oldest first: the id, the one it
        replaced, when, and why (spawn, clear, compact, discovered, fresh, chosen...)."""
        rows = self.conn.execute(
            "SELECT provider_session_id, previous, at, reason FROM session_history "
            "WHERE agent_id = ? ORDER BY id",
            (agent_id,),
        )
        return [{"session_id": r[0], "previous": r[1], "at": r[2], "reason": r[3]} for r in rows]

    def launch(self, agent_id: str) -> tuple[str, float] | None:
        """The token and start time (epoch seconds) of the agent's current launch; None for an
        agent last launched by a roost that gave launches no token."""
        row = self.conn.execute(
            "SELECT token, at FROM launches WHERE agent_id = ?", (agent_id,)
        ).fetchone()
        return (str(row[0]), float(row[1])) if row else None

    def agent_for_token(self, token: str) -> str | None:
        """The id of the agent whose current launch has `token` (the secret its CLI shows the
        shared MCP endpoint, mcp/http.py), or None: `launches` keeps only each agent's current
        launch, so a token of an earlier launch names nobody."""
        found = "SELECT agent_id FROM launches WHERE token = ?"
        row = self.conn.execute(found, (token,)).fetchone()
        return str(row[0]) if row else None

    # ---- writing -------------------------------------------------------------------------
    def begin_launch(self, agent_id: str, token: str, at: float) -> None:
        """Record a launch's token before its process starts: the hook events that carry it
        are that process's own (ops/learn.py)."""
        with self.write() as c:
            c.execute(
                "INSERT OR REPLACE INTO launches (agent_id, token, at) VALUES (?, ?, ?)",
                (agent_id, token, at),
            )

    def insert(self, agent: Agent, then: Callable[[Connection], None] | None = None) -> None:
        """Add a record; `then` runs in the same transaction (placing it in the workspace)."""
        try:
            with self.write() as c:
                insert_row(c, {f: getattr(agent, f) for f in AGENT_FIELDS})
                if agent.provider_session_id:
                    self._claim_session_id(c, agent.id, agent.provider_session_id, None, "spawn")
                if then is not None:
                    then(c)
        except sqlite3.IntegrityError as exc:
            if "agents.name" in str(exc):
                raise NameTaken(f"agent {agent.name!r} already exists") from exc
            raise SessionIdTaken(
                f"provider session {agent.provider_session_id} already belongs to another agent"
            ) from exc

    _MUTABLE = frozenset(AGENT_FIELDS) - {
        "id",
        "name",
        "args",
        "provider",
        "provider_session_id",
        "created_at",
    }

    def update(self, agent_id: str, **fields: object) -> None:
        with self.write() as c:
            self._update(c, agent_id, fields)

    def update_logged(
        self,
        agent: Agent,
        kind: EventKind,
        detail: Mapping[str, object],
        unless_changed: tuple[Mapping[str, object], Mapping[str, object]] | None = None,
        **fields: object,
    ) -> None:
        """`update` and `log` in one transaction: no reader sees the change without its event
        (a launch's columns and its `started`: what happened since is read by its event id).
        `unless_changed` (was, then): the columns `then` are set too, unless one of `was`'s
        columns no longer holds the value given (another writer recorded news meanwhile)."""
        with self.write() as c:
            self._update(c, agent.id, fields)
            if unless_changed is not None:
                was, then = unless_changed
                self._update_if(c, agent.id, was, then)
            event_log.append(c, agent.id, agent.name, c.now_iso(), kind, detail)

    def _update_if(
        self, c: Connection, agent_id: str, was: Mapping[str, object], then: Mapping[str, object]
    ) -> None:
        self._check_mutable({**was, **then})
        sets = ", ".join(f"{k} = ?" for k in then)
        held = "".join(f" AND {k} IS ?" for k in was)
        c.execute(
            f"UPDATE agents SET {sets} WHERE id = ?{held}",
            (*then.values(), agent_id, *was.values()),
        )

    def _check_mutable(self, fields: Mapping[str, object]) -> None:
        unknown = set(fields) - self._MUTABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")

    def _update(self, c: Connection, agent_id: str, fields: Mapping[str, object]) -> None:
        self._check_mutable(fields)
        sets = ", ".join(f"{k} = ?" for k in fields)
        values = [int(v) if isinstance(v, bool) else v for v in fields.values()]
        c.execute(f"UPDATE agents SET {sets} WHERE id = ?", (*values, agent_id))

    def set_provider_session_id(
        self, agent_id: str, session_id: str, reason: str = "discovered", **fields: object
    ) -> None:
        """Record the agent's current provider session id and why it changed; the old ones stay
        as its lineage. `fields` are other columns to set with it (the transcript...)."""
        self._check_mutable(fields)
        try:
            with self.write() as c:
                previous = c.execute(
                    "SELECT provider_session_id FROM agents WHERE id = ?", (agent_id,)
                ).fetchone()
                sets = "".join(f", {k} = ?" for k in fields)
                c.execute(
                    f"UPDATE agents SET provider_session_id = ?{sets} WHERE id = ?",
                    (session_id, *fields.values(), agent_id),
                )
                self._claim_session_id(
                    c, agent_id, session_id, previous[0] if previous else None, reason
                )
        except sqlite3.IntegrityError as exc:
            raise SessionIdTaken(
                f"provider session {session_id} already belongs to another agent"
            ) from exc

    def new_conversation(self, agent_id: str, session_id: str | None) -> None:
        """`wake --fresh`: forget the current conversation and count launches from zero; the old
        session ids stay as lineage. `session_id` is the new one when the provider mints it."""
        try:
            with self.write() as c:
                previous = c.execute(
                    "SELECT provider_session_id FROM agents WHERE id = ?", (agent_id,)
                ).fetchone()
                c.execute(
                    "UPDATE agents SET provider_session_id = ?, launches = 0 WHERE id = ?",
                    (session_id, agent_id),
                )
                if session_id:
                    self._claim_session_id(
                        c, agent_id, session_id, previous[0] if previous else None, "fresh"
                    )
        except sqlite3.IntegrityError as exc:
            raise SessionIdTaken(
                f"provider session {session_id} already belongs to another agent"
            ) from exc

    @staticmethod
    def _claim_session_id(
        c: Connection, agent_id: str, session_id: str, previous: str | None, reason: str
    ) -> None:
        problem = flag_safe_problem(session_id)
        if problem:
            raise SessionIdRefused(f"provider session id refused: {problem}")
        owner = c.execute(
            "SELECT agent_id FROM provider_sessions WHERE provider_session_id = ?", (session_id,)
        ).fetchone()
        at = c.now_iso()
        if owner is None:
            add_to_lineage(c, agent_id, session_id, at)
        elif owner[0] != agent_id:
            raise sqlite3.IntegrityError("provider_sessions.provider_session_id")
        if session_id != previous:
            add_to_history(c, agent_id, session_id, previous, reason, at)

    def delete(self, agent_id: str) -> None:
        from roost.store import alerts as alert_rows
        from roost.store import workspace as wsdb

        with self.write() as c:
            wsdb.forget(c, agent_id)
            alert_rows.forget(c, agent_id)
            c.execute("DELETE FROM agents WHERE id = ?", (agent_id,))

    def log(self, agent: Agent, kind: EventKind, **detail: object) -> None:
        """Append to the agent's event log (spawned, started, exited, killed, status, sent...)."""
        with self.write() as c:
            event_log.append(c, agent.id, agent.name, c.now_iso(), kind, detail)

    def events(self, agent_id: str | None = None, limit: int = 1000) -> list[Event]:
        """The last `limit` events (of one agent, or of all), oldest first."""
        return event_log.recent(self.conn, agent_id, limit)

    def last_event_id(self) -> int:
        return event_log.last_id(self.conn)

    def events_since(self, after: int, kind: EventKind) -> list[Event]:
        """The events of `kind` after event `after`, oldest first (`roost watch`)."""
        return event_log.since(self.conn, after, kind)

    def integrity(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])
