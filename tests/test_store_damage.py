"""A damaged, empty, read-only or full database (issue 9, item 5): refused with one clear line
before anything is written, never silently used and never turned into a new store; the advice
to move the file aside only when it really is damaged."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_bad_input import assert_refused

from conftest import Env

pytestmark = pytest.mark.tmux


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def zero_index_page(db: Path, column: str) -> None:
    """Overwrite the root page of the agents index on `column` with zeros, as a disk would."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = conn.execute(
        "SELECT name, rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'agents'"
    ).fetchall()
    root = next(
        page
        for name, page in roots
        if [r[2] for r in conn.execute(f"PRAGMA index_info({name})")] == [column]
    )
    conn.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\0" * page_size)


@pytest.fixture
def populated(world: Env) -> Env:
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    return world


def test_a_zeroed_index_page_is_refused_before_spawn_writes(populated: Env) -> None:
    db = populated.home / "roost.db"
    zero_index_page(db, "name")
    before = digest(db)
    windows = sorted(p["window"] for p in populated.panes())
    proc = populated.roost("spawn", "keep", "--cwd", str(populated.tmp / "work"), check=False)
    assert proc.returncode == 3, proc.stderr
    [line] = proc.stderr.splitlines()  # one line, no traceback
    assert line.startswith("roost: the roost database") and "damaged" in line, line
    assert "move it aside" in line  # here it really is damaged
    assert digest(db) == before
    assert sorted(p["window"] for p in populated.panes()) == windows
    for command in (
        ["wake", "keep"],
        ["kill", "keep"],
        ["export"],
        ["events"],
        ["ls"],
        ["ls", "--json"],
    ):
        assert_refused(populated, *command, code=3, says="damaged")
    assert digest(db) == before


def test_an_empty_database_file_is_refused_not_made_a_new_store(world: Env) -> None:
    world.home.mkdir(mode=0o700)
    db = world.home / "roost.db"
    db.touch(mode=0o600)
    for command in (
        ["spawn", "x", "--cwd", str(world.tmp / "work")],
        ["ls"],
        ["ls", "--json"],
        ["export"],
        ["wake", "x"],
    ):
        assert_refused(world, *command, code=3, says="is empty (0 bytes)")
    assert db.stat().st_size == 0
    assert world.panes() == []


def test_a_missing_database_becomes_a_new_store(world: Env) -> None:
    world.roost("ls")
    db = world.home / "roost.db"
    assert db.stat().st_size > 0
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] > 0


def test_a_database_of_something_else_is_not_taken_over(world: Env) -> None:
    world.home.mkdir(mode=0o700)
    db = world.home / "roost.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    conn.close()
    before = digest(db)
    assert_refused(
        world,
        "spawn",
        "x",
        "--cwd",
        str(world.tmp / "work"),
        code=3,
        says="is not a roost database",
    )
    assert digest(db) == before


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make `path` (a file or a folder) read-only for roost: by its mode for a normal user;
    root ignores modes, so for root a read-only bind mount of it over itself."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(path)], check=True)


def can_mount() -> bool:
    if os.geteuid() != 0:
        return True  # modes will do
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(["mount", "--bind", folder, folder], capture_output=True)
        if probe.returncode == 0:
            subprocess.run(["umount", folder], check=True)
    return probe.returncode == 0


@pytest.mark.skipif(not can_mount(), reason="root without mount: modes do not bind root")
@pytest.mark.parametrize("what", ["db-file", "roost-home"])
def test_a_read_only_database_is_one_line_without_the_damage_advice(
    populated: Env, what: str
) -> None:
    db = populated.home / "roost.db"
    before = digest(db)
    with read_only(db if what == "db-file" else populated.home):
        for command in (
            ["spawn", "new", "--cwd", str(populated.tmp / "work")],
            ["kill", "keep"],
            ["policy", "keep", "on-failure"],
        ):
            proc = populated.roost(*command, check=False)
            assert proc.returncode == 3, proc.stderr
            [line] = proc.stderr.splitlines()
            assert line.startswith("roost: ") and "read-only" in line.lower(), line
            assert "aside" not in line and "damaged" not in line, line
    assert digest(db) == before
    assert any(p["window"] == "keep" and p["dead"] == "0" for p in populated.panes())


@contextmanager
def full_home(world: Env) -> Iterator[Path]:
    """The roost home on a 1 MiB tmpfs holding agent `keep` (running), then filled to the
    last byte; yields the filler file (unlink it to free the space)."""
    world.home.mkdir(mode=0o700)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(world.home)], check=True
    )
    try:
        world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
        filler = world.home / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # full
        finally:
            os.close(fd)
        yield filler
    finally:
        subprocess.run(
            ["tmux", "-L", world.socket, "kill-server"], capture_output=True, env=world.env
        )
        subprocess.run(["umount", "-l", str(world.home)], check=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="a full filesystem is a small tmpfs: needs root")
def test_a_full_disk_is_one_line_without_the_damage_advice(world: Env) -> None:
    with full_home(world) as filler:
        proc = world.roost("policy", "keep", "on-failure", check=False)
        assert proc.returncode == 3, proc.stderr
        [line] = proc.stderr.splitlines()
        assert "full" in line and "aside" not in line and "damaged" not in line, line
        filler.unlink()
        assert world.roost("policy", "keep", "on-failure").returncode == 0
        conn = sqlite3.connect(world.home / "roost.db")
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()


@pytest.mark.parametrize("details", [False, True])
def test_the_fast_path_checks_every_table_the_listing_reads(details: bool) -> None:
    """`roost ls`'s fast path checks only the tables its SELECT reads for damage (a reader that
    writes nothing): SQLite's own authorizer names each table the statement reads, so a table
    added to the listing's SQL and not to LISTED_TABLES fails here."""
    from roost.store import agents, schema, status

    conn = sqlite3.connect(":memory:")
    schema.apply(conn, 0)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    read: set[str] = set()

    def note(action: int, table: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_READ and table and not table.startswith("sqlite_"):
            read.add(table)
        return sqlite3.SQLITE_OK

    conn.set_authorizer(note)
    status.records(conn, details)
    assert sorted(read & tables - set(agents.LISTED_TABLES)) == []
    assert "agents" in read and ("session_history" in read) == details
