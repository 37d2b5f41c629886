"""Recall's pure rules (issue 39): each CLI's record lines as messages (role, text, files, time,
turn), table-driven over each format, the samples being the pinned CLIs' own lines (those of
tests/data/usage, which usage's tests hold to them) and what tests/fake_agent.py writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from roost.recall import rules
from roost.recall.rules import AGENT, TOOL, USER, Message

DATA = Path(__file__).parent / "data" / "usage"


def roles(found: list[Message]) -> list[tuple[str, str, tuple[str, ...], bool]]:
    return [(m.role, m.text, m.files, m.opens) for m in found]


def piece(lines: list[str]) -> bytes:
    """Complete lines as a piece of a record."""
    return "".join(f"{line}\n" for line in lines).encode()


def jl(*entries: object) -> list[str]:
    return [json.dumps(e) for e in entries]


CODEX = jl(
    {"timestamp": "2026-11-01T09:00:00.000Z", "type": "session_meta", "payload": {"id": "x"}},
    {
        "timestamp": "2026-11-01T09:00:01.000Z",
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"text": "ctx"}]},
    },
    {
        "timestamp": "2026-11-01T09:00:01.000Z",
        "type": "event_msg",
        "payload": {
            "type": "item_completed",
            "item": {"type": "UserMessage", "content": [{"type": "text", "text": "fix login"}]},
        },
    },
    {
        "timestamp": "2026-11-01T09:00:02.000Z",
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["cat", "a.py"], "path": "src/a.py"}),
        },
    },
    {
        "timestamp": "2026-11-01T09:00:03.000Z",
        "type": "response_item",
        "payload": {"type": "function_call_output", "output": "def a(): pass"},
    },
    {
        "timestamp": "2026-11-01T09:00:04.000Z",
        "type": "response_item",
        "payload": {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "input": "*** Begin Patch\n*** Update File: src/login.py\n@@\n-x\n+y\n*** End Patch",
        },
    },
    {
        "timestamp": "2026-11-01T09:00:05.000Z",
        "type": "event_msg",
        "payload": {
            "type": "item_completed",
            "item": {"type": "AgentMessage", "content": [{"type": "Text", "text": "fixed"}]},
        },
    },
)

AIDER = [
    "",
    "# aider chat started at 2026-11-01 10:00:00",
    "",
    "#### fix the login  ",  # markdown's line break after each prompt line, as aider writes it
    "#### redirect please  ",
    "",
    "Sure, here is the change.",
    "",
    "> Applied edit to src/login.py",
    "> Tokens: 2k sent, 100 received.",
    "",
    "#### thanks  ",
    "",
    "You are welcome.",
]


@pytest.mark.parametrize(
    ("provider", "lines", "expected"),
    [
        pytest.param(
            "claude",
            (DATA / "claude.jsonl").read_text().splitlines(),
            [
                (USER, "fix the bug", (), True),
                (AGENT, "Looking.", (), False),
                (TOOL, 'Bash {"command": "ls"}', (), False),
                (TOOL, "a.py", (), False),
                (AGENT, "Done.", (), False),
                (AGENT, "API Error", (), False),
                (AGENT, "Next day.", (), False),
            ],
            id="claude-transcript",
        ),
        pytest.param(
            "claude",
            jl(
                {"type": "user", "message": {"content": "<command-name>/clear</command-name>"}},
                {"type": "user", "isMeta": True, "message": {"content": "Caveat: ..."}},
                {
                    "type": "assistant",
                    "message": {
                        "content": [
                            {"type": "thinking", "thinking": "hidden"},
                            {
                                "type": "tool_use",
                                "name": "Edit",
                                "input": {"file_path": "/w/src/a.py", "old_string": "x"},
                            },
                        ]
                    },
                },
                {"type": "user", "isSidechain": True, "message": {"content": "subagent task"}},
            ),
            [
                (
                    TOOL,
                    'Edit {"file_path": "/w/src/a.py", "old_string": "x"}',
                    ("/w/src/a.py",),
                    False,
                ),
                (TOOL, "subagent task", (), False),
            ],
            id="claude-commands-meta-tools-sidechain",
        ),
        pytest.param(
            "codex",
            CODEX,
            [
                (USER, "fix login", (), True),
                (
                    TOOL,
                    'shell {"command": ["cat", "a.py"], "path": "src/a.py"}',
                    ("src/a.py",),
                    False,
                ),
                (TOOL, "def a(): pass", (), False),
                (
                    TOOL,
                    "apply_patch *** Begin Patch\n*** Update File: src/login.py\n@@\n-x\n+y\n"
                    "*** End Patch",
                    ("src/login.py",),
                    False,
                ),
                (AGENT, "fixed", (), False),
            ],
            id="codex-rollout",
        ),
        pytest.param(
            "gemini",
            (DATA / "gemini.jsonl").read_text().splitlines(),
            [
                (USER, "context", (), True),
                (USER, "hello", (), True),
                (AGENT, "ok", (), False),
                # g2 in its last version (the $set's, which has no tool calls)
                (AGENT, "ok", (), False),
                (AGENT, "ok", (), False),
            ],
            id="gemini-chat-with-rewrites",
        ),
        pytest.param(
            "aider",
            AIDER,
            [
                (USER, "fix the login\nredirect please", (), True),
                (AGENT, "Sure, here is the change.", (), False),
                (TOOL, "Applied edit to src/login.py", ("src/login.py",), False),
                (USER, "thanks", (), True),
                (AGENT, "You are welcome.", (), False),
            ],
            id="aider-history",
        ),
        pytest.param("command", ["anything"], [], id="a-command-keeps-no-record"),
    ],
)
def test_each_clis_record_becomes_messages(
    provider: str, lines: list[str], expected: list[tuple[str, str, tuple[str, ...], bool]]
) -> None:
    assert roles(rules.parse(provider, piece(lines), {}).messages) == expected


def test_times_are_the_records_and_aiders_come_from_its_heading() -> None:
    claude = rules.parse("claude", (DATA / "claude.jsonl").read_bytes(), {})
    assert claude.messages[0].at == datetime(2026, 11, 1, 10, tzinfo=UTC).timestamp()
    state: rules.State = {}
    first = rules.parse("aider", piece(AIDER[:6]), state).messages
    later = rules.parse("aider", piece(["#### again  ", ""]), state).messages  # the next piece
    assert {m.at for m in first + later} == {datetime(2026, 11, 1, 10, tzinfo=UTC).timestamp()}


def test_gemini_keys_each_message_by_its_id_its_last_version_counting() -> None:
    found = rules.parse("gemini", (DATA / "gemini.jsonl").read_bytes(), {})
    assert [m.key for m in found.messages] == ["u0", "u1", "g1", "g2", "g3"]
    lines = [
        '{"id": "g7", "type": "gemini", "content": "first words"}',
        '{"id": "g7", "type": "gemini", "content": "first words", "toolCalls": '
        '[{"name": "write_file", "args": {"file_path": "/w/x.md"}}]}',
    ]
    assert roles(rules.parse("gemini", piece(lines), {}).messages) == [
        (AGENT, "first words", (), False),
        (TOOL, 'write_file {"file_path": "/w/x.md"}', ("/w/x.md",), False),
    ]


def test_gemini_clis_own_session_context_opens_no_turn() -> None:
    """Gemini CLI 0.61 starts its chat file with a "user" message of its own: the date, the OS
    and the folder's tree. A tool line of the first turn, never a turn of its own."""
    lines = [
        '{"id": "c0", "type": "user", "content": [{"text": "<session_context>\\nThis is the '
        'Gemini CLI. Today is Sunday.\\n</session_context>"}]}',
        '{"id": "u1", "type": "user", "content": [{"text": "fix the parser"}]}',
    ]
    found = rules.parse("gemini", piece(lines), {}).messages
    assert [(m.role, m.opens) for m in found] == [(TOOL, False), ("user", True)]


