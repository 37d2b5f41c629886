"""The world is injected: ops/ and store/ read time, sleep and touch processes only through the
App (its `clock` and `procs`, the store's connection's clock), never directly. The check binds:
a direct call planted in a copy of the source breaks it (as tests/test_contracts.py's do)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "roost"
ROOMS = ("ops", "store")
# What only the world may do: a module's attribute, or a name imported from it.
FORBIDDEN = {
    "time": {"time", "time_ns", "sleep", "monotonic", "monotonic_ns", "perf_counter"},
    "datetime": {"now", "utcnow", "today"},
    "date": {"today"},
    "os": {"kill", "killpg", "waitpid"},
    "procs": {"snapshot", "kill_tree", "tagged", "runs_inside", "run_outside", "open_files"},
}
FORBIDDEN_MODULES = {"psutil"}
# Where the real world is allowed: the module that builds the default one, and doctor, which
# looks at this machine's processes without an App (its report is about the real machine).
ALLOWED = {"ops/context.py": "the default world", "ops/doctor.py": "procs.tagged"}


def _bare(name: str) -> str:
    return name.rsplit(".", 1)[-1]  # roost.system.procs -> procs


def reached_around_the_world(package: Path) -> list[str]:
    """Every direct use of time, sleeping or the process table in ops/ and store/."""
    found = []
    for room in ROOMS:
        for path in sorted((package / room).rglob("*.py")):
            where = path.relative_to(package).as_posix()
            if where in ALLOWED:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                for use in _uses(node):
                    found.append(f"{where}:{getattr(node, 'lineno', 0)} {use}")
    return found


def _uses(node: ast.AST) -> list[str]:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.attr in FORBIDDEN.get(node.value.id, ())
    ):
        return [f"{node.value.id}.{node.attr}"]
    if isinstance(node, ast.ImportFrom) and node.module:
        module = _bare(node.module)
        if module in FORBIDDEN_MODULES:
            return [f"from {node.module} import"]
        return [
            f"from {node.module} import {a.name}"
            for a in node.names
            if a.name in FORBIDDEN.get(module, ())
        ]
    if isinstance(node, ast.Import):
        return [f"import {a.name}" for a in node.names if a.name in FORBIDDEN_MODULES]
    return []


def test_ops_and_store_reach_time_and_processes_only_through_the_app() -> None:
    assert reached_around_the_world(SRC) == []


PLANTED = {
    "ops/lifecycle.py": "def planted_sleep():\n    time.sleep(1)\n",
    "ops/restore.py": "def planted_kill():\n    procs.kill_tree([])\n",
    "ops/send.py": "from time import monotonic\n",
    "store/events.py": "def planted_now():\n    return datetime.now()\n",
    "store/status.py": "import psutil\n",
}


def test_each_planted_direct_use_is_found(tmp_path: Path) -> None:
    copy = tmp_path / "roost"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for where, code in PLANTED.items():
        with (copy / where).open("a") as fh:
            fh.write(f"\n\n{code}")
    found = reached_around_the_world(copy)
    assert {line.split(":", 1)[0] for line in found} == set(PLANTED), found
    assert len(found) == len(PLANTED), found
