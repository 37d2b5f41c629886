"""What a CLI's own record of its conversation tells the status pipeline before its screen does:
a prompt it took and works on while its screen stands still (aider loads its model client for
seconds after a wake's first prompt, the prompt's line the last on its screen, which no capture
tells from a draft). Import-light (os only): `roost ls`'s fast path asks it, and only of a
still screen that no pattern reads (core/status.py's `in_flight`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.system import untrusted

if TYPE_CHECKING:
    from collections.abc import Callable

AIDER_HISTORY = "aider.chat.history.md"  # per agent, under $ROOST_HOME/agents/<id>/
PROMPT_LINE = "####"
BLANK = "#### <blank>"  # aider's record of an empty Enter, which it answers with nothing
FIRST_READ = 4096  # bytes read from the end first, doubled while a prompt reaches further back
MOST_READ = 1 << 20


def aider_history(roost_home: str, agent_id: str) -> str:
    return os.path.join(roost_home, "agents", agent_id, AIDER_HISTORY)


def aider_took(text: str, whole: bool) -> bool | None:
    """Whether an aider chat history's end (`text`; `whole`: the file from its start) is a
    prompt aider took and nothing after it; None when the prompt may begin before `text` does.

    Aider 0.86.2 writes each prompt as it takes it (each line `#### <line>`, a run of its own),
    then the answer, its notes (`> ` lines: token counts, an error, `^C again to exit`), or a
    new heading when it starts again. An empty Enter (`#### <blank>`) and a command (`/add`,
    `!ls`) are not read as a turn under way: many get no answer, and those that work
    (`/run`, `/ask q`) read as their screen does, as before.

    >>> aider_took("\\n#### hello  \\n\\nhi\\n\\n#### slow one  \\n", True)
    True
    >>> aider_took("#### hello  \\n\\nhi\\n\\n> Tokens: 9 sent\\n", True)
    False
    >>> aider_took("\\n#### <blank>  \\n", True), aider_took("\\n#### /add  \\n", True)
    (False, False)
    >>> aider_took("\\n#### !ls  \\n", True)
    False
    >>> aider_took("ong prompt  \\n", False) is None  # cut inside its line: read more
    True
    """
    lines = text.splitlines()
    if not whole:
        lines = lines[1:]  # the first may be the end of a longer line
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return False if whole else None
    if not lines[-1].startswith(PROMPT_LINE):
        return False
    start = len(lines) - 1
    while start > 0 and lines[start - 1].startswith(PROMPT_LINE):
        start -= 1
    if start == 0 and not whole:
        return None
    if lines[-1].rstrip() == BLANK:
        return False
    return not lines[start][len(PROMPT_LINE) :].lstrip().startswith(("/", "!"))


def aider_in_flight(roost_home: str, agent_id: str) -> bool:
    """aider_took of the agent's chat history, read from its end (a missing or unreadable one
    says no)."""
    size = FIRST_READ
    try:
        with untrusted.open_file(aider_history(roost_home, agent_id)) as fh:
            end = fh.seek(0, os.SEEK_END)
            while True:
                start = max(0, end - size)
                fh.seek(start)
                found = aider_took(fh.read(end - start).decode("utf-8", "replace"), start == 0)
                if found is not None or size >= MOST_READ:
                    return bool(found)
                size *= 2
    except OSError:
        return False


# The providers whose record can say so, by name.
READERS: dict[str, Callable[[str, str], bool]] = {"aider": aider_in_flight}
