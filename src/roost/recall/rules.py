"""Recall (issue 39): each CLI's own record of a conversation as indexable messages. Pure: the
record's complete lines in (decoded, bounded: operations.py reads them with the untrusted
reader), messages out, with the small state a record's reading carries from one piece to the
next (plain JSON values, stored with the record's offset).

A message is a role (`user`: a prompt the person or roost gave; `agent`: the CLI's words;
`tool`: a tool call or its result, with the files it touched), its text (bounded), when it
was said, and whether it opens a turn (a prompt does: turns are numbered per agent, across
every session of its lineage, in the order roost indexed them).

The formats (checked on the pinned CLIs; the providers' own readers read the same fields):
- Claude Code's transcript (JSONL): `type` user|assistant, `message.content` a string or parts
  (`text`, `tool_use` {name, input}, `tool_result` {content}), `timestamp`, `isMeta`.
- Codex's rollout (JSONL): `event_msg` `item_completed` items UserMessage|AgentMessage,
  `response_item` `function_call` {name,
  arguments}, `custom_tool_call` {name, input}, `local_shell_call`, their `*_output`.
- Gemini CLI's chat file (JSONL): messages {id, type user|gemini, content, toolCalls,
  timestamp}, written again under the same id as they change, and `$set` {messages: [...]}.
- Aider's chat history (markdown): `# aider chat started at <time>`, runs of `#### ` prompt
  lines, `> ` notes (`Applied edit to <file>`), the answer's plain lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

USER, AGENT, TOOL = "user", "agent", "tool"
ROLES = (USER, AGENT, TOOL)
TEXT_LIMIT = 32 << 10  # characters of a prompt or an answer the index keeps
TOOL_LIMIT = 1 << 10  # characters of a tool call the index keeps (its name, its arguments)
OUTPUT_LIMIT = 512  # characters of a tool's output the index keeps (its first words)
FILES_LIMIT = 32  # files one tool call names, at most
PROVIDERS = ("claude", "codex", "gemini", "aider")

State = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    text: str
    files: tuple[str, ...] = ()
    at: float | None = None  # epoch seconds, as the record says (None: it does not)
    key: str | None = None  # the record's own id for it (gemini writes a message again)
    opens: bool = False  # a prompt: it begins a turn


@dataclass(slots=True)
class Parsed:
    messages: list[Message] = field(default_factory=list)
    malformed: int = 0  # lines that looked like the record's but were no JSON object


def bounded(text: str, limit: int) -> str:
    """`text` cut to `limit` characters (an ellipsis says so).

    >>> bounded("abcdef", 4), bounded("abc", 4)
    ('abc…', 'abc')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def epoch(value: object) -> float | None:
    """An ISO time as a record writes it, in epoch seconds (None: not one).

    >>> epoch("2026-11-01T10:00:00.000Z"), epoch("2026-11-01 10:00:00"), epoch(3)
    (1793527200.0, 1793527200.0, None)
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _objects(data: bytes, wanted: tuple[bytes, bytes], out: Parsed) -> Iterator[dict[str, Any]]:
    """The lines of `data` holding one of the two `wanted` words (a cheap look at the bytes
    before the parse: a record's other lines are neither decoded nor parsed), parsed; one that
    is no JSON object is counted. Bad UTF-8 is replaced, as everywhere."""
    first, second = wanted
    loads = json.loads
    for line in data.split(b"\n"):
        if first not in line and second not in line:
            continue
        try:
            try:
                entry = loads(line)
            except UnicodeDecodeError:
                entry = loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            out.malformed += 1
            continue
        if isinstance(entry, dict):
            yield entry
        else:
            out.malformed += 1


FILE_KEYS = ("file_path", "path", "notebook_path", "absolute_path", "dir_path", "filename")


def files_of(arguments: object) -> tuple[str, ...]:
    """The files a tool call's arguments name (their usual keys), at most FILES_LIMIT.

    >>> files_of({"file_path": "/w/a.py", "x": 1}), files_of({"paths": ["a", "b"]}), files_of(3)
    (('/w/a.py',), ('a', 'b'), ())
    """
    if not isinstance(arguments, dict):
        return ()
    found: list[str] = []
    for key in FILE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    many = arguments.get("paths") or arguments.get("file_paths")
    if isinstance(many, list):
        found.extend(p for p in many if isinstance(p, str) and p)
    return tuple(dict.fromkeys(found))[:FILES_LIMIT]


PATCH_MARKS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")


def patched_files(patch: str) -> tuple[str, ...]:
    """The files an apply_patch input names (codex's patch format).

    >>> patched_files("*** Begin Patch\\n*** Update File: src/a.py\\n@@\\n*** Add File: b.md\\n")
    ('src/a.py', 'b.md')
    """
    found = [
        line[len(mark) :].strip()
        for line in patch.splitlines()
        for mark in PATCH_MARKS
        if line.startswith(mark)
    ]
    return tuple(dict.fromkeys(f for f in found if f))[:FILES_LIMIT]


def _call_text(name: object, arguments: object) -> str:
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return bounded(f"{name} {shown}", TOOL_LIMIT)


def _parts_text(content: object, kind: str = "text") -> str:
    """A string, or the `text` of the parts of `kind` (any kind when empty), a line apart."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text") or "")
            for p in content
            if isinstance(p, dict) and (not kind or p.get("type") == kind)
        )
    return ""


