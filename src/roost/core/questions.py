"""An agent's question, read off its screen: what it asks, the choices it offers, which one is
selected, and the keys that pick one. Pure: the screen is text.

Every CLI roost knows draws its questions one of three ways (read off the pinned versions,
docs/PROVIDERS.md "Questions"):

- a list with a selection marker, numbered or not: Claude Code's folder trust ("❯ No, exit" /
  "  Yes, I trust this folder") and API key screens, its permission dialogs ("❯ 1. Yes"),
  Codex's trust ("› 1. Trust and continue"), Gemini's trust in a box ("│ ● 1. Trust folder");
- aider's "(Y)es/(N)o [Yes]:" on the last line.

A list is answered by moving the selection to the choice (Up/Down, one press a row) and
Enter: every one of these CLIs takes that, while digits differ (Claude Code takes a digit at
once; Codex 0.169 took "2" at once and did nothing on "1"). A yes/no question takes its
letter and Enter.

A question has a fingerprint (its words and choices): an answer prepared for one question is
never pressed into another (`roost answer`, the web's buttons, a notification's action).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINES = 24  # a question sits in the screen's last lines (Gemini's boxed trust dialog: 16)
MARKERS = "❯›●>"  # what marks the selected choice of a list
BOX = "│┃║|"  # a box's side edges, around each line of a boxed dialog
TEXT_LIMIT = 200  # characters of a question's words

_NUMBERED = re.compile(r"^(?P<mark>[❯›●>]\s*)?(?P<n>[1-9])[.)]\s+(?P<label>\S.*?)\s*$")
_MARKED = re.compile(r"^(?P<mark>[❯›●>])\s+(?P<label>\S.*?)\s*$")
_YES_NO = re.compile(r"\(Y\)es/\(N\)o")
# A list's footer, hints and rules: no choice (Claude's "Enter to confirm · Esc to cancel",
# Codex's "enter continue · esc back", a box's bottom edge).
_NOT_A_CHOICE = re.compile(r"(?i)(enter to|esc to|esc back|enter continue|^[─━╰╭└┌]+)")
# A CLI that restarts on the answer keeps the answered dialog drawn, a line under it saying so
# (Gemini's trust: "Gemini CLI is restarting to apply the trust changes...").
_RESTARTING = re.compile(r"(?i)\brestarting\b")


@dataclass(frozen=True, slots=True)
class Choice:
    key: str  # how a person names it: its number in the list (1, 2, ...), or y / n
    label: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str  # what it asks, on one line
    choices: tuple[Choice, ...]
    selected: int | None = None  # the index of the selected choice of a list
    yes_no: bool = False

    @property
    def fingerprint(self) -> str:
        """Names this question and no other: its words and its choices (not the selection,
        which a person may move before answering)."""
        import hashlib  # here: a status read of a waiting screen needs no digest

        said = "\n".join([self.text, *(f"{c.key}\t{c.label}" for c in self.choices)])
        return hashlib.sha256(said.encode()).hexdigest()[:16]

    def find(self, wanted: str) -> Choice | None:
        """The choice `wanted` names: its key (a number, y or n), or its label (whole, any
        case, or the start of just one label).

        >>> q = Question("Trust?", (Choice("1", "No, exit"), Choice("2", "Yes, I trust this")))
        >>> q.find("2").label, q.find("yes, i trust this").key, q.find("Yes").key
        ('Yes, I trust this', '2', '2')
        >>> q.find("3"), q.find(""), q.find("2\\n")
        (None, None, None)
        """
        for c in self.choices:
            if wanted.casefold() == c.key.casefold():  # a key exactly: "1\n" names none
                return c
        words = " ".join(wanted.split()).casefold()
        if not words or words.isdigit():
            return None
        for c in self.choices:
            if words == c.label.casefold():
                return c
        starts = [c for c in self.choices if c.label.casefold().startswith(words)]
        return starts[0] if len(starts) == 1 else None

    def keys_for(self, choice: Choice) -> list[str]:
        """The tmux keys that pick `choice`: its letter and Enter for yes/no; for a list, Up
        or Down from the selected row to it, then Enter.

        >>> q = Question("?", (Choice("1", "a"), Choice("2", "b"), Choice("3", "c")), selected=0)
        >>> q.keys_for(Choice("3", "c")), q.keys_for(Choice("1", "a"))
        (['Down', 'Down', 'Enter'], ['Enter'])
        >>> Question("?", (Choice("y", "Yes"), Choice("n", "No")), yes_no=True).keys_for(
        ...     Choice("n", "No"))
        ['n', 'Enter']
        """
        if self.yes_no:
            return [choice.key, "Enter"]
        index = self.choices.index(choice)
        moves = index - (self.selected or 0)
        return ["Down"] * moves + ["Up"] * -moves + ["Enter"]


def _inner(line: str) -> str:
    """A line without a box's side edges and the spaces inside them."""
    return line.strip().strip(BOX).strip()


