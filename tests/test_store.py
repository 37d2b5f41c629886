"""The store: schema versions, refusal of newer or corrupt files, constraints, crash safety."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from roost.core.errors import RoostError
from roost.core.model import FIELDS, Agent
from roost.store.db import (
    AGENT_FIELDS,
    NameTaken,
    SessionIdTaken,
    Store,
    insert_row,
)
from roost.store.schema import SCHEMA_VERSION


def make(name: str, sid: str | None = None) -> Agent:
    return Agent(
        id=f"id-{name}",
        name=name,
        provider="claude",
        cwd="/w",
        home=name,
        provider_session_id=sid,
        created_at="2026-01-01T00:00:00+00:00",
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_store_is_migrated_and_in_wal(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.integrity() == "ok"


def test_a_new_store_is_born_in_wal_mode(tmp_path: Path) -> None:
    """The file linked into place already says WAL in its header (bytes 18 and 19 are 2): no
    roost opening it has to switch it, which takes an exclusive lock that twenty concurrent
    first commands contended for ("database is locked" under load)."""
    from roost.store.db import _create

    path = tmp_path / "r.db"
    _create(path)
    assert path.read_bytes()[18:20] == b"\x02\x02"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db"]  # no -wal or -shm left


def test_roundtrip_and_update(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    a = make("a", "s1").replace(args=("--x", "y z"), dangerous=True)
    store.insert(a)
    assert store.get("a") == a
    store.update(a.id, intent="running", launches=2, last_exit=3)
    got = store.require("a")
    assert (got.intent, got.launches, got.last_exit) == ("running", 2, 3)
    with pytest.raises(ValueError):
        store.update(a.id, name="b")
    with pytest.raises(RoostError, match="no agent named 'zz'"):
        store.require("zz")


def test_names_are_unique(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a"))
    with pytest.raises(NameTaken):
        store.insert(make("a").replace(id="other"))


def test_a_provider_session_id_belongs_to_one_agent_including_its_history(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a", "s1"))
    with pytest.raises(SessionIdTaken):
        store.insert(make("b", "s1"))
    store.insert(make("b"))
    store.set_provider_session_id("id-a", "s2")  # /clear: a moves on to s2, s1 stays its lineage
    assert store.session_history("id-a") == ["s1", "s2"]
    with pytest.raises(SessionIdTaken):
        store.set_provider_session_id("id-b", "s1")  # a's old id: still a's
    # the constraint lives in the database, not only in roost's code
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute("UPDATE agents SET provider_session_id = 's2' WHERE id = 'id-b'")
    assert store.require("b").provider_session_id is None


def test_a_fresh_conversation_keeps_the_old_ids_as_lineage(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a", "s1"))
    store.update("id-a", launches=3)
    store.new_conversation("id-a", "s2")
    a = store.require("a")
    assert (a.provider_session_id, a.launches) == ("s2", 0)
    assert store.session_history("id-a") == ["s1", "s2"]
    store.new_conversation("id-a", None)  # a provider that learns its id later
    a = store.require("a")
    assert (a.provider_session_id, a.launches) == (None, 0)
    assert store.session_history("id-a") == ["s1", "s2"]


def test_a_fresh_conversation_cannot_take_another_agents_session(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a", "s1"))
    store.insert(make("b", "s2"))
    store.update("id-b", launches=2)
    with pytest.raises(SessionIdTaken):
        store.new_conversation("id-b", "s1")
    b = store.require("b")  # rolled back whole: b keeps its conversation and its count
    assert (b.provider_session_id, b.launches) == ("s2", 2)


def test_names_by_id_lists_every_record(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    assert store.names_by_id() == {}
    store.insert(make("a"))
    store.insert(make("b"))
    assert store.names_by_id() == {"id-a": "a", "id-b": "b"}


def test_the_columns_are_the_fields_of_an_agent_record(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    columns = tuple(r[1] for r in store.conn.execute("PRAGMA table_info(agents)"))
    assert columns == AGENT_FIELDS == FIELDS


def test_insert_row_stores_field_values_as_a_record_reads_them(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    a = make("a").replace(args=("--x", "y z"), dangerous=True, conversation_seen=True)
    with store.write() as c:
        insert_row(c, {**{f: getattr(a, f) for f in AGENT_FIELDS}, "args": ["--x", "y z"]})
    assert store.require("a") == a
    assert store.session_history(a.id) == []  # lineage is the caller's to record


def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = digest(path)
    with pytest.raises(RoostError, match="newer than this roost"):
        Store.open(path)
    assert digest(path) == before


def test_a_corrupt_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    path.write_bytes(b"this is not a database at all" * 100)
    before = digest(path)
    with pytest.raises(RoostError, match="unreadable"):
        Store.open(path)
    assert digest(path) == before


def test_migration_is_safe_when_two_processes_open_a_new_store_at_once(tmp_path: Path) -> None:
    code = (
        "from roost.store.db import Store; from pathlib import Path; "
        f"Store.open(Path({str(tmp_path / 'r.db')!r}))"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(6)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 6
    assert Store.open(tmp_path / "r.db").integrity() == "ok"


WRITER = textwrap.dedent("""
    import sys, uuid
    from pathlib import Path
    from roost.core.model import Agent
    from roost.store.db import Store
    store = Store.open(Path(sys.argv[1]))
    tag = sys.argv[2]
    i = 0
    while True:
        name = f"{tag}-{i}"
        store.insert(Agent(id=str(uuid.uuid4()), name=name, provider="claude", cwd="/w",
                           home=name, provider_session_id=str(uuid.uuid4()), created_at="t"))
        with store.write() as c:  # a read-modify-write on a shared row
            c.execute("UPDATE agents SET launches = launches + 1 WHERE name = ?", (f"{tag}-0",))
        print(name, flush=True)  # printed only after COMMIT returned
        i += 1
