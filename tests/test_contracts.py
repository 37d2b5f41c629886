"""The architecture's promises hold, and each check that keeps them really binds: a deliberately
wrong import or statement, planted in a copy of the source, breaks it (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "roost"
SQL_WORDS = (
    "SELECT ",
    "INSERT ",
    "UPDATE ",
    "DELETE ",
    "PRAGMA ",
    "CREATE ",
    "BEGIN",
    "REPLACE INTO",
    "ALTER ",
    "DROP ",
    "WITH ",
)


def rooms() -> list[str]:
    """The rooms (one feature's modules side by side: roost/limits/, ...), as the contract on
    their own layering names them in pyproject.toml."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (rooms,) = [c["containers"] for c in contracts["contracts"] if "containers" in c]
    return [room.removeprefix("roost.") for room in rooms]


def sql_outside_the_store(package: Path) -> list[str]:
    """Every SQL statement or `.execute*` call outside store/ (it owns them all, the rooms' rows
    included: store/<room>.py)."""
    found = []
    owners = [("store",)]
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if any(parts[: len(owner)] == owner for owner in owners):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(package)}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.lstrip().startswith(SQL_WORDS)
            ):
                found.append(f"{where} {node.value.strip()[:40]!r}")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany", "executescript")
            ):
                found.append(f"{where} .{node.func.attr}()")
    return found


def test_every_sql_statement_lives_in_the_store() -> None:
    assert sql_outside_the_store(SRC) == []


def planted(tmp_path: Path, module: str, code: str) -> Path:
    """A copy of the source under tmp_path/roost, `code` added at the end of `module`."""
    copy = tmp_path / "roost"
    if not copy.exists():
        shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / module).open("a") as fh:
        fh.write(f"\n\n{code}\n")
    return copy


def test_the_sql_check_finds_a_statement_planted_outside_the_store(tmp_path: Path) -> None:
    copy = planted(tmp_path, "ops/notify.py", 'def planted(c):\n    return c.execute("SELECT 1")')
    found = sql_outside_the_store(copy)
    assert len(found) == 2 and all(f.startswith("ops/notify.py:") for f in found)


def test_the_sql_check_finds_a_statement_planted_in_a_rooms_operations(tmp_path: Path) -> None:
    assert "limits" in rooms()  # a room's rows are the store's: its operations hold no SQL
    code = 'def planted(c):\n    return c.execute("SELECT 1")'
    copy = planted(tmp_path, "limits/operations.py", code)
    found = sql_outside_the_store(copy)
    assert len(found) == 2 and all(f.startswith("limits/operations.py:") for f in found)