def read(screen: str) -> Question | None:
    """The question at the bottom of `screen`, or None when it shows none.

    Claude Code's folder trust (2.1.332), its choices unnumbered:

    >>> q = read('''Quick safety check: Is this a project you created or one you trust? (Like
    ... your own code.)
    ...  Security guide
    ...  ❯ No, exit
    ...    Yes, I trust this folder
    ...  Enter to confirm · Esc to cancel''')
    >>> q.text, [c.label for c in q.choices], q.selected
    ('Is this a project you created or one you trust?', ['No, exit', 'Yes, I trust this folder'], 0)

    Gemini CLI's, in a box; aider's yes/no:

    >>> q = read('''│ Do you trust the files in this folder?    │
    ... │                                           │
    ... │ ● 1. Trust folder (work)                  │
    ... │   2. Trust parent folder (g1)             │
    ... │   3. Don't trust                          │
    ... ╰───────────────────────────────────────────╯''')
    >>> q.text, len(q.choices), q.choices[2]
    ('Do you trust the files in this folder?', 3, Choice(key='3', label="Don't trust"))
    >>> q = read("Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]: ")
    >>> q.text, q.yes_no, [c.key for c in q.choices]
    ('Add .aider* to .gitignore (recommended)?', True, ['y', 'n'])

    A prompt with text typed on it is no question:

    >>> read("❯ fix the tests\\n? for shortcuts") is None
    True
    """
    lines = [line.rstrip() for line in screen.rstrip().split("\n")][-LINES:]
    if not lines[-1]:
        return None
    yes_no = _YES_NO.search(lines[-1])
    if yes_no is not None:
        asked = lines[-1][: yes_no.start()]
        return Question(
            _question_words(asked) or _one_line(asked),
            (Choice("y", "Yes"), Choice("n", "No")),
            yes_no=True,
        )
    found = _last_list(lines)
    if found is None:
        return None
    first, choices, selected = found
    if any(_RESTARTING.search(line) for line in lines[first + len(choices) :]):
        return None  # answered: the CLI restarts on it
    text = _asked_above(lines[:first])
    if text is None:
        return None
    return Question(text, tuple(choices), selected)


