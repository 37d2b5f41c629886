"""core/questions.py on the screens the pinned CLIs drew (tests/data/questions, captured with
tmux from Claude Code 2.1.332, Codex 0.169.0, Gemini CLI 0.61.0 and aider 0.86.2 in a home
and a folder they had never seen), and on the screens that are no question."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.core import questions, status
from roost.core.questions import Choice
from roost.providers import traits

SCREENS = Path(__file__).parent / "data" / "questions"


@pytest.mark.parametrize(
    ("screen", "provider", "asked", "labels", "selected"),
    [
        pytest.param(
            "claude_trust.txt",
            "claude",
            "Is this a project you created or one you trust?",
            ["No, exit", "Yes, I trust this folder"],
            0,
            id="claude-folder-trust",
        ),
        pytest.param(
            "claude_api_key.txt",
            "claude",
            "Do you want to use this API key?",
            ["Yes", "No (recommended)"],
            1,
            id="claude-api-key",
        ),
        pytest.param(
            "claude_mcp_server.txt",
            "claude",
            "New MCP server found in this project: demo",
            [
                "Use this MCP server",
                "Use this and all future MCP servers in this project",
                "Continue without using this MCP server",
            ],
            2,
            id="claude-project-mcp-server",
        ),
        pytest.param(
            "codex_trust.txt",
            "codex",
            "Trust this folder?",
            ["Trust and continue", "Back to Agent Command Center"],
            0,
            id="codex-folder-trust",
        ),
        pytest.param(
            "gemini_trust.txt",
            "gemini",
            "Do you trust the files in this folder?",
            ["Trust folder (work)", "Trust parent folder (s4)", "Don't trust"],
            0,
            id="gemini-folder-trust",
        ),
        pytest.param(
            "aider_gitignore.txt",
            "aider",
            "Add .aider* to .gitignore (recommended)?",
            ["Yes", "No"],
            None,
            id="aider-gitignore",
        ),
    ],
)
def test_each_start_up_question_is_waiting_with_its_words_and_choices(
    screen: str, provider: str, asked: str, labels: list[str], selected: int | None
) -> None:
    text = (SCREENS / screen).read_text()
    assert status.from_screen(text, traits.of(provider).patterns) == "waiting"
    found = status.reading(text, traits.of(provider).patterns)
    assert found == ("waiting", asked)  # the question is the status's reason
    q = questions.read(text)
    assert q is not None
    assert q.text == asked
    assert [c.label for c in q.choices] == labels
    assert q.selected == selected


@pytest.mark.parametrize(
    "screen",
    [
        pytest.param("❯ \n────\n  ⏵⏵ auto mode on (shift+tab to cycle)", id="claude-idle"),
        pytest.param(
            "❯ hello there\n● stub reply: hello there\n✻ Worked for 0s\n────\n❯ \n────",
            id="claude-after-a-turn",
        ),
        pytest.param("› Ask Codex to do anything\n  ? for shortcuts", id="codex-idle"),
        pytest.param("> hello\nTokens: 10 sent\n>", id="aider-idle"),
        pytest.param("", id="empty"),
        pytest.param("1. first\n3. third\n❯ 4. fourth", id="numbers-out-of-order"),
    ],
)
def test_screens_that_ask_nothing(screen: str) -> None:
    assert questions.read(screen) is None


def test_a_changed_question_has_another_fingerprint() -> None:
    a = questions.read((SCREENS / "claude_trust.txt").read_text())
    b = questions.read((SCREENS / "claude_api_key.txt").read_text())
    assert a is not None and b is not None
    assert a.fingerprint != b.fingerprint
    moved = questions.Question(a.text, a.choices, selected=1)
    assert moved.fingerprint == a.fingerprint  # the selection is not the question


@pytest.mark.parametrize(
    ("wanted", "key"),
    [("2", "2"), ("Yes, I trust this folder", "2"), ("yes", "2"), ("no", "1"), ("1", "1")],
)
def test_a_choice_is_named_by_number_or_words(wanted: str, key: str) -> None:
    q = questions.read((SCREENS / "claude_trust.txt").read_text())
    assert q is not None
    found = q.find(wanted)
    assert found is not None and found.key == key


@pytest.mark.parametrize("wanted", ["3", "0", "maybe", "", "Yes, I trust this folder!"])
def test_no_choice_for_words_it_does_not_offer(wanted: str) -> None:
    q = questions.read((SCREENS / "claude_trust.txt").read_text())
    assert q is not None and q.find(wanted) is None


def test_keys_move_from_the_selected_row() -> None:
    q = questions.read((SCREENS / "claude_api_key.txt").read_text())  # "No" is selected
    assert q is not None
    assert q.keys_for(Choice("1", "Yes")) == ["Up", "Enter"]
    assert q.keys_for(Choice("2", "No (recommended)")) == ["Enter"]


@pytest.mark.parametrize(
    ("screen", "keys"),
    [
        ("Do you want to proceed?\n❯ 1. Yes\n  2. No\nEsc to cancel", ["1", "2"]),
        # Gemini's, three choices; an older numbered list above it is not the question's
        (
            "1. old item\n2. old\nAllow execution of [Shell]?\n● 1. Allow once\n"
            "  2. Allow for this session\n  3. No, suggest changes (esc)",
            ["1", "2", "3"],
        ),
        ("Run shell command? (Y)es/(N)o [Yes]: ", ["y", "n"]),
    ],
)
def test_permission_dialogs_choices(screen: str, keys: list[str]) -> None:
    q = questions.read(screen)
    assert q is not None and [c.key for c in q.choices] == keys


def test_labels_are_the_clis_words() -> None:
    q = questions.read("Allow?\n● 1. Allow once\n  2. No, suggest changes (esc)")
    assert q is not None and q.text == "Allow?"
    assert q.choices == (Choice("1", "Allow once"), Choice("2", "No, suggest changes (esc)"))


def test_a_question_the_cli_restarts_on_is_answered() -> None:
    """Gemini CLI keeps its trust dialog drawn, with a line under it, while it restarts on the
    answer (two seconds here, past ten on a loaded machine): that dialog is answered, not
    still asked (`roost answer` reported it was not taken)."""
    text = (SCREENS / "gemini_trust_restarting.txt").read_text()
    assert "● 1. Trust folder (work)" in text
    assert questions.read(text) is None
    assert status.from_screen(text, traits.of("gemini").patterns) != "waiting"