""")


def test_six_writers_and_kill_9_lose_no_committed_row(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    Store.open(db).close()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    committed: set[str] = set()
    for round_ in range(4):
        writers = [
            subprocess.Popen(
                [sys.executable, str(script), str(db), f"w{round_}x{n}"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(6)
        ]
        # Killed once each has committed a few rows (their names read off stdout as they come):
        # the writers are then mid-way through their loop, most likely mid-transaction.
        streams = {w.pid: w.stdout for w in writers if w.stdout is not None}
        assert len(streams) == len(writers)
        early = {pid: [stream.readline() for _ in range(3)] for pid, stream in streams.items()}
        for w in writers:
            os.kill(w.pid, signal.SIGKILL)
        for w in writers:
            # The rest through the same text stream: readline buffered past its lines, and
            # communicate() would read the pipe beneath that buffer (a line cut in two).
            out = streams[w.pid].read()
            w.wait(timeout=30)
            committed.update("".join(early[w.pid]).split() + out.split())
            assert w.returncode == -signal.SIGKILL  # none died of "database is locked"
    store = Store.open(db)
    assert store.integrity() == "ok"
    names = {a.name for a in store.agents()}
    assert committed, "the writers committed nothing: the test proves nothing"
    assert committed <= names
    fk = store.conn.execute("PRAGMA foreign_key_check").fetchall()
    assert fk == []


def test_v1_store_migrates_its_agents_into_tiles_of_main(tmp_path: Path) -> None:
    from roost.core import workspace as ws
    from roost.store import schema
    from roost.store import workspace as wsdb

    path = tmp_path / "r.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for statement in schema.statements(schema.V1):
        conn.execute(statement)
    for name in ("old1", "old2"):
        conn.execute(
            "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
            "VALUES (?, ?, 'claude', '/w', ?, ?, 'running')",
            (f"id-{name}", name, name, f"2026-01-0{name[-1]}"),
        )
    conn.execute("PRAGMA user_version = 1")
    conn.execute("COMMIT")
    conn.close()
    store = Store.open(path)
    workspace = wsdb.load(store.conn)
    assert [t.name for t in workspace.tabs] == ["main"]
    assert ws.leaves(workspace.tabs[0].layout) == ["id-old1", "id-old2"]
    assert ws.live(workspace) == {"id-old1", "id-old2"} and ws.problems(workspace) == []
    assert store.require("old1").last_active_at == "2026-01-01"


# ---- issue 9: damaged, empty, full; files; session ids ------------------------------------
def test_an_empty_file_is_refused_not_made_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    path.touch()
    with pytest.raises(RoostError, match=r"is empty \(0 bytes\)") as refused:
        Store.open(path)
    assert refused.value.code == 3 and path.stat().st_size == 0


def test_a_new_store_is_owner_only_and_never_made_through_a_symlink(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        Store.open(tmp_path / "r.db").close()
    finally:
        os.umask(old)
    assert (tmp_path / "r.db").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["r.db"]  # no temporary file left
    link = tmp_path / "l.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(RoostError, match="symlink to nothing"):
        Store.open(link)
    assert not (tmp_path / "elsewhere.db").exists()


def test_an_older_roosts_world_readable_database_becomes_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    Store.open(path).close()
    path.chmod(0o644)
    Store.open(path).close()
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_zeroed_index_page_is_found_at_open(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = Store.open(path)
    store.insert(make("a"))
    store.close()
    conn = sqlite3.connect(path)
    root = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_agents_2'"
    ).fetchone()[0]  # UNIQUE (name)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as fh:
        fh.seek((root - 1) * size)
        fh.write(b"\0" * size)
    before = digest(path)
    with pytest.raises(RoostError, match=r"is damaged .*move it aside") as refused:
        Store.open(path)
    assert refused.value.code == 3 and "\n" not in str(refused.value)
    assert digest(path) == before


def test_a_full_database_is_one_line_and_keeps_nothing_of_the_transaction(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a"))
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")  # as a full disk would
    with pytest.raises(RoostError, match="is full") as refused, store.write() as c:
        for n in range(2000):
            insert_row(c, {f: getattr(make(f"n{n}"), f) for f in AGENT_FIELDS})
    assert refused.value.code == 3 and "aside" not in str(refused.value)
    assert [a.name for a in store.agents()] == ["a"]
    store.insert(make("b"))  # small enough: the store still works
    assert store.integrity() == "ok"


@pytest.mark.parametrize("bad", ["--dangerously-skip-permissions", "-c", "a b", "x\n"])
def test_a_session_id_that_could_read_as_a_flag_is_never_stored(tmp_path: Path, bad: str) -> None:
    store = Store.open(tmp_path / "r.db")
    store.insert(make("a", "s1"))
    for attempt in (
        lambda: store.set_provider_session_id("id-a", bad),
        lambda: store.new_conversation("id-a", bad),
        lambda: store.insert(make("b", bad)),
    ):
        with pytest.raises(SessionIdTaken):  # callers skip it as they skip a taken one
            attempt()
    assert store.require("a").provider_session_id == "s1"
    assert store.session_history("id-a") == ["s1"] and store.get("b") is None


def test_an_earlier_roosts_no_mcp_marker_becomes_the_agents_record(tmp_path: Path) -> None:
    from roost.store import schema

    path = tmp_path / "roost.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    schema.apply(conn, 0, 6)
    for agent_id in ("id-quiet", "id-loud"):
        conn.execute(
            "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent) "
            "VALUES (?, ?, 'claude', '/w', 'h', 't0', 'stopped')",
            (agent_id, agent_id[3:]),
        )
    conn.execute("COMMIT")
    conn.close()
    (tmp_path / "agents" / "id-quiet").mkdir(parents=True)
    (tmp_path / "agents" / "id-quiet" / "no-mcp").touch()
    store = Store.open(path)
    assert {a.name: a.mcp for a in store.agents()} == {"quiet": False, "loud": True}