SLASH = re.compile(r"/[A-Za-z][\w:-]*(\s[^\n]*)?")  # a CLI's own command typed at its prompt


def prompt(words: str, at: float | None, key: str | None = None) -> Message:
    """A person's (or roost's) words to the CLI: a prompt opens a turn; a slash command
    (`/clear`, `/compact ...`, one line) is the CLI's business, a tool line of the turn.

    >>> prompt("/clear", None).role, prompt("/etc/hosts is wrong", None).role
    ('tool', 'user')
    """
    if SLASH.fullmatch(words.strip()):
        return Message(TOOL, bounded(words.strip(), TOOL_LIMIT), at=at, key=key)
    return Message(USER, bounded(words, TEXT_LIMIT), at=at, key=key, opens=True)


# ---- Claude Code ---------------------------------------------------------------------------
COMMAND_MARKS = ("<command-", "<local-command")  # a slash command and its output: no prompt


def claude(data: bytes, state: State) -> Parsed:
    out = Parsed()
    for entry in _objects(data, (b'"user"', b'"assistant"'), out):
        kind = entry.get("type")
        message = entry.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            continue
        at = epoch(entry.get("timestamp"))
        content = message.get("content")
        side = bool(entry.get("isSidechain"))  # a subagent's: its prompts open no turn
        if kind == "user":
            if entry.get("isMeta"):
                continue
            words = _parts_text(content)
            if words.strip() and not words.lstrip().startswith(COMMAND_MARKS):
                out.messages.append(
                    Message(TOOL, bounded(words, TOOL_LIMIT), at=at) if side else prompt(words, at)
                )
            for part in content if isinstance(content, list) else ():
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    said = _parts_text(part.get("content"), "")
                    if said.strip():
                        out.messages.append(Message(TOOL, bounded(said, OUTPUT_LIMIT), at=at))
            continue
        words = _parts_text(content)
        if words.strip():
            out.messages.append(Message(AGENT, bounded(words, TEXT_LIMIT), at=at))
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "tool_use":
                args = part.get("input")
                out.messages.append(
                    Message(TOOL, _call_text(part.get("name"), args), files_of(args), at)
                )
    return out


# ---- Codex ---------------------------------------------------------------------------------
CODEX_ITEMS = {"UserMessage": USER, "AgentMessage": AGENT}
CODEX_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
CODEX_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def codex(data: bytes, state: State) -> Parsed:
    out = Parsed()
    for entry in _objects(data, (b"item_completed", b"_call"), out):
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            continue
        at = epoch(entry.get("timestamp"))
        kind, ptype = entry.get("type"), payload.get("type")
        if kind == "event_msg" and ptype == "item_completed":
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") in CODEX_ITEMS:
                role = CODEX_ITEMS[str(item["type"])]
                parts = item.get("content")
                words = (
                    "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))
                    if isinstance(parts, list)
                    else ""
                )
                if role == USER:
                    out.messages.append(prompt(words, at))
                elif words.strip():
                    out.messages.append(Message(role, bounded(words, TEXT_LIMIT), at=at))
        elif kind == "response_item" and ptype in CODEX_CALLS:
            out.messages.append(_codex_call(payload, at))
        elif kind == "response_item" and ptype in CODEX_OUTPUTS:
            said = payload.get("output")
            said = said.get("content") if isinstance(said, dict) else said
            if isinstance(said, str) and said.strip():
                out.messages.append(Message(TOOL, bounded(said, OUTPUT_LIMIT), at=at))
    return out


