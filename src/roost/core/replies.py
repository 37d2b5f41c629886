"""An agent's replies as its CLI's own record holds them (codex's rollout, gemini's chat file,
aider's chat history): the record read as turns, a prompt and its answer, and which answer is
the one a caller asked for. Pure; the providers read the files.

`roost send --wait` takes the answer of *its* turn: the turns asking its text are counted
before the paste, so the answer is the next such turn's, never an earlier turn's with the same
words; a turn not recorded yet (or still without an answer) gives None, and the caller waits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from roost.core.delivery import in_joined, same_message
from roost.core.status import Status


class Read(TypedDict, total=False):
    """What reading an agent's conversation answers (`roost read --json`, the MCP tool): its
    `source` (transcript: its CLI's record; screen: the tail of its screen, for a CLI that keeps
    none; none) and the `messages` (each {role: user | assistant, text}), `screen` or `note`
    that says so; `name` as the caller knows it."""

    name: str
    source: str
    note: str
    messages: list[dict[str, str]]
    screen: str


@dataclass(frozen=True, slots=True)
class Turn:
    prompt: str  # what the CLI took, as it recorded it
    reply: str | None  # its last answer in that turn (its final words); None while it has none


def same_text(prompt: str, text: str) -> bool:
    """Whether a recorded prompt is `text` (CLIs may trim the ends or turn CRs).

    >>> same_text("hello\\n", "hello") and same_text("a\\r\\nb", "a\\nb")
    True
    """

    def norm(value: str) -> str:
        return value.replace("\r\n", "\n").replace("\r", "\n").strip()

    return norm(prompt) == norm(text)


def asks(prompt: str, text: str, joins: bool) -> bool:
    """Whether a turn's prompt asked `text`: the text itself, or, for a CLI that `joins` its
    queue into one prompt, one part of it (the turn's answer is the answer to each part)."""
    return same_text(prompt, text) or (joins and in_joined(prompt, text))


def asked(turns: list[Turn], text: str, joins: bool = False) -> int:
    """How many turns asked `text`."""
    return sum(1 for t in turns if asks(t.prompt, text, joins))


def answer(turns: list[Turn], text: str, earlier: int, joins: bool = False) -> str | None:
    """The answer of the turn that asked `text` after `earlier` turns had asked it, or None
    while that turn is not recorded or has no answer yet.

    >>> turns = [Turn("hi", "one"), Turn("other", "two"), Turn("hi", None)]
    >>> answer(turns, "hi", 0), answer(turns, "hi", 1), answer(turns, "other", 0)
    ('one', None, 'two')
    >>> joined = [Turn("a\\n\\nhi", "both")]  # a CLI's queue, joined into one prompt
    >>> answer(joined, "hi", 0), answer(joined, "hi", 0, joins=True)
    (None, 'both')
    """
    mine = [t for t in turns if asks(t.prompt, text, joins)]
    return mine[earlier].reply if len(mine) > earlier else None


def this_answer(turns: list[Turn], text: str, before: tuple[int, int], joins: bool) -> str | None:
    """The answer of the turn a send of `text` began, `before` being (turns that asked `text`,
    those that asked it alone or as one part of a joined prompt) before the paste: the next
    turn that asked it alone; for a CLI that `joins` its queue into one prompt, when none did,
    the next joined prompt holding it (so a person's prompt of which the text is only a part
    is not taken for it while the text's own turn is coming).

    >>> turns = [Turn("yes", "earlier"), Turn("a\\n\\nyes", "joined")]
    >>> this_answer(turns, "yes", (1, 1), True), this_answer(turns, "yes", (1, 1), False)
    ('joined', None)
    >>> this_answer([*turns, Turn("yes", "own")], "yes", (1, 1), True)
    'own'
    """
    alone, anyhow = before
    if asked(turns, text) > alone:
        return answer(turns, text, alone)
    return answer(turns, text, anyhow, True) if joins else None


def last_answer(turns: list[Turn]) -> str | None:
    """The last turn's answer (None when it has none yet: never an earlier turn's).

    >>> last_answer([Turn("a", "x"), Turn("b", None)]), last_answer([Turn("a", "x")])
    (None, 'x')
    """
    return turns[-1].reply if turns else None


def last_said(turns: list[Turn]) -> str | None:
    """The last words any turn holds (a CLI whose Stop hook says its last answer: what that
    hook would have said, the turn since begun or not).

    >>> last_said([Turn("a", "x"), Turn("b", None)]), last_said([Turn("a", None)])
    ('x', None)
    """
    return next((t.reply for t in reversed(turns) if t.reply is not None), None)


def answer_of_last(turns: list[Turn], text: str) -> str | None:
    """The answer of the last turn that asked `text` (as Claude Code records a long paste
    too: core.delivery.same_message), None while it has none: never an earlier turn's.

    >>> answer_of_last([Turn("hi", "one"), Turn("hi", None)], "hi")
    >>> answer_of_last([Turn("hi", "one"), Turn("other", "two")], "hi")
    'one'
    """
    mine = [t for t in turns if same_message(t.prompt, text)]
    return mine[-1].reply if mine else None


def fold(entries: list[tuple[str, str]]) -> list[Turn]:
    """Turns from a record's entries in order, each ("user" | "agent", text): a user entry
    opens a turn, an agent entry with words becomes that turn's answer (the last one wins:
    a CLI may say something before its tools run and its answer after). Agent words before
    any prompt belong to no turn.

    >>> fold([("agent", "hello"), ("user", "q"), ("agent", "a1"), ("agent", " "),
    ...       ("agent", "a2"), ("user", "r")])
    [Turn(prompt='q', reply='a2'), Turn(prompt='r', reply=None)]
    """
    turns: list[Turn] = []
    for role, text in entries:
        if role == "user":
            turns.append(Turn(text, None))
        elif turns and text.strip():
            turns[-1] = Turn(turns[-1].prompt, text.strip())
    return turns


# ---- waiting for a reply in the record ---------------------------------------------------------
# A CLI that records its turns can look idle just after it took a message, before it shows its
# busy cue: idle alone does not end the wait; the answer in the record does. Without one, an
# agent seen working and idle again gets a moment to write it; one never seen working a longer
# one (its whole turn may have passed between two looks, or it is slow to show its busy cue).
IDLE_GRACE = 3.0
IDLE_UNSEEN = 20.0
NOT_RECORDED = "its CLI's record holds no answer to this message"


def why_no_reply(status: str | None, worked: bool, idle_for: float) -> str | None:
    """Whether to stop waiting for an answer the record does not hold yet: None to go on, else
    why there is none (an error status is the caller's: it reports the failure).

    >>> why_no_reply("idle", False, 5.0) is None, why_no_reply("idle", True, 5.0)
    (True, "its CLI's record holds no answer to this message")
    >>> why_no_reply("waiting", True, 0.0)
    'it is waiting for its user (a question or an approval)'
    """
    if status == Status.WAITING:
        return "it is waiting for its user (a question or an approval)"
    if status in (Status.EXITED, Status.STOPPED, Status.FAILED):
        return f"it {status} before it answered"
    if status == Status.IDLE and idle_for >= (IDLE_GRACE if worked else IDLE_UNSEEN):
        return NOT_RECORDED
    return None


# ---- bounding what goes back to a model ------------------------------------------------------
def bounded(text: str | None, limit: int) -> str | None:
    r"""`text`'s last `limit` characters, saying how many were cut before them.

    >>> bounded("abcdef", 2)
    '[…4 earlier characters cut]\nef'
    """
    if text is None or len(text) <= limit:
        return text
    return f"[…{len(text) - limit} earlier characters cut]\n" + text[-limit:]


def fit(messages: list[dict[str, str]], max_chars: int) -> list[dict[str, str]]:
    """The newest messages that fit in `max_chars`; the oldest one kept may be cut.

    >>> fit([{"role": "user", "text": "hello"}, {"role": "assistant", "text": "hi"}], 4)
    [{'role': 'user', 'text': '[…] lo'}, {'role': 'assistant', 'text': 'hi'}]
    """
    kept: list[dict[str, str]] = []
    left = max_chars
    for m in reversed(messages):
        if left <= 0:
            break
        text = m["text"]
        if len(text) > left:
            text = "[…] " + text[-left:]
        kept.insert(0, {"role": m["role"], "text": text})
        left -= len(text)
    return kept
