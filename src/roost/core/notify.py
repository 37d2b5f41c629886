"""When a parent is told about its child, and what it is told ("SIGCHLD for agents"). Pure.

A child's status change notifies its orchestration parent when the child finished a turn
(working -> idle), needs its user (-> waiting), exited or failed. The message is one short
line per child event, bounded, starting with "[roost]" so a model can tell it from a person.

>>> kind_of("working", "idle"), kind_of(None, "idle"), kind_of("idle", "waiting")
('finished', None, 'waiting')
>>> text("kid", "finished", "all tests pass")
'[roost] kid finished its turn: all tests pass'
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_NOTICE = 1000  # characters of a reply or reason in one notice
MAX_MESSAGE = 6000  # characters of the message delivered to a parent


def kind_of(previous: str | None, current: str | None) -> str | None:
    """What a status change means to the parent, or None when it says nothing new."""
    if current == previous or current is None:
        return None
    if current == "idle":
        return "finished" if previous == "working" else None
    if current in ("waiting", "exited", "failed"):
        return current
    return None


_PHRASES = {"finished": "finished its turn", "waiting": "is waiting for its user",
            "exited": "exited", "failed": "failed"}


def text(child: str, kind: str, detail: str | None) -> str:
    """One notice: the child's name, what happened, and the reply or reason (bounded)."""
    said = f"[roost] {child} {_PHRASES.get(kind, kind)}"
    if not detail:
        return said
    detail = " ".join(detail.split())
    if len(detail) > MAX_NOTICE:
        detail = detail[:MAX_NOTICE] + f"… [{len(detail) - MAX_NOTICE} more characters; " \
                                       "read_conversation has them]"
    return f"{said}: {detail}"


def message(notices: Sequence[str]) -> tuple[str, int]:
    """The notices that fit in one message (oldest first, at least one), and how many.

    >>> message(["a", "b"])
    ('a\\nb', 2)
    """
    lines: list[str] = []
    size = 0
    for notice in notices:
        if lines and size + len(notice) + 1 > MAX_MESSAGE:
            break
        lines.append(notice)
        size += len(notice) + 1
    return "\n".join(lines), len(lines)