def _last_list(lines: list[str]) -> tuple[int, list[Choice], int | None] | None:
    """The last list of choices on these lines: where it starts, its choices, and which one
    is selected. A list has one selected row (its marker) among the last lines above its
    footer; its other rows are the lines around it whose words start in the same column
    (numbered or not). A numbered list counts from 1."""
    end = len(lines)
    while end > 0 and (not _inner(lines[end - 1]) or _NOT_A_CHOICE.search(_inner(lines[end - 1]))):
        end -= 1
    mark = next(
        (i for i in range(end - 1, max(-1, end - 13), -1) if _marked(_inner(lines[i]))), None
    )
    if mark is None:
        return None
    column = _text_column(lines[mark])

    def is_row(i: int) -> bool:
        inner = _inner(lines[i])
        return (
            bool(inner)
            and not _NOT_A_CHOICE.search(inner)
            and not inner.endswith("?")
            and _text_column(lines[i]) == column
        )

    top, bottom = mark, mark
    while top > 0 and is_row(top - 1) and _number(lines[top]) != "1":
        top -= 1
    while bottom + 1 < end and is_row(bottom + 1) and _number(lines[bottom + 1]) != "1":
        bottom += 1
    rows = range(top, bottom + 1)
    if len(rows) < 2 or sum(1 for i in rows if _marked(_inner(lines[i]))) != 1:
        return None
    numbers = [_number(lines[i]) for i in rows]
    if any(numbers) and numbers != [str(n) for n in range(1, len(rows) + 1)]:
        return None
    labels = [_label(_inner(lines[i])) for i in rows]
    choices = [Choice(str(n), label) for n, label in enumerate(labels, start=1)]
    return top, choices, mark - top


def _marked(inner: str) -> bool:
    numbered = _NUMBERED.match(inner)
    return bool(numbered["mark"]) if numbered else _MARKED.match(inner) is not None


def _number(line: str) -> str | None:
    numbered = _NUMBERED.match(_inner(line))
    return numbered["n"] if numbered else None


def _label(inner: str) -> str:
    numbered = _NUMBERED.match(inner)
    if numbered:
        return numbered["label"]
    marked = _MARKED.match(inner)
    return marked["label"] if marked else inner


def _text_column(line: str) -> int:
    """Where a row's words (or its number) start, past a box's edge and a selection marker."""
    j = 0
    while j < len(line) and (line[j] == " " or line[j] in BOX):
        j += 1
    if j < len(line) and line[j] in MARKERS:
        j += 1
        while j < len(line) and line[j] == " ":
            j += 1
    return j


def _asked_above(lines: list[str]) -> str | None:
    """The question above a list: the last sentence ending in "?" on the lines above it (a
    sentence may run over lines); else the dialog's first line, under the rule drawn above it
    (Claude Code's "New MCP server found in this project: NAME"); else the nearest line of
    words above the list."""
    above = lines[-10:]
    rules = [i for i, line in enumerate(above) if _RULE.match(line.strip())]
    window = [w for w in (_inner(line) for line in above) if w and not _RULE.match(w)]
    for n in range(len(window) - 1, -1, -1):
        if "?" not in window[n]:
            continue
        start = n  # a line that starts in lower case goes on from the one above it
        while start > 0 and window[start][:1].islower():
            start -= 1
        words = _question_words(" ".join(window[start : n + 1]))
        if words:
            return words
    if rules:
        first = next((_inner(x) for x in above[rules[-1] + 1 :] if _inner(x)), None)
        if first:
            return _one_line(first)
    near = next((w for w in reversed(window) if not _NOT_A_CHOICE.search(w)), None)
    return _one_line(near) if near else None


_RULE = re.compile(r"^[─━═╭╮╰╯└┘┌┐\s]+$")  # a box's top or bottom edge, a rule
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+")
_ASKED_END = re.compile(r"(?<=\?)\s+")


def _question_words(text: str) -> str | None:
    """The last sentence in `text` that asks (ends in "?"), on one line.

    >>> _question_words("Quick safety check: Is this yours? (Like your code.) It can run.")
    'Is this yours?'
    >>> _question_words("Add .aider* to .gitignore (recommended)? ")
    'Add .aider* to .gitignore (recommended)?'
    """
    pieces = _ASKED_END.split(" ".join(text.split()))  # each piece ends where a "?" does
    asked = [_SENTENCE_END.split(p)[-1] for p in pieces if p.endswith("?")]
    return _one_line(asked[-1]) if asked else None


def _one_line(text: str) -> str:
    words = " ".join(text.split()).strip(" ●•❯›>")
    return words if len(words) <= TEXT_LIMIT else words[: TEXT_LIMIT - 1] + "…"
