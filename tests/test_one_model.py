"""Issue 20, "one model": `roost ls`'s fast path (cli/fast.py, no Click) and the full CLI read
the same store through the same record type (core/model.py's Agent) and print the same thing.
Many agents in varied states on a real tmux: a drift between the two paths shows here."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

FAST = (
    "import sys\nfrom roost.cli import fast\n"
    "code = fast.fast(as_json=sys.argv[1] == 'json')\nsys.exit(99 if code is None else code)"
)
FULL = "import sys\nfrom roost.cli.main import main\nmain(sys.argv[1:])"
HANDED_OVER = 99


def run(world: Env, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=world.env,
        cwd=world.tmp,
        timeout=60,
    )


def both(world: Env, as_json: bool) -> tuple[str, str]:
    """The full CLI's listing (which records what changed), then the fast path's, polled until
    the fast path answers itself (it hands over while a status is still to be recorded) and the
    two were taken with nothing changing in between."""
    deadline = time.monotonic() + 30
    while True:
        full = run(world, FULL, "ls", *(["--json"] if as_json else []))
        assert full.returncode == 0, full.stderr
        fast = run(world, FAST, "json" if as_json else "table")
        if fast.returncode == 0 and fast.stdout == full.stdout:
            return full.stdout, fast.stdout
        assert fast.returncode in (0, HANDED_OVER), fast.stderr
        if time.monotonic() > deadline:
            return full.stdout, fast.stdout
        time.sleep(0.2)


def test_the_fast_path_and_the_full_cli_list_the_same_agents_alike(world: Env) -> None:
    work = str(world.tmp / "work")

    def spawn(name: str, *args: str) -> None:
        world.roost("spawn", name, "--cwd", work, *args)

    sleeper = ["--provider", "command", "--", "sleep", "1000"]
    spawn("lead", "--tab", "ui", *sleeper)  # a tile in another tab, pinned below
    spawn("cc")  # the fake claude: statuses from its hooks
    spawn("kid", "--orchestrated-by", "lead", "--detached", *sleeper)  # parked, orchestrated
    spawn("linked", "--parent", "lead", "--no-mcp", "--provider", "command", "--", "sh", "-c",
          "sleep 1000 # two words")  # fmt: skip
    failed = ["crash", "--cwd", work, "--provider", "command", "--", "sh", "-c", "exit 3"]
    assert world.roost("spawn", *failed, check=False).returncode == 1  # its start failed
    spawn("gone", *sleeper)
    spawn("deep", *sleeper)
    world.roost("pin", "lead")
    world.roost("kill", "gone")  # stopped by the user
    world.roost("bury", "deep")  # buried
    world.roost("hibernate", "kid")

    full, fast = both(world, as_json=True)
    listed = {a["name"]: a for a in json.loads(full)}
    assert {n: (a["state"], a["placement"], a["tab"]) for n, a in listed.items()} == {
        "lead": ("running", "tile", "ui"),
        "cc": ("running", "tile", "main"),
        "kid": ("hibernated", "detached", "main"),
        "linked": ("running", "tile", "main"),
        "crash": ("failed", "tile", "main"),
        "gone": ("stopped", "tile", "main"),
        "deep": ("hibernated", "buried", "main"),
    }
    assert listed["kid"]["orchestration_parent"] == "lead" and listed["lead"]["pinned"]
    assert listed["linked"]["args"] == ["sh", "-c", "sleep 1000 # two words"]
    assert listed["crash"]["last_error"] and listed["cc"]["session_history"]
    assert fast == full
    table_full, table_fast = both(world, as_json=False)
    assert table_fast == table_full and table_full.splitlines()[1].startswith("* lead")
