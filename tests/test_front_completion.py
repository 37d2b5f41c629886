"""Issue 19, item 13: shell completion for bash, zsh and fish (Click's), with agent and tab
names from the store; `roost ls` keeps its fast path."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Env

pytestmark = pytest.mark.tmux


def _complete(world: Env, shell: str, words: str, cword: int) -> str:
    """What the `roost` command answers the completion script of `shell` for `words`."""
    env = {"_ROOST_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    return world.roost(env=env).stdout


def test_agent_and_tab_names_complete_in_bash_zsh_and_fish(world: Env) -> None:
    for name in ("api-fix", "api-docs", "web"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"), "--detached")
    world.roost("tab", "new", "review")
    bash = _complete(world, "bash", "roost attach api", 2).split()
    assert bash == ["plain,api-docs", "plain,api-fix"], bash
    zsh = _complete(world, "zsh", "roost wake w", 2)
    assert "web" in zsh.split("\n"), zsh
    tabs = _complete(world, "bash", "roost place web --tab rev", 4).split()
    assert tabs == ["plain,review"], tabs
    fish = world.roost(
        env={"_ROOST_COMPLETE": "fish_complete", "COMP_WORDS": "roost kill a", "COMP_CWORD": "a"}
    ).stdout
    assert "plain,api-fix" in fish and "web" not in fish, fish
    for shell in ("bash", "zsh", "fish"):
        script = world.roost("completion", shell).stdout
        assert "_ROOST_COMPLETE" in script and f"{shell}_complete" in script, script


def test_the_bash_script_completes_in_a_real_bash(world: Env) -> None:
    world.roost("spawn", "solo", "--cwd", str(world.tmp / "work"), "--detached")
    if shutil.which("bash") is None:
        pytest.fail("bash is needed for this test")
    script = world.roost("completion", "bash").stdout
    probe = (
        script + "\nCOMP_WORDS=(roost wake so); COMP_CWORD=2; _roost_completion roost; "
        'echo "${COMPREPLY[@]}"\n'
    )
    bindir = str(Path(sys.executable).parent)  # the venv's `roost` entry point
    env = {**world.env, "PATH": f"{bindir}:{world.env['PATH']}"}
    out = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, env=env, timeout=60, cwd=world.tmp
    ).stdout
    assert out.split() == ["solo"], out
