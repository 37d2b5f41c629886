"""Recall (issue 39): one index of every conversation roost's agents have had, and the typed
API every surface calls (the CLI here; the TUI, the web and MCP on top of it):

- `index(app, agents)`: read what each record gained since the last read, by byte offset
  (never again from the start unless the file was replaced or cut), and add its messages;
- `fresh_search(app, query, filters, limit) -> list[Hit]` (a pass, then `search`),
  `turns(app, name, n, context) -> list[Turn]`, `forget(app, name)` (and `remember`),
  `reindex(app)`, `prune(app)` (gc), `stats(app)` (doctor);
- `COMPONENT`: the service keeps the index current (a stat of each running agent's record a
  second; a read only when one grew), unless `[recall] index = false`.

Which file holds which conversation is each provider's (`record_file`, the paths its usage
and replies readers use), for every session of the agent's lineage (store.session_history).
Every record is another program's bytes: opened by system/untrusted (a regular file only,
never blocking), never through a symlink, read in pieces of at most CHUNK bytes, a line over
LINE_LIMIT and a file over FILE_LIMIT left out and counted; what is shown is made visible.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from roost.core.errors import RoostError
from roost.core.model import INTENT_RUNNING, Agent
from roost.core.names import check_name
from roost.core.present import visible
from roost.ops.context import App
from roost.ops.service import Component
from roost.providers import forking
from roost.providers.base import get as provider
from roost.recall import rules
from roost.store import recall as rows
from roost.store.events import StatusChange
from roost.store.recall import BadQuery, Filters, Said
from roost.system import untrusted

__all__ = [
    "BadQuery",
    "Filters",
    "Hit",
    "Turn",
    "forget",
    "fresh_search",
    "reindex",
    "remember",
    "search",
    "turns",
]

INDEX_FILE = "recall.db"
CHUNK = 8 << 20  # bytes read from one record at a time
LINE_LIMIT = untrusted.LINE_LIMIT  # a longer line is left out (counted)
FILE_LIMIT = 4 << 30  # a larger record is left out whole (counted)
PASS_LIMIT = 64 << 20  # bytes one indexing pass reads in all: the next pass goes on


def index_path(app: App) -> Path:
    return Path(app.paths.home) / INDEX_FILE


def connect(app: App) -> rows.Connection:
    return rows.open_index(index_path(app))


# ---- what there is to index ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Source:
    """One record file of one agent's conversation (a session of its lineage)."""

    agent_id: str
    name: str
    provider: str
    cwd: str
    session: str | None
    path: str
    current: bool  # its current session's: the one that grows


def sources(
    app: App,
    agents: Iterable[Agent] | None = None,
    cache: dict[tuple[str, str | None], str] | None = None,
) -> list[Source]:
    """Every record file of every agent (each session of its lineage), as its provider names
    it; a file of several sessions (aider's) once. `cache`: the paths found before, by agent
    and session (a codex rollout is looked for by a glob: once)."""
    found: dict[str, Source] = {}
    for agent in app.store.agents() if agents is None else agents:
        if agent.provider not in rules.PROVIDERS:
            continue
        impl = provider(agent.provider)
        lineage = [*app.store.session_history(agent.id), agent.provider_session_id]
        for sid in dict.fromkeys(lineage):
            path = None if cache is None else cache.get((agent.id, sid))
            if path is None:
                try:
                    named = impl.record_file(agent, sid, app.environ, app.paths.home)
                except OSError:
                    continue
                if named is None:
                    continue
                path = str(named)
                if cache is not None and os.path.exists(path):
                    cache[(agent.id, sid)] = path
            current = sid == agent.provider_session_id
            key = str(path)
            if key not in found or current:
                found[key] = Source(
                    agent.id, agent.name, agent.provider, agent.cwd, sid, key, current
                )
    return list(found.values())


