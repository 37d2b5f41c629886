"""The shapes of the ids roost stores: its own agent and tab ids, and the providers' session ids.

An agent id becomes a path (ROOST_HOME/agents/<id>, removed by `roost rm`) and a provider
session id becomes an argument of the agent's command line (`--resume <id>`), so a stored value
of any other shape could point outside ROOST_HOME or turn into a flag. Import-light (no `re`):
the hook-file helpers that `roost ls` loads check ids with it.
"""

from __future__ import annotations

_HEX = frozenset("0123456789abcdef")
_HEX_ANY_CASE = _HEX | frozenset("ABCDEF")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_DASHES = (8, 13, 18, 23)
MAX_SESSION_ID = 128
# How a provider's session id becomes known (its traits say which, providers/traits.py).
MINTED, DISCOVERED, NO_SESSION_ID = "minted", "discovered", "none"


def _uuid_shaped(text: str, digits: frozenset[str]) -> bool:
    return (
        len(text) == 36
        and all(text[i] == "-" for i in _DASHES)
        and all(ch in digits for i, ch in enumerate(text) if i not in _DASHES)
    )


def is_roost_id(value: object) -> bool:
    """roost's ids are `str(uuid.uuid4())`: 36 characters, lowercase hex and four dashes.

    >>> is_roost_id("0f8fad5b-d9cb-469f-a165-70867728950e")
    True
    >>> is_roost_id("../../victim")
    False
    """
    return isinstance(value, str) and _uuid_shaped(value, _HEX)


def flag_safe_problem(session_id: str) -> str | None:
    """What every provider session id must be, whatever the provider: a word of letters,
    digits, '.', '_' and '-' that does not start with '-' (so it can never read as a flag).

    >>> flag_safe_problem("--dangerously-skip-permissions")
    "'--dangerously-skip-permissions' starts with '-' (it would read as a flag)"
    """
    if not session_id:
        return "a session id cannot be empty"
    if len(session_id) > MAX_SESSION_ID:
        return f"a session id is at most {MAX_SESSION_ID} characters (got {len(session_id)})"
    if session_id[0] == "-":
        return f"{session_id!r} starts with '-' (it would read as a flag)"
    if not all(ch in _WORD for ch in session_id):
        return f"{session_id!r} has a character other than letters, digits, '.', '_' and '-'"
    return None


def session_id_problem(provider: str, session_id: object, learned: str) -> str | None:
    """Why `session_id` cannot be a session id of `provider`, whose ids are `learned` as its
    traits say (MINTED by roost: a UUID; DISCOVERED in its files: a flag-safe word; or it has
    none), or None when it can.

    >>> session_id_problem("claude", "0F8FAD5B-D9CB-469F-A165-70867728950E", MINTED) is None
    True
    >>> session_id_problem("claude", "s1", MINTED)
    "'s1' is not a claude session id (a UUID)"
    >>> session_id_problem("aider", "s1", NO_SESSION_ID)
    'aider has no session ids'
    """
    if not isinstance(session_id, str):
        return f"a session id must be a string, not {type(session_id).__name__}"
    if learned == NO_SESSION_ID:
        return f"{provider} has no session ids"
    problem = flag_safe_problem(session_id)
    if problem:
        return problem
    if learned == MINTED and not _uuid_shaped(session_id, _HEX_ANY_CASE):
        return f"{session_id!r} is not a {provider} session id (a UUID)"
    return None