def lint_imports(source_root: Path) -> str:
    """lint-imports over the roost package found under `source_root`, with pyproject's
    contracts; its report."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "lint-imports"),
            str(ROOT / "pyproject.toml"),
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=source_root,
        check=False,
    )
    return proc.stdout + proc.stderr


# A planted import, where it goes, and the contract it must break.
PLANTED = [
    ("system/locks.py", "from roost.store import db", "Layers"),
    ("store/failure.py", "from roost.tmux import client", "Layers"),
    ("tmux/view.py", "from roost.providers import traits", "Layers"),
    ("mcp/__init__.py", "from roost.tui import app", "Layers"),
    ("ops/send.py", "import sqlite3", "SQLite belongs to the store"),
    ("cli/fast.py", "import sqlite3", "SQLite belongs to the store"),
    ("core/names.py", "import os", "The core is pure"),
    ("core/questions.py", "import pathlib", "The core is pure"),
    ("alerts/rules.py", "import time", "The core is pure"),
    ("core/settings.py", "import threading", "The core is pure"),
    ("launch.py", "import roost.core.names", "The pane's launcher"),
    # the service's room is above everything but the CLI: no operation or web page uses it
    ("budgets/operations.py", "from roost.service import main", "Layers"),
    ("web/pages.py", "from roost.service import components", "Layers"),
    ("ops/doctor.py", "import subprocess", "Processes start in few places"),
    ("tui/app.py", "import pty", "Processes start in few places"),
    # an import only type checkers see is a dependency all the same
    ("store/held.py", "if TYPE_CHECKING:\n    from roost.ops import send", "Layers"),
    # the status pipeline's reactions are the composition root's (ops/root.py), even lazily
    ("ops/observe.py", "def planted():\n    from roost.ops import notify", "Observe imports none"),
    ("ops/context.py", "def planted():\n    from roost.ops import root", "Observe imports none"),
    # inside a room, its layers: rules import no operations, operations no commands
    ("limits/operations.py", "from roost.limits import commands", "Each room's own layering"),
    (
        "usage/rules.py",
        "def planted():\n    from roost.usage import operations",
        "Each room's own layering",
    ),
    ("worktrees/rules.py", "from roost.worktrees import commands", "Each room's own layering"),
    ("alerts/operations.py", "from roost.alerts import commands", "Each room's own layering"),
    # a room's rows are the store's, below ops
    ("store/hosts.py", "from roost.hosts import operations", "Layers"),
    # a room's modules keep the global contracts of the layer their name puts them in
    ("limits/rules.py", "import sqlite3", "The core is pure"),
    ("usage/operations.py", "import sqlite3", "SQLite belongs to the store"),
    ("budgets/operations.py", "import subprocess", "Processes start in few places"),
    ("store/limits.py", "from roost.ops import context", "Layers"),
    ("alerts/commands.py", "import sqlite3", "SQLite belongs to the store"),
    ("hosts/operations.py", "import subprocess", "Processes start in few places"),
    # children on a host: their rules pure and below their operations, their operations below
    # the commands and without SQL (their rows are store/hostchildren.py)
    ("hosts/childrules.py", "import sqlite3", "The core is pure"),
    ("hosts/childrules.py", "from roost.hosts import children", "Each room's own layering"),
    ("hosts/children.py", "from roost.hosts import commands", "Each room's own layering"),
    ("hosts/children.py", "import sqlite3", "SQLite belongs to the store"),
    ("store/hostchildren.py", "from roost.hosts import children", "Layers"),
]


def dotted(module: str) -> str:
    return "roost." + module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def test_the_import_contracts_hold() -> None:
    report = lint_imports(ROOT / "src")
    verdicts = [ln for ln in report.splitlines() if ln.endswith((" KEPT", " BROKEN"))]
    assert len(verdicts) == 7 and all(v.endswith(" KEPT") for v in verdicts), report


def test_each_planted_import_breaks_its_contract(tmp_path: Path) -> None:
    """All planted in one copy (one lint-imports run): each contract's report names the
    planted importer under it."""
    for module, line, _ in PLANTED:
        planted(tmp_path, module, f"{line}  # planted by the test")
    report = lint_imports(tmp_path)
    sections = report.split("Broken contracts", 1)[-1]
    for module, _, contract in PLANTED:
        start = sections.find(contract)
        assert start >= 0, f"{contract} not broken:\n{report}"
        end = min(
            (
                i
                for i in (sections.find(c, start + 1) for _, _, c in PLANTED if c != contract)
                if i > start
            ),
            default=len(sections),
        )
        assert dotted(module) in sections[start:end], f"{module} not named under {contract}"


# What starts a process without an import naming it (the contract above cannot see it): the
# os module's exec, fork and spawn families. Allowed where the import contract allows
# subprocess, and in the launcher.
STARTS = ("exec", "fork", "spawn", "posix_spawn", "system", "popen")
STARTING_ROOMS = ("tmux", "system", "launch.py", "web/term.py")


def nodes(package: Path, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, ast.AST]]:
    """Every syntax node of the package's modules, with the module's path in it."""
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if not (skip and rel.startswith(skip)):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                yield rel, node


def process_starts_outside_their_rooms(package: Path) -> list[str]:
    return [
        f"{rel}:{node.lineno} os.{node.attr}"
        for rel, node in nodes(package, skip=STARTING_ROOMS)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
        and node.attr.startswith(STARTS)
    ]


def test_processes_start_only_in_their_rooms() -> None:
    assert process_starts_outside_their_rooms(SRC) == []


def test_the_process_check_finds_an_exec_planted_in_the_cli(tmp_path: Path) -> None:
    copy = planted(tmp_path, "cli/main.py", "def planted(argv):\n    os.execvpe(argv[0], argv, {})")
    (found,) = process_starts_outside_their_rooms(copy)
    assert found.startswith("cli/main.py:") and found.endswith("os.execvpe")


# Import by string hides a dependency from the import contracts (ops/service.py once loaded
# roost.mcp and roost.web that way, from a layer below them): only the service's room, the
# composition root, could need it, and it imports its components by name.
def imports_by_string(package: Path) -> list[str]:
    found = []
    for rel, node in nodes(package):
        if isinstance(node, ast.Call):
            func = node.func
            name = getattr(func, "attr", None) or getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                found.append(f"{rel}:{node.lineno} {name}")
    return found


def test_nothing_is_imported_by_string() -> None:
    assert imports_by_string(SRC) == []


def test_the_string_import_check_finds_one_planted_in_ops(tmp_path: Path) -> None:
    code = 'def planted():\n    return importlib.import_module("roost.web")'
    copy = planted(tmp_path, "ops/service.py", code)
    (found,) = imports_by_string(copy)
    assert found.startswith("ops/service.py:") and found.endswith("import_module")