# ---- indexing ------------------------------------------------------------------------------
@dataclass(slots=True)
class Progress:
    records: int = 0  # records read from
    read: int = 0  # bytes read
    messages: int = 0  # messages added
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


PASSING = "passing"  # state key: inside a line too long to read, passing it by


def _piece(fh: BinaryIO, state: rules.State) -> tuple[bytes, int, int]:
    """The complete lines from the file's position on (at most CHUNK bytes; a line being
    written waits), how far the offset moves, and how many lines were left out (longer than
    LINE_LIMIT: passed over a piece at a time, `state` saying so between pieces)."""
    data = fh.read(CHUNK)
    passed, skipped = 0, 0
    if state.get(PASSING):
        passed = data.find(b"\n") + 1
        if not passed:
            return b"", len(data), 0
        del state[PASSING]
        data = data[passed:]
    end = data.rfind(b"\n") + 1
    if not end and not passed and len(data) == CHUNK:  # one line longer than a piece
        data += fh.read(LINE_LIMIT + 1 - CHUNK)
        end = data.rfind(b"\n") + 1
        if not end and len(data) > LINE_LIMIT:
            state[PASSING] = True
            return b"", len(data), 1
    data = data[:end]
    if len(data) <= LINE_LIMIT:
        return data, passed + end, skipped  # no line in it can be too long
    lines = data.split(b"\n")
    long = [i for i, raw in enumerate(lines) if len(raw) > LINE_LIMIT]
    for i in reversed(long):
        del lines[i]
    skipped += len(long)
    return b"\n".join(lines), passed + end, skipped


def _refuse(
    c: rows.Connection, source: Source, held: rows.Record | None, why: str, done: Progress
) -> None:
    """The whole record is left out: said once (stored, counted), nothing written again."""
    done.refused.append((source.path, why))
    if held is not None and held.refused == why:
        return
    with rows.writing(c):
        if rows.is_forgotten(c, source.agent_id):
            return
        n = rows.agent(c, source.agent_id, source.name, source.provider, source.cwd)
        rows.refuse(c, rows.record(c, source.path, n, source.session), why)


def index_one(
    app: App, c: rows.Connection, source: Source, budget: int, done: Progress
) -> int | None:
    """Read what `source` gained (at most about `budget` bytes, added to `done`); the offset
    its record is read to, or None when it is not there or left out. A record that did not
    grow costs a stat and a SELECT, no write."""
    held = rows.find_record(c, source.path)
    try:
        if stat.S_ISLNK(os.lstat(source.path).st_mode):
            _refuse(c, source, held, "a symlink", done)
            return None
        fh = untrusted.open_file(source.path)
    except untrusted.NotARegularFile:
        _refuse(c, source, held, "not a regular file", done)
        return None
    except OSError:
        return None  # not written yet, or gone
    read = 0
    with fh:
        info = os.fstat(fh.fileno())
        if info.st_size > FILE_LIMIT:
            _refuse(c, source, held, f"over {FILE_LIMIT >> 20} MiB", done)
            return None
        if (
            held is not None
            and held.refused is None
            and (held.inode, held.offset) == (info.st_ino, info.st_size)
        ):
            return held.offset  # nothing new
        with rows.writing(c):
            if rows.is_forgotten(c, source.agent_id):
                return None  # `roost search --forget`: never read again until remembered
            n = rows.agent(c, source.agent_id, source.name, source.provider, source.cwd)
            rec = rows.record(c, source.path, n, source.session)
            if rec.inode is not None and (rec.inode != info.st_ino or rec.offset > info.st_size):
                rows.restart(c, rec)  # replaced, or cut shorter: read again from its start
                rec = rows.record(c, source.path, n, source.session)
        offset, turn, state = rec.offset, rec.turn, dict(rec.state)
        fh.seek(offset)
        while read < budget and offset < info.st_size:
            data, moved, skipped = _piece(fh, state)
            if not moved:
                break  # a line still being written
            parsed = rules.parse(source.provider, data, state)
            keyed = [m.key for m in parsed.messages if m.key is not None]
            with rows.writing(c):
                if rows.is_forgotten(c, source.agent_id):
                    return None  # forgotten meanwhile (another process): nothing more added
                known = rows.known_keys(c, rec.id, keyed) if keyed else {}
                found, turn, after = rules.numbered(
                    parsed.messages, turn, rows.next_turn(c, n), known
                )
                now = app.clock.now().timestamp()
                rows.add(
                    c,
                    rec,
                    [
                        (t, m.role, now if m.at is None else m.at, m.key, m.text, m.files)
                        for t, m in found
                    ],
                    inode=info.st_ino,
                    offset=offset + moved,
                    turn=turn,
                    next_turn=after,
                    state=state,
                    skipped=skipped + parsed.malformed,
                )
            offset += moved
            read += moved
            done.messages += len(found)
    if read:
        done.records += 1
        done.read += read
    return offset