def _codex_call(payload: dict[str, Any], at: float | None) -> Message:
    name = payload.get("name") or payload.get("type")
    if payload.get("type") == "custom_tool_call":
        given = str(payload.get("input") or "")
        return Message(TOOL, _call_text(name, given), patched_files(given), at)
    if payload.get("type") == "local_shell_call":
        action = payload.get("action")
        return Message(TOOL, _call_text(name, action), (), at)
    raw = payload.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        args = raw
    files = files_of(args)
    if isinstance(args, dict) and isinstance(args.get("input"), str):
        files = files or patched_files(args["input"])
    return Message(TOOL, _call_text(name, raw if isinstance(raw, str) else args), files, at)


# ---- Gemini CLI ----------------------------------------------------------------------------
def gemini(data: bytes, state: State) -> Parsed:
    """Its messages, each once: one written again under its id (its tokens, its tool calls
    added) counts in its last version, at the place of its first."""
    out = Parsed()
    by_id: dict[object, list[Message]] = {}
    for n, entry in enumerate(_objects(data, (b'"user"', b'"gemini"'), out)):
        found = entry.get("$set")
        listed = found.get("messages") if isinstance(found, dict) else None
        for message in listed if isinstance(listed, list) else [entry]:
            if isinstance(message, dict) and message.get("type") in ("user", "gemini"):
                by_id[message.get("id") or f"line {n}"] = _gemini_message(message)
    out.messages = [m for found in by_id.values() for m in found]
    return out


# Gemini CLI 0.61 opens its chat file with a "user" message of its own (the date, the OS, the
# folder's tree): the CLI's context, not a person's prompt (seen in the pinned CLI's records).
GEMINI_CONTEXT = "<session_context>"


def _gemini_message(message: dict[str, Any]) -> list[Message]:
    kind = message.get("type")
    if kind not in ("user", "gemini"):
        return []
    key = str(message.get("id") or "") or None
    at = epoch(message.get("timestamp"))
    content = message.get("content")
    parts = content if isinstance(content, list) else [{"text": content}]
    words = "".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))
    if kind == "user":
        if words.lstrip().startswith(GEMINI_CONTEXT):  # the CLI's own set-up words: no turn
            return [Message(TOOL, bounded(words.strip(), TOOL_LIMIT), at=at, key=key)]
        return [prompt(words, at, key)]
    found = [Message(AGENT, bounded(words, TEXT_LIMIT), at=at, key=key)] if words.strip() else []
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            args = call.get("args")
            found.append(Message(TOOL, _call_text(call.get("name"), args), files_of(args), at, key))
    return found


# ---- Aider ---------------------------------------------------------------------------------
PROMPT_LINE = "####"
STARTED = "# aider chat started at "
APPLIED = "> Applied edit to "


def aider(data: bytes, state: State) -> Parsed:
    """A piece of a chat history: its prompts, notes of edits, and answers (an answer cut by
    the piece's end is two messages, the turn the same)."""
    out = Parsed()
    found = out.messages
    at = state.get("at")
    prompt: list[str] = []
    answer: list[str] = []

    def said() -> None:
        words = "\n".join(answer).strip()
        if words:
            found.append(Message(AGENT, bounded(words, TEXT_LIMIT), at=at))
        answer.clear()

    def asked() -> None:
        found.append(Message(USER, bounded("\n".join(prompt), TEXT_LIMIT), at=at, opens=True))
        prompt.clear()

    for line in data.decode("utf-8", "replace").split("\n"):
        first = line[:1]
        if first == "#" and line.startswith(PROMPT_LINE):
            if answer:
                said()
            prompt.append(line[len(PROMPT_LINE) :].strip())
            continue
        if prompt:
            asked()
        if first == ">":
            if answer:
                said()
            if line.startswith(APPLIED):
                name = line[len(APPLIED) :].strip()
                found.append(Message(TOOL, bounded(line[2:], TOOL_LIMIT), (name,), at))
        elif first == "#" and line.startswith(STARTED):
            if answer:
                said()
            at = epoch(line[len(STARTED) :].strip()) or at
        else:
            answer.append(line)
    if prompt:
        asked()
    if answer:
        said()
    state["at"] = at
    return out


