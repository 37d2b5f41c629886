"""A hostile `roost import` through the real CLI (issue 9, item 4): one line naming the field,
exit 2, nothing changed, never a traceback; and an id that is not roost's can never become a
path, even one already in the database."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_bad_input import assert_refused

from conftest import Env

pytestmark = pytest.mark.tmux


def one_agent(**change: Any) -> dict[str, Any]:
    """A valid export of one parked claude agent, with `change` applied to its record."""
    agent = {
        "id": str(uuid.uuid4()),
        "name": "guest",
        "provider": "claude",
        "cwd": "/srv/w",
        "home": "guest",
        "args": [],
        "dangerous": False,
        "provider_session_id": str(uuid.uuid4()),
        "created_at": "2026-01-01T00:00:00+00:00",
        "intent": "stopped",
        "started_at": None,
        "launches": 0,
        "last_exit": None,
        "placement": "detached",
        "tab_id": None,
        "buried_sibling": None,
        "buried_side": None,
        "buried_direction": None,
        "buried_ratio": None,
        "linked_parent": None,
        "orchestration_parent": None,
        "orchestration_root": None,
        "last_active_at": None,
        "last_error": None,
        "status": None,
        "status_source": None,
        "status_since": None,
        "restart_policy": "never",
        "conversation_seen": False,
        "transcript_path": None,
        "hook_offset": 0,
    }
    agent.update(change)
    agent["session_history"] = (
        [agent["provider_session_id"]] if isinstance(agent["provider_session_id"], str) else []
    )
    return {
        "format": "roost-workspace",
        "version": 1,
        "settings": {},
        "tabs": [],
        "agents": [agent],
        "pins": [],
    }


@pytest.fixture
def populated(world: Env) -> Env:
    world.roost("spawn", "keep", "--cwd", str(world.tmp / "work"))
    return world


def write(world: Env, data: object) -> str:
    path = world.tmp / "import.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        pytest.param(
            {"id": "../../victim"}, "agents[0].id: '../../victim' is not a roost id", id="id-path"
        ),
        pytest.param(
            {"provider_session_id": "--dangerously-skip-permissions"},
            "agents[0].provider_session_id: '--dangerously-skip-permissions' starts with '-'",
            id="session-flag",
        ),
        pytest.param(
            {"restart_policy": "always"},
            "agents[0].restart_policy: must be one of",
            id="restart-policy",
        ),
        pytest.param({"cwd": "w#(touch /tmp/PWNED)"}, "agents[0].cwd:", id="cwd-relative"),
        pytest.param(
            {"launches": "3"}, "agents[0].launches: must be a whole number", id="launches"
        ),
    ],
)
def test_a_hostile_import_is_one_line_naming_the_field(
    populated: Env, change: dict[str, Any], says: str
) -> None:
    path = write(populated, one_agent(**change))
    assert_refused(
        populated, "import", path, code=2, says=f"import refused, nothing changed: {says}"
    )
    assert set(populated.ls()) == {"keep"}


def test_settings_must_have_their_exact_values(populated: Env) -> None:
    data = one_agent()
    data["settings"] = {"dangerous": 1}
    assert_refused(
        populated,
        "import",
        write(populated, data),
        code=2,
        says='settings.dangerous: must be "0" or "1"',
    )
    conn = sqlite3.connect(populated.home / "roost.db")
    assert conn.execute("SELECT value FROM settings WHERE key = 'dangerous'").fetchall() == []


def test_deeply_nested_json_is_one_line(populated: Env) -> None:
    assert_refused(
        populated,
        "import",
        write(populated, "[" * 200_000 + "]" * 200_000),
        code=2,
        says="import refused, nothing changed: ",
    )


def test_a_stored_id_that_is_not_roosts_never_becomes_a_path(populated: Env) -> None:
    """Defence in depth: a database that holds such an id (written before import checked ids)
    makes `rm` refuse, and the folder it would have named survives."""
    victim = populated.tmp / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep me\n")
    conn = sqlite3.connect(populated.home / "roost.db")
    conn.execute(
        "INSERT INTO agents (id, name, provider, cwd, home, created_at, intent, "
        "placement) VALUES ('../../victim', 'evil', 'command', '/w', 'evil', "
        "'2026-01-01T00:00:00+00:00', 'stopped', 'detached')"
    )
    conn.commit()
    conn.close()
    assert (populated.home / "agents" / "../../victim").resolve() == victim.resolve()
    proc = populated.roost("rm", "evil", check=False)
    assert proc.returncode != 0
    [line] = proc.stderr.splitlines()
    assert line.startswith("roost: ") and "not a roost id" in line, line
    assert (victim / "precious").read_text() == "keep me\n"


def test_a_valid_import_still_works(populated: Env) -> None:
    proc = populated.roost("import", write(populated, one_agent()))
    assert "imported 1 agents" in proc.stdout
    assert set(populated.ls()) == {"keep", "guest"}
    assert Path(populated.home / "roost.db").exists()
