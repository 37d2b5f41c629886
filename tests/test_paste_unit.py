"""What roost pastes into an agent (core.delivery.paste_safe): text, never keys, whatever the
input (issue 18.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roost.core.delivery import paste_safe, same_message
from roost.ops import send
from roost.tmux.client import Tmux

# Text built from the pieces an attacker nests: markers, parts of markers, ESC, CR, ^C, C1 CSI.
PIECES = st.lists(
    st.sampled_from(
        [
            "\x1b",
            "[",
            "20",
            "0",
            "1",
            "~",
            "\x1b[201~",
            "\x1b[200~",
            "\r",
            "\n",
            "\x03",
            "\x9b",
            "\x1b[Z",
            "a",
            "\t",
            "é",
        ]
    )
)


@given(PIECES.map("".join))
def test_a_paste_holds_no_control_and_is_a_fixed_point(text: str) -> None:
    safe = paste_safe(text)
    assert not any((ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in safe)
    assert paste_safe(safe) == safe


@pytest.mark.parametrize(
    "text, pasted",
    [
        ("first part\x1b[20\x1b[201~1~\rsecond part", "first part[201~\nsecond part"),
        ("\x1b[20\x1b[20\x1b[201~1~1~", "[20[201~1~"),
        ("mode \x1b[Z switch \x03 stop \x9b201~", "mode  switch  stop 201~"),
        ("a\r\nb\rc", "a\nb\nc"),
    ],
)
def test_nested_markers_and_keys_are_removed(text: str, pasted: str) -> None:
    assert paste_safe(text) == pasted


def test_every_paste_through_the_tmux_layer_is_made_safe() -> None:
    """Sends, notices, first prompts and re-pastes all go through the client's paste."""
    loaded: list[str | None] = []

    class Recording(Tmux):
        def run(self, *args: str, input: str | None = None) -> str:
            loaded.append(input)
            return ""

    Recording("s").paste("%1", "x\x1b[201~\ry", "b")
    assert loaded == ["x\ny", None]  # load-buffer's text, then paste-buffer


def test_a_message_of_nothing_but_keys_is_refused() -> None:
    from roost.core.errors import RoostError

    with pytest.raises(RoostError, match="nothing to send"):
        send.send(None, "a", "\x1b[201~\x03")  # type: ignore[arg-type]


WRAPPED = '\n\n<pasted_content id="fc00">\n{}\n</pasted_content id="fc00">\n'


@pytest.mark.parametrize(
    "prompt, text, same",
    [
        ("a\nb\nc", "a\nb\nc", True),  # under 4 lines: as typed
        (WRAPPED.format("a\nb\nc\nd"), "a\nb\nc\nd", True),  # 4+ lines: wrapped
        (WRAPPED.format("z" * 900), "z" * 900 + "\n", True),  # over 800 characters, end trimmed
        (WRAPPED.format("a\nb\nc\nX"), "a\nb\nc\nd", False),  # another text, same wrapper
        (WRAPPED.format("a\nb\nc\nd") + "more", "a\nb\nc\nd", False),  # this text inside more
        ("typed\n" + WRAPPED.format("a\nb\nc\nd"), "a\nb\nc\nd", False),
        ('<pasted_content id="1">\na\nb\nc\nd\n</pasted_content id="2">', "a\nb\nc\nd", False),
        (WRAPPED.format("a\nb"), "a\nb\nc\nd", False),
        (None, "x", False),
    ],
)
def test_a_prompt_is_recognised_in_each_form_claude_records_and_only_for_this_text(
    prompt: object, text: str, same: bool
) -> None:
    assert same_message(prompt, text) is same


@pytest.mark.parametrize(
    "typed, text, ours",
    [
        ("first message", "first message", True),
        ("first   message", "first message\n", True),  # spacing as drawn
        ("[Pasted text #1 +29 lines]", "\n".join(f"line {i}" for i in range(30)), True),
        ("[Pasted text #2 +3 lines]", "a\nb\nc\nd", True),
        ("[Pasted text #1 +5 lines]", "a\nb\nc\nd", False),  # another block
        ("a long first line that wrapped", "a long first line that wrapped at the edge", True),
        ("first", "first message", False),  # too short to be a wrapped row: typed by someone
        ("first message, and more typed", "first message", False),
        ("other words", "first message", False),
    ],
)
def test_roosts_leftover_is_told_from_someones_draft(typed: str, text: str, ours: bool) -> None:
    from roost.core.delivery import left_by_roost

    assert left_by_roost(typed, text) is ours