def index(app: App, agents: Iterable[Agent] | None = None, most: int = PASS_LIMIT) -> Progress:
    """One pass over the agents' records (all when None): what each gained, at most `most`
    bytes in all (the next pass goes on)."""
    c = connect(app)
    try:
        return _pass(app, c, _remembered(c, sources(app, agents)), most)
    finally:
        c.close()


def _remembered(c: rows.Connection, found: list[Source]) -> list[Source]:
    """The sources of agents not forgotten (`roost search --forget`)."""
    gone = rows.forgotten(c)
    return [s for s in found if s.agent_id not in gone] if gone else found


def _pass(app: App, c: rows.Connection, found: list[Source], most: int) -> Progress:
    done = Progress()
    for source in found:
        if done.read >= most:
            break
        index_one(app, c, source, most - done.read, done)
    return done


def catch_up(app: App, agents: Iterable[Agent] | None = None) -> Progress:
    """Index until every record is read to its end (one connection, pass after pass)."""
    total = Progress()
    c = connect(app)
    try:
        found = _remembered(c, sources(app, agents))
        while True:
            step = _pass(app, c, found, PASS_LIMIT)
            total.records += step.records
            total.read += step.read
            total.messages += step.messages
            total.refused = step.refused
            if step.read == 0:
                return total
    finally:
        c.close()


def reindex(app: App) -> Progress:
    """Rebuild the index of every agent roost knows from its records (an index that cannot be
    opened is replaced, keeping the forgotten marks it still gives up). Agents removed since
    (`rm`) keep what the index holds of them; forgotten agents stay out."""
    try:
        c = connect(app)
    except rows.Damaged:
        marks = rows.salvage_forgotten(index_path(app))
        rows.discard(index_path(app))
        c = connect(app)
        with rows.writing(c):
            rows.restore_forgotten(c, marks)
    try:
        with rows.writing(c):
            rows.forget(c, [a.id for a in app.store.agents()])
    finally:
        c.close()
    done = catch_up(app)
    c = connect(app)
    try:
        rows.optimize(c)
    finally:
        c.close()
    return done


# ---- reading -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hit:
    """One message a search found: whose, which turn, when, and its words around the match
    (control characters made visible; the match between MARKS)."""

    agent: str  # its name
    agent_id: str
    provider: str
    session: str | None
    turn: int
    role: str
    at: float | None
    snippet: str
    files: tuple[str, ...]
    rank: float

    @property
    def ref(self) -> str:
        return f"{self.agent}@{self.turn}"

    @property
    def when(self) -> str:
        return _iso(self.at)

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "agent": self.agent,
            "agent_id": self.agent_id,
            "provider": self.provider,
            "session": self.session,
            "turn": self.turn,
            "role": self.role,
            "at": self.when,
            "snippet": self.snippet,
            "files": list(self.files),
            "rank": self.rank,
        }


MARKS = ("«", "»")  # around the matched words in a snippet


