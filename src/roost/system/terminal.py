"""What roost writes to a person's terminal is text, never the terminal's command.

Names, folders, reasons, a CLI's words and a host's answers are written by other programs and
other machines; an ESC in one of them would be an escape sequence (OSC 52 writes the
clipboard, CSI clears the screen), a CR or BS would forge a row. So the full CLI writes
through `guard()`: while stdout or stderr is a terminal, every control character written to
it is shown as an escape (`\\x1b`), lines and tabs kept (core/present.shown). Files and pipes
get the bytes as they are (a script's JSON keeps its own escaping).

The one thing that is meant as a terminal's command, an alert's OSC 777/9 and bell
(alerts/operations.terminal_text), goes through `raw()`.
"""

from __future__ import annotations

import sys
from typing import IO, Any, TextIO

from roost.core.present import shown


class Shown:
    """A text stream that shows control characters instead of sending them."""

    def __init__(self, inner: TextIO) -> None:
        self.raw = inner

    def write(self, text: str) -> int:
        self.raw.write(shown(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno…
        return getattr(self.raw, name)


def guard() -> None:
    """From now on, sys.stdout and sys.stderr show control characters, where a terminal."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, Shown) and _is_terminal(stream):
            setattr(sys, name, Shown(stream))


def raw(stream: IO[str]) -> IO[str]:
    """The stream under the guard, for the sequences meant for the terminal."""
    return stream.raw if isinstance(stream, Shown) else stream


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file
        return False