PARSERS = {"claude": claude, "codex": codex, "gemini": gemini, "aider": aider}


def parse(provider: str, data: bytes, state: State) -> Parsed:
    """The messages of a piece of `provider`'s record, its complete lines (`state` carried
    between pieces)."""
    reader = PARSERS.get(provider)
    return reader(data, state) if reader is not None else Parsed()


# ---- turns ---------------------------------------------------------------------------------
def numbered(
    messages: Iterable[Message], current: int, next_turn: int, known: Mapping[str, int]
) -> tuple[list[tuple[int, Message]], int, int]:
    """Each message with its turn: a prompt opens the agent's next turn (`next_turn`), the rest
    belong to the record's `current` one (0: before its first prompt). A message the index
    holds already (`known`: a key's turn, gemini's rewrites) keeps its turn. Returns the
    numbered messages, the record's current turn and the agent's next.

    >>> ms = [Message("agent", "hi"), Message("user", "q", opens=True), Message("agent", "a")]
    >>> [t for t, _ in numbered(ms, 0, 5, {})[0]], numbered(ms, 0, 5, {})[1:]
    ([0, 5, 5], (5, 6))
    >>> again = [Message("user", "q", key="u1", opens=True), Message("agent", "a2")]
    >>> [t for t, _ in numbered(again, 7, 8, {"u1": 5})[0]], numbered(again, 7, 8, {"u1": 5})[1:]
    ([5, 5], (5, 8))
    """
    found: list[tuple[int, Message]] = []
    for m in messages:
        if m.key is not None and m.key in known:
            current = known[m.key] if m.opens else current
            found.append((known[m.key], m))
            continue
        if m.opens:
            current, next_turn = next_turn, next_turn + 1
        found.append((current, m))
    return found, current, next_turn


# ---- a copy of a record up to a turn (roost fork NAME@TURN) ------------------------------------
# Lines a CLI writes just before a prompt that belong to that prompt's turn (checked on the
# pinned CLIs' records): Claude Code 2.1.332 writes a `file-history-snapshot` of the files before
# each prompt; Codex 0.169 opens a turn with its `turn_context`, the prompt as a `response_item`
# message and `event_msg`s (`task_started`, `user_message`) before its `item_completed` item.
LEADS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "claude": lambda e: e.get("type") == "file-history-snapshot",
    "codex": lambda e: (
        e.get("type") == "turn_context"
        or (
            e.get("type") == "response_item"
            and isinstance(p := e.get("payload"), dict)
            and p.get("type") == "message"
            and p.get("role") in ("user", "developer")
        )
        or (
            e.get("type") == "event_msg"
            and isinstance(p := e.get("payload"), dict)
            and p.get("type") in ("task_started", "turn_started", "user_message")
        )
    ),
}
# The fields that name the session, rewritten in the copy: Claude's per-line `sessionId` (and a
# hook payload's `session_id`), Codex's `session_meta` id (META_FIELDS) and its events'
# `thread_id`.
ID_FIELDS = {"claude": ("sessionId", "session_id"), "codex": ("thread_id",)}
META_FIELDS = {"codex": ("id",)}


# Where a line names its session for the CLI that reads it back: the kind of line (None: any)
# and the keys down to the id (Claude's per-line `sessionId`, Codex's `session_meta` payload id).
SESSION_KEY: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "claude": (None, ("sessionId",)),
    "codex": ("session_meta", ("payload", "id")),
}