def _iso(at: float | None) -> str:
    if at is None:
        return ""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _shown(text: str) -> str:
    """A snippet for one line of a terminal: its marks as MARKS, every control character
    (a newline too) made visible."""
    marked = text.replace(rows.MARK_START, MARKS[0]).replace(rows.MARK_END, MARKS[1])
    return visible(marked.replace("\n", " "))


def search(app: App, query: str, filters: Filters | None = None, limit: int = 20) -> list[Hit]:
    """The best `limit` messages for `query` (FTS5: words, "phrases", prefix*, AND/OR/NOT),
    bm25 first. BadQuery (exit 2) when FTS5 cannot read it."""
    if not query.strip():
        raise BadQuery("search: the query is empty", code=2)
    if filters is not None and filters.role is not None and filters.role not in rules.ROLES:
        raise RoostError(f"search: no role {filters.role!r} (user, agent or tool)", code=2)
    c = connect(app)
    try:
        found = rows.search(c, query, filters or Filters(), max(1, limit))
    finally:
        c.close()
    return [
        Hit(
            f.name,
            f.agent_id,
            f.provider,
            f.session,
            f.turn,
            f.role,
            f.at,
            _shown(f.snippet),
            tuple(visible(p) for p in f.files),
            f.rank,
        )
        for f in found
    ]


