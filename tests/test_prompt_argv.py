"""A first prompt is data (issue 18, items 1 and 12): on every provider's command line it can only
be read as the prompt, never as an option or a subcommand; one the command line cannot carry is
typed in; one no CLI can take is refused before anything is recorded. Pure and on the fake tmux;
tests/test_real_claude_argv.py proves it on the real Claude Code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_app import fake_app, fake_tmux, manual_clock

from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.prompts import MAX_PROMPT_BYTES, prompt_problem
from roost.ops import lifecycle
from roost.ops.context import App
from roost.providers.base import get

SID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
HOSTILE = {
    "mcp config": '--mcp-config={"mcpServers":{"pwn":{"command":"/bin/sh"}}}',
    "skip permissions": "--dangerously-skip-permissions",
    "codex bypass": "--dangerously-bypass-approvals-and-sandbox",
    "yolo": "--yolo",
    "a dash list item": "- fix the login bug",
    "a lone dash": "-",
    "end of options": "--",
    "subcommand with words": "mcp add pwn -- /bin/sh",
    "lines": "-i\n--yolo",
}


def agent(provider: str) -> Agent:
    return Agent(
        id="rid",
        name="a",
        provider=provider,
        cwd="/src/app",
        home="a",
        provider_session_id=SID,
        args=("--model", "m"),
    )


def prompt_part(provider: str, prompt: str, home: Path) -> list[str]:
    """What follows the agent's own arguments on its start command line."""
    argv = get(provider).start_argv(agent(provider), "/cli", prompt, home)
    return argv[argv.index("m") + 1 :]


@pytest.mark.parametrize("prompt", HOSTILE.values(), ids=HOSTILE.keys())
def test_claude_and_codex_read_the_prompt_after_the_end_of_their_options(
    prompt: str, tmp_path: Path
) -> None:
    for provider in ("claude", "codex"):
        expected = (
            ["--", prompt] if provider == "codex" or " " in prompt or "\n" in prompt else []
        )  # claude: a one-word prompt is typed in (below)
        assert prompt_part(provider, prompt, tmp_path) == expected, provider


@pytest.mark.parametrize("prompt", HOSTILE.values(), ids=HOSTILE.keys())
def test_gemini_gets_the_prompt_as_the_value_of_its_prompt_option(
    prompt: str, tmp_path: Path
) -> None:
    assert prompt_part("gemini", prompt, tmp_path) == [f"--prompt-interactive={prompt}"]


@pytest.mark.parametrize("word", ["update", "mcp", "doctor", "install", "--version", "-p"])
def test_a_one_word_prompt_is_typed_into_claude_not_put_where_a_subcommand_goes(word: str) -> None:
    # claude (commander) runs a subcommand named right after `--` (2.1.332)
    assert get("claude").prompt_argv(word) is None
    assert get("claude").prompt_argv(f" {word}") == ["--", f" {word}"]


def test_aider_and_command_never_take_a_prompt_on_their_command_line() -> None:
    assert get("aider").prompt_argv("- fix it") is None
    assert get("command").prompt_argv("- fix it") is None


# ---- prompts no CLI can take: refused, nothing recorded ---------------------------------------
TOO_MUCH = {
    "NUL": "before\0after",
    "lone surrogate": "bad \ud800 text",
    "200 KB": "x" * 200_000,
    "10 MB": "y" * 10_000_000,
    "just over, in UTF-8": "é" * (MAX_PROMPT_BYTES // 2 + 1),
}


def test_prompt_problem_allows_what_fits_and_names_what_does_not() -> None:
    assert prompt_problem("x" * MAX_PROMPT_BYTES) is None
    assert prompt_problem("- a\n\tb ünïcode") is None
    assert "NUL" in str(prompt_problem(TOO_MUCH["NUL"]))
    assert "surrogate" in str(prompt_problem(TOO_MUCH["lone surrogate"]))
    assert "200000" in str(prompt_problem(TOO_MUCH["200 KB"]))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    app = fake_app(tmp_path, fake_tmux(), manual_clock(), {})
    app.environ["ROOST_CLAUDE_BIN"] = "/bin/sh"
    yield app
    app.close()


@pytest.mark.parametrize("prompt", TOO_MUCH.values(), ids=TOO_MUCH.keys())
def test_spawn_refuses_a_prompt_no_cli_can_take_before_recording_anything(
    app: App, prompt: str
) -> None:
    with pytest.raises(RoostError, match="invalid prompt") as refused:
        lifecycle.spawn(app, "victim", provider="claude", cwd=str(app.paths.home), prompt=prompt)
    assert refused.value.code == 2
    assert len(str(refused.value)) < 300  # one line, not the prompt echoed back
    assert app.store.get("victim") is None and app.store.agents() == []
