"""roost gives `roost mcp` to the claude agents it starts: `--mcp-config <a file of its own>`
and `permissions.allow: ["mcp__roost"]` in its per-process settings; off per agent
(`--no-mcp`) or in config.toml (`[mcp] enabled = false`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from roost.providers import hooks

from conftest import Env

pytestmark = pytest.mark.tmux


def server_env(world: Env, agent_id: str) -> dict[str, str]:
    """What `roost mcp` is told: who calls, and where this roost runs (its tmux socket and
    folder, whether it may start the service), since a CLI may start it with little else."""
    env = {"ROOST_AGENT_ID": agent_id, "ROOST_HOME": str(world.home)}
    runtime = ("ROOST_TMUX_SOCKET", "TMUX_TMPDIR", "ROOST_SERVICE_AUTOSTART")
    return env | {name: world.env[name] for name in runtime if name in world.env}


def wired(start: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    argv = start["argv"]
    settings = json.loads(Path(argv[argv.index("--settings") + 1]).read_text())
    if "--mcp-config" not in argv:
        return None, settings
    i = argv.index("--mcp-config")
    assert argv[i + 2] == "--settings"  # a flag ends --mcp-config's list of files
    return json.loads(Path(argv[i + 1]).read_text()), settings


def test_claude_gets_roost_mcp_by_default_and_on_wake(world: Env) -> None:
    world.roost("service", "stop")  # `roost mcp` of its own: the wiring without the service
    world.roost("spawn", "lead", "--detached", "--prompt", "hi")
    agent = world.ls()["lead"]
    config, settings = wired(world.last_start(1))
    assert config == {
        "mcpServers": {
            "roost": {
                "type": "stdio",
                "command": sys.executable,
                "args": ["-P", "-m", "roost", "mcp"],
                "env": server_env(world, agent["id"]),
            }
        }
    }
    assert settings["permissions"] == {"allow": ["mcp__roost"]}
    assert "hooks" in settings
    world.roost("kill", "lead")
    world.roost("wake", "lead")
    config, _ = wired(world.last_start(2))
    assert config is not None and world.last_start(2)["argv"][0] == "--resume"
    assert not (world.user_home / ".claude.json").exists()  # the user's files: untouched


def test_no_mcp_per_agent_survives_a_wake(world: Env) -> None:
    world.roost("spawn", "quiet", "--detached", "--no-mcp")
    config, settings = wired(world.last_start(1))
    assert config is None and "permissions" not in settings
    world.roost("kill", "quiet")
    world.roost("wake", "quiet")
    assert wired(world.last_start(2))[0] is None


def test_no_mcp_travels_with_an_export_into_a_fresh_home(world: Env) -> None:
    """--no-mcp is a fact of the agent's record: an import elsewhere keeps it (it was a marker
    file beside the store, which the export never carried)."""
    world.roost("spawn", "quiet", "--detached", "--no-mcp")
    world.roost("kill", "quiet")
    exported = json.loads(world.roost("export").stdout)
    assert [a["mcp"] for a in exported["agents"]] == [False]
    world.roost("rm", "quiet")
    doc = world.tmp / "ws.json"
    doc.write_text(json.dumps(exported))
    fresh = {"ROOST_HOME": str(world.tmp / "fresh-home")}
    world.roost("import", str(doc), env=fresh)
    world.roost("wake", "quiet", "--fresh", env=fresh)
    assert wired(world.last_start(2))[0] is None


def test_an_export_from_before_the_mcp_field_imports_with_roost_mcp(world: Env) -> None:
    world.roost("spawn", "lead", "--detached")
    world.roost("kill", "lead")
    exported = json.loads(world.roost("export").stdout)
    world.roost("rm", "lead")
    for agent in exported["agents"]:
        del agent["mcp"]
    doc = world.tmp / "ws.json"
    doc.write_text(json.dumps(exported))
    fresh = {"ROOST_HOME": str(world.tmp / "fresh-home")}
    world.roost("import", str(doc), env=fresh)
    assert [a["mcp"] for a in json.loads(world.roost("export", env=fresh).stdout)["agents"]] == [
        True
    ]


def test_config_switches_it_off_for_everyone(world: Env) -> None:
    world.roost("spawn", "first", "--detached")
    (world.home / "config.toml").write_text("[mcp]\nenabled = false\n")
    world.roost("spawn", "second", "--detached")
    assert wired(world.last_start(2))[0] is None


def codex_overrides(start: dict[str, Any]) -> dict[str, str]:
    """The `-c mcp_servers.roost.<key>=<toml>` overrides on a codex start's command line."""
    argv = start["argv"]
    prefix = "mcp_servers.roost."
    return dict(
        argv[i + 1][len(prefix) :].split("=", 1)
        for i, arg in enumerate(argv)
        if arg == "-c" and argv[i + 1].startswith(prefix)
    )