def fresh_search(
    app: App, query: str, filters: Filters | None = None, limit: int = 20
) -> list[Hit]:
    """`search` after one indexing pass over what the records gained that the service has
    not read yet (none while it keeps up; none when `[recall] index = false`): what every
    surface asks (the CLI, the web, the TUI, MCP's search_conversations)."""
    if app.settings.recall.index:
        index(app)
    return search(app, query, filters, limit)


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of an agent's conversation as the index holds it: its prompt, the agent's
    words and its tool calls, in order (each text made visible, its lines kept)."""

    agent: str
    number: int
    messages: tuple[Said, ...]

    @property
    def ref(self) -> str:
        return f"{self.agent}@{self.number}"

    @property
    def at(self) -> str:
        return _iso(self.messages[0].at) if self.messages else ""

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "turn": self.number,
            "at": self.at,
            "messages": [
                {"role": m.role, "at": _iso(m.at), "text": m.text, "files": list(m.files)}
                for m in self.messages
            ],
        }


def _indexed(app: App, c: rows.Connection, name: str) -> tuple[int, str]:
    """(index number, name) of the agent NAME: roost's agent of that name, else the last one
    the index holds under it (removed since)."""
    current = app.store.get(name)
    ids = ([current.id] if current is not None else []) + rows.agent_ids(c, name)
    for agent_id in ids:
        row = rows.agent_row(c, agent_id)
        if row is not None:
            return row[0], row[1]
    raise RoostError(f"no conversation of {name!r} in the recall index", code=4)


def turns(app: App, name: str, number: int, context: int = 0) -> list[Turn]:
    """Turn `number` of agent `name` with `context` turns either side (those that exist)."""
    c = connect(app)
    try:
        n, shown_name = _indexed(app, c, name)
        said = rows.said(c, n, max(0, number - max(0, context)), number + max(0, context))
        last = rows.last_turn(c, n)
    finally:
        c.close()
    if not any(m.turn == number for m in said):
        raise RoostError(
            f"{name} has no turn {number} in the recall index (its turns: 1 to {last})"
            if last
            else f"{name} has no turn {number} in the recall index",
            code=4,
        )
    grouped: dict[int, list[Said]] = {}
    for m in said:
        grouped.setdefault(m.turn, []).append(m)
    return [Turn(shown_name, t, tuple(ms)) for t, ms in sorted(grouped.items())]


def last_turn(app: App, name: str) -> int:
    """The highest turn number the index holds of agent `name` (0: none)."""
    c = connect(app)
    try:
        n, _ = _indexed(app, c, name)
        return rows.last_turn(c, n)
    finally:
        c.close()


@dataclass(frozen=True, slots=True)
class ForkPoint:
    """Where `roost fork NAME@TURN NEW` starts: the agent to fork and the session to start
    the fork on (None: the agent's conversation as it stands, TURN being its last)."""

    name: str
    turn: int
    session: str | None = None
    path: str | None = None  # the copy's file, when one was made


def fork_point(app: App, ref: str, new: str) -> ForkPoint:
    """`roost fork NAME@TURN NEW`: at NAME's last turn, NAME's conversation as it stands; at
    an earlier turn (Claude Code and Codex), a copy of the record that holds that turn's
    prompt, up to the end of that turn, under a fresh session id (written whole, 0600, then
    renamed into the CLI's folder; the original is only read), which the fork starts on.
    Other CLIs, a turn the index does not hold or a record that cannot be copied: refused,
    nothing written."""
    found = rules.turn_ref(ref)
    if found is None:
        raise RoostError(f"fork: {ref!r} is not NAME@TURN (e.g. api@12)", code=2)
    name, number = found
    check_name(new)
    agent = app.store.require(name)
    if app.store.get(new) is not None:
        raise RoostError(f"agent {new!r} already exists", code=2)
    if app.settings.recall.index:
        index(app, [agent])
    c = connect(app)
    try:
        n, _ = _indexed(app, c, name)
        last = rows.last_turn(c, n)
        held = rows.turn_record(c, n, number, rules.USER) if 0 < number < last else None
    finally:
        c.close()
    if number == last:
        return ForkPoint(name, number)
    if held is None:
        raise RoostError(
            f"cannot fork {ref}: {name} has no turn {number} in the recall index (its turns: "
            f"1 to {last})",
            code=4,
        )
    why = forking.cannot(agent.provider)
    if why is None and agent.provider not in forking.AT_TURN:
        why = "its CLI cannot start on a copy of its record"
    if why is not None:
        raise RoostError(f"cannot fork {ref}: {why}; `roost show {ref}` shows that turn", code=2)
    rec, keep = held
    sid, path = _copy_to_turn(app, agent, ref, rec, keep)
    return ForkPoint(name, number, sid, str(path))


def _copy_to_turn(
    app: App, agent: Agent, ref: str, rec: rows.Record, keep: int
) -> tuple[str, Path]:
    """Copy `rec` up to the end of its `keep`-th turn under a fresh session id; the id and
    the copy's path. Read as every record is (a regular file, bounded lines, no symlink)."""
    if rec.session is None:
        raise RoostError(f"cannot fork {ref}: its record names no session", code=2)
    now = app.clock.now()
    sid = forking.new_session_id(agent.provider, now)
    dest = forking.copy_path(agent.provider, sid, agent.cwd, app.environ, now)
    cut = rules.Cut(agent.provider, keep, rec.session, sid)
    try:
        if stat.S_ISLNK(os.lstat(rec.path).st_mode):
            raise untrusted.NotARegularFile(rec.path)
        fh = untrusted.open_file(rec.path)
    except OSError as exc:
        raise RoostError(f"cannot fork {ref}: its record cannot be read ({exc})", code=2) from None
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".roost-fork-", suffix=".tmp")
    try:
        with fh, os.fdopen(fd, "wb") as out:
            if os.fstat(fh.fileno()).st_size > FILE_LIMIT:
                raise RoostError(f"cannot fork {ref}: its record is over {FILE_LIMIT >> 20} MiB")
            state: rules.State = {}
            while not cut.done:
                data, moved, skipped = _piece(fh, state)
                if skipped:
                    raise RoostError(
                        f"cannot fork {ref}: a line of its record is over {LINE_LIMIT >> 20} "
                        "MiB (a copy without it would break the conversation)",
                        code=2,
                    )
                if not moved:
                    break
                for line in data.split(b"\n"):
                    if line.strip():
                        out.writelines(x + b"\n" for x in cut.feed(line))
            out.writelines(x + b"\n" for x in cut.end())
            out.flush()
            os.fsync(out.fileno())
        if cut.opened < keep or not cut.renamed:
            raise RoostError(
                f"cannot fork {ref}: its record no longer holds that turn as the index does "
                "(`roost search --reindex`)"
                if cut.opened < keep
                else f"cannot fork {ref}: its record names no session id to rewrite",
                code=2,
            )
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise
    return sid, dest


