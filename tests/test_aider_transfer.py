"""Aider's chat history lives in roost's home, so it travels with `roost export`: an import on a
fresh ROOST_HOME writes it back and the agent wakes into its conversation; an export without it
(an older roost's) is imported with a warning naming the agents that cannot resume and why; a
hostile file name in it is refused with nothing changed (issue 19, item 11). Fake aider (as
0.86.2) on a real tmux."""

from __future__ import annotations

import json

import psutil
import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

HISTORY = "aider.chat.history.md"


def test_aiders_history_travels_with_the_export_and_a_missing_one_is_named(world: Env) -> None:
    world.roost("spawn", "ai", "--provider", "aider", "--cwd", str(world.tmp / "work"))
    world.wait_status("ai", "idle")
    assert "confirmed by session file" in world.roost("send", "ai", "the door is blue").stdout
    agent_id = world.ls()["ai"]["id"]
    old = world.home / "agents" / agent_id / HISTORY
    exported = json.loads(world.roost("export").stdout)
    world.tmux("kill-server")

    world.env["ROOST_HOME"] = str(world.tmp / "fresh-home")  # another machine, say
    (world.tmp / "export.json").write_text(json.dumps(exported))
    imported = world.roost("import", str(world.tmp / "export.json"))
    assert "cannot resume" not in imported.stderr, imported.stderr
    new = world.home / "agents" / agent_id / HISTORY
    assert new.read_text() == old.read_text() and "#### the door is blue" in new.read_text()
    assert new.stat().st_mode & 0o777 == 0o600
    world.roost("wake", "ai")
    argv = psutil.Process(world.ls()["ai"]["pid"]).cmdline()
    assert argv[-3:] == ["--chat-history-file", str(new), "--restore-chat-history"]
    assert "Restored 0" not in world.wait_screen(world.pane_of("ai"), "Restored ")
    world.tmux("kill-server")

    # an export without the history (an older roost's): imported, with the reason it is lost
    world.env["ROOST_HOME"] = str(world.tmp / "third-home")
    del exported["agent_files"]
    (world.tmp / "old.json").write_text(json.dumps(exported))
    warned = world.roost("import", str(world.tmp / "old.json"))
    assert (
        "warning: ai cannot resume its conversation: its aider chat history did not come "
        "with the export" in warned.stderr
    )


def test_a_hostile_agent_file_name_is_refused_and_nothing_changes(world: Env) -> None:
    world.roost("spawn", "ai", "--provider", "aider", "--cwd", str(world.tmp / "work"))
    world.wait_status("ai", "idle")
    exported = json.loads(world.roost("export").stdout)
    agent_id = exported["agents"][0]["id"]
    world.tmux("kill-server")
    world.env["ROOST_HOME"] = str(world.tmp / "fresh-home")
    exported["agent_files"] = {agent_id: {"../../escape.md": "x"}}
    (world.tmp / "bad.json").write_text(json.dumps(exported))
    refused = world.roost("import", str(world.tmp / "bad.json"), check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "is not a file roost keeps" in refused.stderr
    assert world.ls() == {} and not (world.tmp / "escape.md").exists()
    assert not (world.home / "agents" / agent_id).exists()