def _holder(provider: str, entry: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    kind, keys = SESSION_KEY.get(provider, (None, ("sessionId",)))
    if kind is not None and entry.get("type") != kind:
        return None
    here = entry
    for key in keys[:-1]:
        inner = here.get(key)
        if not isinstance(inner, dict):
            return None
        here = inner
    return here, keys[-1]


def _id_of(provider: str, entry: dict[str, Any]) -> str | None:
    """The session id the CLI reads from a line (None: it reads none there)."""
    found = _holder(provider, entry)
    value = None if found is None else found[0].get(found[1])
    return value if isinstance(value, str) else None


def _set_id(provider: str, entry: dict[str, Any], new: str) -> None:
    found = _holder(provider, entry)
    if found is not None:
        found[0][found[1]] = new


@dataclass(slots=True)
class Cut:
    """A record's lines up to the end of its `keep`-th turn (its prompts counted as the index
    counts them: a prompt opens a turn), their session id `old` written as `new`. Fed one
    complete line at a time (without its newline); `done` once the next turn's first line is
    seen (what follows is left out). Lines that lead a prompt (LEADS) are held until a line
    of the conversation follows them, then kept; before the prompt of turn keep+1, dropped."""

    provider: str
    keep: int
    old: str
    new: str
    opened: int = 0
    done: bool = False
    renamed: int = 0  # lines whose session id was rewritten
    held: list[bytes] = field(default_factory=list)
    state: State = field(default_factory=dict)

    def feed(self, line: bytes) -> list[bytes]:
        """The lines to write for `line` (none: held, or past the cut)."""
        if self.done:
            return []
        if any(m.opens for m in parse(self.provider, line, self.state).messages):
            self.opened += 1
            if self.opened > self.keep:
                self.done, self.held = True, []
                return []
        entry = _entry(line)
        lead = LEADS.get(self.provider)
        if entry is not None and lead is not None and lead(entry):
            self.held.append(line)
            return []
        out, self.held = [*self.held, line], []
        return [self._renamed(x) for x in out]

    def end(self) -> list[bytes]:
        """The held lines at the record's end (the cut is at its end: keep them)."""
        out, self.held = self.held, []
        return [self._renamed(x) for x in out]

    def _renamed(self, line: bytes) -> bytes:
        old = self.old.encode()
        if old not in line:
            return line
        entry = _entry(line)
        if entry is None:
            return line
        fields = ID_FIELDS.get(self.provider, ())
        if entry.get("type") == "session_meta":
            fields = META_FIELDS.get(self.provider, fields)
        renamed = line
        for name in fields:  # a key's own quotes are never escaped; inside a string they are
            renamed = re.sub(
                rb'(?<!\\)("' + name.encode() + rb'"\s*:\s*")' + re.escape(old) + rb'"',
                lambda m: m.group(1) + self.new.encode() + b'"',
                renamed,
            )
        if _id_of(self.provider, entry) == self.old:
            again = _entry(renamed)
            if again is None or _id_of(self.provider, again) != self.new:  # written otherwise
                _set_id(self.provider, entry, self.new)
                renamed = json.dumps(entry, separators=(",", ":")).encode()
        if renamed != line:
            self.renamed += 1
        return renamed


def _entry(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        try:
            entry = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return None
    return entry if isinstance(entry, dict) else None


# ---- what a search asks ----------------------------------------------------------------------
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def moment(text: str, now: datetime) -> float:
    """A --since/--until value in epoch seconds: a duration ago (30m, 12h, 7d, 2w) or an ISO
    date or time (UTC unless it says). ValueError when it is neither.

    >>> now = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)
    >>> moment("1d", now) == (now - timedelta(days=1)).timestamp(), moment("2031-03-01", now)
    (True, 1930089600.0)
    """
    value = text.strip()
    if len(value) >= 2 and value[-1] in UNITS and value[:-1].isdigit():
        return (now - timedelta(seconds=int(value[:-1]) * UNITS[value[-1]])).timestamp()
    found = epoch(value)
    if found is None:
        raise ValueError(f"not a time: {text!r} (use e.g. 12h, 7d, 2031-03-01 or an ISO time)")
    return found


def turn_ref(text: str) -> tuple[str, int] | None:
    """NAME@TURN split, or None when it is not one.

    >>> turn_ref("api@12"), turn_ref("api"), turn_ref("api@x"), turn_ref("@3")
    (('api', 12), None, None, None)
    """
    name, at, number = text.rpartition("@")
    if not at or not name or not number.isdigit():
        return None
    return name, int(number)