def forget(app: App, name: str) -> int:
    """Remove every entry of the agents named `name` (roost's and removed ones) and mark them
    forgotten: the service, a search's catch-up and a --reindex never index them again (their
    later turns neither) until `remember(app, name)`. How many messages went."""
    c = connect(app)
    try:
        current = app.store.get(name)
        with rows.writing(c):
            ids = list(
                dict.fromkeys([*([current.id] if current else []), *rows.agent_ids(c, name)])
            )
            held = any(rows.agent_row(c, a) for a in ids)
            if not ids:
                raise RoostError(f"no conversation of {name!r} in the recall index", code=4)
            if not held and set(ids) <= rows.forgotten(c):
                raise RoostError(
                    f"{name} is already forgotten (`roost search --remember {name}` brings it "
                    "back)",
                    code=4,
                )
            rows.mark_forgotten(c, [(a, name) for a in ids], app.clock.now().timestamp())
            return rows.forget(c, ids)
    finally:
        c.close()


def remember(app: App, name: str) -> int:
    """Take the forgotten mark off the agents named `name` (`roost search --remember NAME`):
    their records are indexed again from their start at the next catch-up (the service's, or
    the next search's). How many agents were marked."""
    c = connect(app)
    try:
        current = app.store.get(name)
        with rows.writing(c):
            ids = rows.forgotten(c, name)
            if current is not None and rows.is_forgotten(c, current.id):
                ids.add(current.id)
            if not ids:
                raise RoostError(f"{name} is not forgotten in the recall index", code=4)
            return rows.unmark_forgotten(c, ids)
    finally:
        c.close()


def prune(app: App) -> int:
    """`roost gc`: forget the agents roost no longer knows (removed with `rm` or by gc)."""
    try:
        c = connect(app)
    except rows.Damaged:
        return 0
    try:
        known = {a.id for a in app.store.agents()}
        gone = [a for a in rows.agent_ids(c) if a not in known]
        with rows.writing(c):
            rows.unmark_forgotten(c, [a for a in rows.forgotten(c) if a not in known])
            return rows.forget(c, gone)
    finally:
        c.close()


@dataclass(frozen=True, slots=True)
class Stats:
    path: str
    totals: rows.Totals
    lag: int  # bytes of records not yet indexed
    refused: tuple[tuple[str, str], ...]


def stats(app: App) -> Stats:
    """The index's size and entries, its refused records and lines, and its lag."""
    c = connect(app)
    try:
        totals = rows.totals(c, index_path(app))
        held = {r.path: r for r in rows.records(c)}
        found = _remembered(c, sources(app))
    finally:
        c.close()
    lag = 0
    for source in found:
        rec = held.get(source.path)
        if rec is not None and rec.refused:
            continue
        try:
            size = os.stat(source.path).st_size
        except OSError:
            continue
        lag += max(0, size - (rec.offset if rec is not None else 0))
    refused = tuple((r.path, r.refused) for r in held.values() if r.refused)
    return Stats(str(index_path(app)), totals, lag, refused)


# ---- the service ---------------------------------------------------------------------------
INTERVAL = 1.0  # seconds between two looks at the running agents' records (a stat each)
LOOKUP = 30.0  # seconds between two listings of every agent's records
RELIST = 2.0  # seconds at least between two listings a status change asks for