@pytest.mark.parametrize(
    "line",
    [
        pytest.param('{"type": "user", "message": ', id="cut-short"),
        pytest.param('["user", "assistant"]', id="not-an-object"),
        pytest.param("[" * 100_000 + '"user"' + "]" * 100_000, id="nested-too-deep"),
    ],
)
def test_a_malformed_line_is_counted_and_the_rest_read(line: str) -> None:
    good = jl({"type": "user", "message": {"content": "still here"}})
    found = rules.parse("claude", piece([line, *good]), {})
    assert (found.malformed, roles(found.messages)) == (1, [(USER, "still here", (), True)])


def test_long_texts_are_bounded() -> None:
    big = "x" * (rules.TEXT_LIMIT * 2)
    line = jl(
        {"type": "user", "message": {"content": big}},
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "name": "W", "input": {"c": big}}]},
        },
    )
    found = rules.parse("claude", piece(line), {}).messages
    assert [len(m.text) for m in found] == [rules.TEXT_LIMIT, rules.TOOL_LIMIT]


def test_turns_are_numbered_per_agent_and_a_rewritten_message_keeps_its_turn() -> None:
    lines = (DATA / "gemini.jsonl").read_text().splitlines()
    found = rules.parse("gemini", piece(lines), {}).messages
    numbered, current, after = rules.numbered(found, 0, 1, {})
    assert [t for t, _ in numbered] == [1, 2, 2, 2, 2]
    assert (current, after) == (2, 3)
    # the same messages written again later: their turns stay
    again, current, after = rules.numbered(found[:2], current, after, {"u0": 1, "u1": 2})
    assert ([t for t, _ in again], current, after) == ([1, 2], 2, 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2h", datetime(2031, 3, 4, 3, 6, 7, tzinfo=UTC), id="hours-ago"),
        pytest.param("2031-03-01", datetime(2031, 3, 1, tzinfo=UTC), id="a-day"),
        pytest.param(
            "2031-03-01T10:00:00+01:00", datetime(2031, 3, 1, 9, tzinfo=UTC), id="a-zoned-time"
        ),
    ],
)
def test_since_and_until_take_a_duration_or_a_time(text: str, expected: datetime) -> None:
    now = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert rules.moment(text, now) == expected.timestamp()


