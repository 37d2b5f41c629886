"""Issue 19, item 12: with no agent CLI installed, doctor's verdict is what the README's first
command then does (it fails, exit 6), and it shows the `command` provider as the way to try."""

from __future__ import annotations

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux

PROVIDERS = ("claude", "codex", "gemini", "aider")


def _missing(world: Env, *names: str) -> dict[str, str]:
    return {f"ROOST_{n.upper()}_BIN": str(world.tmp / f"no-{n}") for n in names}


def test_no_agent_cli_is_a_problem_and_says_how_to_try_roost(world: Env) -> None:
    none = _missing(world, *PROVIDERS)
    doctor = world.roost("doctor", env=none, check=False)
    spawn = world.roost("spawn", "first", "--cwd", str(world.tmp / "work"), env=none, check=False)
    assert spawn.returncode == 6 and doctor.returncode != 0, doctor.stdout  # they agree
    assert "all good" not in doctor.stdout
    lines = doctor.stdout.splitlines()
    bad = next(i for i, ln in enumerate(lines) if ln.startswith("BAD  claude: not installed"))
    assert "no agent CLI is installed" in lines[bad], lines[bad]
    fix = lines[bad + 1]
    assert "--provider command" in fix and "@anthropic-ai/claude-code" in fix, fix
    tried = world.roost(
        "spawn",
        "try",
        "--provider",
        "command",
        "--cwd",
        str(world.tmp / "work"),
        "--",
        "sh",
        env=none,
    )
    assert "spawned try (command" in tried.stdout


def test_the_default_cli_missing_is_a_warning_naming_the_installed_ones(world: Env) -> None:
    doctor = world.roost("doctor", env=_missing(world, "claude", "gemini"))
    assert doctor.returncode == 0
    line = next(ln for ln in doctor.stdout.splitlines() if ln.startswith("WARN claude:"))
    assert "the default provider" in line and "--provider codex" in doctor.stdout, doctor.stdout
    assert "ok   gemini: not installed" in doctor.stdout  # not the default: as before