def test_codex_gets_roost_mcp_by_overrides_unless_switched_off(world: Env) -> None:
    import tomllib

    world.roost("service", "stop")  # `roost mcp` of its own: the wiring without the service
    work = world.tmp / "work"
    world.roost("spawn", "cx", "--provider", "codex", "--cwd", str(work), "--detached")
    agent = world.ls()["cx"]
    found = {
        k: tomllib.loads(f"v = {v}")["v"] for k, v in codex_overrides(world.last_start(1)).items()
    }
    assert found == {
        "command": sys.executable,
        "args": ["-P", "-m", "roost", "mcp"],
        "env": server_env(world, agent["id"]),
        "default_tools_approval_mode": "approve",
        "startup_timeout_sec": 30,
    }
    world.roost("kill", "cx")
    world.roost(
        "spawn", "quiet", "--provider", "codex", "--cwd", str(work), "--detached", "--no-mcp"
    )
    assert codex_overrides(world.last_start(2)) == {}


def test_gemini_gets_roost_mcp_in_a_system_settings_file_of_its_own(
    world: Env, private_home: Path
) -> None:
    world.roost("service", "stop")  # `roost mcp` of its own: the wiring without the service
    admin = world.tmp / "admin-settings.json"
    admin.write_text(
        json.dumps(
            {
                "general": {"enableAutoUpdate": False},
                "mcpServers": {"corp": {"command": "corp-mcp"}},
            }
        )
    )
    world.env["FAKE_AGENT_LOG_ENV"] = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
    world.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(admin)  # an administrator's settings
    work = world.tmp / "work"
    world.roost("spawn", "gm", "--provider", "gemini", "--cwd", str(work), "--detached")
    agent = world.ls()["gm"]
    path = Path(world.last_start(1)["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
    assert path.parent == world.home / "agents" / agent["id"]
    written = json.loads(path.read_text())
    assert written.pop("hooks") == hooks.gemini_hooks(str(world.home), agent["id"])
    assert written == {
        "general": {"enableAutoUpdate": False},  # the administrator's stay in force
        "mcpServers": {
            "corp": {"command": "corp-mcp"},
            "roost": {
                "command": sys.executable,
                "args": ["-P", "-m", "roost", "mcp"],
                "trust": True,
                "env": server_env(world, agent["id"]),
            },
        },
    }
    assert not (world.user_home / ".gemini" / "settings.json").exists()
    world.roost(
        "spawn", "quiet", "--provider", "gemini", "--cwd", str(work), "--detached", "--no-mcp"
    )
    quiet = json.loads(
        Path(world.last_start(2)["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text()
    )
    assert quiet["mcpServers"] == {"corp": {"command": "corp-mcp"}}  # roost's hooks, no roost mcp
    # started from inside gm (its shell): never gm's file, which names gm as the caller
    inside = {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(path)}
    world.roost(
        "spawn", "kid", "--provider", "gemini", "--cwd", str(work), "--detached", env=inside
    )
    kid = Path(world.last_start(3)["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
    written = json.loads(kid.read_text())
    assert written["mcpServers"]["roost"]["env"]["ROOST_AGENT_ID"] == world.ls()["kid"]["id"]
    assert written["general"] == {"enableAutoUpdate": False}
    world.roost(
        "spawn",
        "kid2",
        "--provider",
        "gemini",
        "--cwd",
        str(work),
        "--detached",
        "--no-mcp",
        env=inside,
    )
    kid2 = json.loads(
        Path(world.last_start(4)["env"]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text()
    )
    assert "roost" not in kid2["mcpServers"]
    assert kid2["hooks"] == hooks.gemini_hooks(str(world.home), world.ls()["kid2"]["id"])


def test_gemini_under_a_folder_others_may_write_gets_no_settings_file(world: Env) -> None:
    world.env["FAKE_AGENT_LOG_ENV"] = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
    world.roost(
        "spawn", "gm", "--provider", "gemini", "--cwd", str(world.tmp / "work"), "--detached"
    )  # the roost home is under /tmp: gemini would skip the file
    assert "GEMINI_CLI_SYSTEM_SETTINGS_PATH" not in world.last_start(1)["env"]