@pytest.mark.parametrize("text", ["yesterday", "7x", "", "-3d"])
def test_a_time_that_is_none_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a time"):
        rules.moment(text, datetime(2031, 3, 4, tzinfo=UTC))


def test_the_rules_examples_hold() -> None:
    import doctest

    assert doctest.testmod(rules).failed == 0


def test_bad_utf8_is_replaced_not_dropped() -> None:
    line = b'{"type": "user", "message": {"content": "caf\xe9 and \xff more"}}\n'
    (found,) = rules.parse("claude", line, {}).messages
    assert found.text == "caf\ufffd and \ufffd more"
    (noted,) = rules.parse("aider", b"#### caf\xe9  \n", {}).messages
    assert noted.text == "caf\ufffd"


# ---- a copy of a record up to a turn (roost fork NAME@TURN) --------------------------------
OLD, NEW = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


def compact(entry: object) -> bytes:
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()


def cut(provider: str, keep: int, lines: list[bytes]) -> tuple[list[bytes], rules.Cut]:
    c = rules.Cut(provider, keep, OLD, NEW)
    out = [x for line in lines for x in c.feed(line)]
    return out + c.end(), c


def claude_turn(words: str) -> list[bytes]:
    return [
        compact({"type": "file-history-snapshot", "messageId": words}),
        compact({"type": "user", "sessionId": OLD, "message": {"content": words}}),
        compact(
            {
                "type": "assistant",
                "sessionId": OLD,
                "message": {
                    "content": [{"type": "text", "text": f'ok {words} "sessionId":"{OLD}"'}]
                },
            }
        ),
        compact({"type": "system", "subtype": "turn_duration", "sessionId": OLD}),
    ]


def test_a_claude_record_is_cut_before_the_next_turns_first_line_its_ids_rewritten() -> None:
    head = [compact({"type": "mode", "mode": "normal", "sessionId": OLD})]
    clear = [compact({"type": "user", "sessionId": OLD, "message": {"content": "/clear"}})]
    lines = head + claude_turn("alpha") + clear + claude_turn("beta") + claude_turn("gamma")
    out, c = cut("claude", 2, lines)
    text = b"\n".join(out)
    assert c.done and b"gamma" not in text and b"alpha" in text and b"beta" in text
    assert len(out) == 1 + 4 + 1 + 4  # gamma's snapshot went with it; /clear opens no turn
    turn = [None, NEW, NEW, NEW]  # a snapshot names no session
    assert [json.loads(x).get("sessionId") for x in out] == [NEW, *turn, NEW, *turn]
    # words that quote the field inside a message are a string's: left as they were
    assert text.count(f'\\"sessionId\\":\\"{OLD}\\"'.encode()) == 2
    whole, c2 = cut("claude", 3, lines)
    assert not c2.done and len(whole) == len(lines) and b"gamma" in b"\n".join(whole)


def test_a_line_written_with_spaces_is_rewritten_too() -> None:
    spaced = json.dumps({"type": "user", "sessionId": OLD, "message": {"content": "x"}}).encode()
    (out,), c = cut("claude", 1, [spaced])
    assert json.loads(out)["sessionId"] == NEW and c.renamed == 1


def test_a_codex_rollout_is_cut_before_the_next_turns_context_its_meta_id_rewritten() -> None:
    def turn(words: str) -> list[bytes]:
        return [
            compact({"type": "event_msg", "payload": {"type": "task_started"}}),
            compact({"type": "turn_context", "payload": {"turn_id": words}}),
            compact(
                {
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": words},
                }
            ),
            compact(
                {
                    "type": "event_msg",
                    "payload": {
                        "type": "item_completed",
                        "thread_id": OLD,
                        "item": {"type": "UserMessage", "content": [{"text": words}]},
                    },
                }
            ),
            compact({"type": "event_msg", "payload": {"type": "task_complete"}}),
        ]

    meta = compact(
        {"type": "session_meta", "payload": {"id": OLD, "forked_from_id": OLD, "cwd": "/w"}}
    )
    out, c = cut("codex", 1, [meta, *turn("alpha"), *turn("beta")])
    assert c.done and len(out) == 6 and b"beta" not in b"\n".join(out)
    assert json.loads(out[0])["payload"] == {"id": NEW, "forked_from_id": OLD, "cwd": "/w"}
    assert json.loads(out[4])["payload"]["thread_id"] == NEW


def test_an_id_the_bytes_do_not_spell_out_is_rewritten_through_the_json() -> None:
    odd = b'{"type":"user","\\u0073essionId":"' + OLD.encode() + b'","message":{"content":"x"}}'
    (out,), c = cut("claude", 1, [odd])
    assert json.loads(out)["sessionId"] == NEW and c.renamed == 1