class _Switch:
    """The service's indexing: on unless config says `[recall] index = false` (applied live),
    woken early by a status change (a turn's end: a record grew)."""

    def __init__(self) -> None:
        self.enabled = True
        self.stopping = threading.Event()
        self.woken = threading.Event()


_switch = _Switch()


class Watch:
    """The records to look at and the size each was read to: the running agents' current
    records, and any record not read to its end (a backlog, an old session's). One stat each a
    look, a read only when one grew; every agent's records listed again at a lookup (every
    LOOKUP s, and after a status change, at most every RELIST s). One index connection."""

    def __init__(self) -> None:
        self.watched: dict[str, tuple[Source, int]] = {}  # path -> (source, offset read to)
        self.live: set[str] = set()
        self.looked = float("-inf")
        self.pending = False  # a status change asked for a listing not made yet
        self.paths: dict[tuple[str, str | None], str] = {}  # records found, by agent, session
        self.conn: rows.Connection | None = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _list(self, app: App, c: rows.Connection) -> None:
        agents = app.store.agents()
        held = {r.path: r for r in rows.records(c)}
        self.live = {a.id for a in agents if a.intent == INTENT_RUNNING}
        self.watched = {}
        for s in _remembered(c, sources(app, agents, self.paths)):
            rec, size = held.get(s.path), _size(s.path)
            seen = -1 if rec is None else size if rec.refused else rec.offset
            if self._kept(s) or seen != size:
                self.watched[s.path] = (s, seen)

    def _kept(self, source: Source) -> bool:
        return source.current and source.agent_id in self.live

    def look(self, app: App, force: bool = False) -> Progress:
        done = Progress()
        now = app.clock.monotonic()
        if self.conn is None:
            self.conn = connect(app)
        c = self.conn
        try:
            self.pending = self.pending or force
            if now - self.looked >= (RELIST if self.pending else LOOKUP):
                self.looked, self.pending = now, False
                self._list(app, c)
            for path, (source, seen) in list(self.watched.items()):
                size = _size(path)
                if size == seen or done.read >= PASS_LIMIT:
                    continue
                reached = index_one(app, c, source, PASS_LIMIT - done.read, done)
                if reached is None or reached == seen:
                    reached = size  # left out, or a line still being written: until it grows
                if self._kept(source) or reached < size:
                    self.watched[path] = (source, reached)
                else:
                    del self.watched[path]  # read to its end, and no longer growing
        except BaseException:
            self.close()  # the next look opens the index again (replaced by a --reindex)
            raise
        return done


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _start(app: App) -> Callable[[], None]:
    from roost.ops.service import in_thread, say

    _switch.enabled = app.settings.recall.index
    _switch.stopping.clear()

    def work(mine: App) -> None:
        watch = Watch()
        try:
            _loop(mine, watch)
        finally:
            watch.close()

    def _loop(mine: App, watch: Watch) -> None:
        while not _switch.stopping.is_set():
            woken = _switch.woken.is_set()
            _switch.woken.clear()
            if _switch.enabled:
                try:
                    step = watch.look(mine, force=woken)
                except Exception as exc:  # noqa: BLE001 - one bad pass; a later one tries again
                    say(f"recall: an indexing pass failed: {type(exc).__name__}: {exc}")
                    _switch.woken.wait(LOOKUP)
                    continue
                if step.read:
                    continue  # more to read: go on at once
            _switch.woken.wait(INTERVAL)

    def ending() -> None:
        _switch.stopping.set()
        _switch.woken.set()

    return in_thread(app, "recall", work, ending)


def _on_status(app: App, changes: Sequence[StatusChange]) -> None:
    """A status changed (a turn began or ended, an agent started): look at every record now."""
    if changes:
        _switch.woken.set()


def _on_settings(app: App) -> None:
    _switch.enabled = app.settings.recall.index
    _switch.woken.set()


COMPONENT = Component(name="recall", start=_start, on_status=_on_status, on_settings=_on_settings)
