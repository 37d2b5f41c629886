"""Agent and home names: the only strings that reach tmux as names, so they are checked first."""

import re

from roost.core.errors import RoostError

MAX_NAME = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# tmux rewrites '.' and ':' in session names, and a name reaches tmux as one: so no dots.
RULE = "a name has only ASCII letters, digits, '-' and '_'"


def name_problem(name: str) -> str | None:
    """Why `name` is not a valid agent name, or None when it is: the rule, and the character
    that broke it.

    >>> name_problem("fix-bug_2") is None
    True
    >>> name_problem("a.b")
    "'a.b' has '.': a name has only ASCII letters, digits, '-' and '_'"
    """
    if not name:
        return "a name cannot be empty"
    if len(name) > MAX_NAME:
        return f"a name is at most {MAX_NAME} characters (got {len(name)})"
    bad = next((ch for ch in name if not (ch.isascii() and (ch.isalnum() or ch in "-_"))), None)
    if bad is not None:
        return f"{name!r} has {bad!r}: {RULE}"
    if not _NAME.fullmatch(name):
        return f"{name!r} must start with a letter or a digit ({RULE})"
    return None


def check_name(name: str, what: str = "agent name") -> str:
    problem = name_problem(name)
    if problem:
        raise RoostError(f"invalid {what}: {problem}", code=2)
    return name
