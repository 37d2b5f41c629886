"""Whether a hook event belongs to the agent's current process: the proof roost needs before it
takes anything from it (above all a new provider session id, which decides the conversation the
next wake resumes). Pure and import-light.

Each launch gets a token of its own (ops/lifecycle.py passes it in the process's environment as
TOKEN_ENV; hook.sh writes it into each line of the hook log, providers/hooks.py). An event is the
current process's when it carries that token and ran in the agent's cwd (or a folder inside
it). Its time proves nothing: the agent's clock may differ from roost's (a step, an NTP jump);
a line stamped before its launch is a warning (`clock_behind`), not a reason to ignore it.
Claude Code's SessionStart gives no previous id to compare (2.1.332: session_id,
transcript_path, cwd, hook_event_name, source, model...), so the token is what ties a new id to
the process that had the old one.

An agent last launched by a roost without tokens (no launch on record) has hook lines without
one: those are taken when the time and cwd checks pass, until its next launch, which has a token.
"""

from __future__ import annotations

TOKEN_ENV = "ROOST_LAUNCH_TOKEN"
LEGACY_SLACK = 2.0  # seconds: an old launch's time is when its record was written, just after


def foreign(
    *,
    token: str | None,
    at: float,
    cwd: object,
    launch_token: str | None,
    launch_at: float | None,
    agent_cwd: str,
) -> str | None:
    """Why the event is not the current process's (in words, for the event log), or None when
    it is. `token` is the line's (None: a line an earlier hook.sh wrote, "" one written with no
    token in its environment); `launch_token` and `launch_at` the current launch's (None for a
    launch made before tokens; `launch_at` then its recorded start, or None when unknown).

    >>> ok = dict(at=100.0, cwd="/w", launch_at=99.5, agent_cwd="/w")
    >>> foreign(token="t", launch_token="t", **ok) is None
    True
    >>> foreign(token=None, launch_token="t", **ok)
    'no launch token (not written by a process roost started)'
    >>> foreign(token="u", launch_token="t", **ok)
    "another launch's token"
    >>> foreign(token="t", launch_token="t", **{**ok, "at": 50.0}) is None  # a clock step
    True
    >>> foreign(token=None, launch_token=None, **{**ok, "at": 50.0})
    'older than the current launch'
    >>> foreign(token="t", launch_token="t", **{**ok, "cwd": "/tmp"})
    "cwd /tmp is not the agent's /w"
    >>> foreign(token=None, launch_token=None, **ok) is None  # launched before tokens
    True
    """
    why = token_refused(token, launch_token)
    if why is not None:
        return why
    # Without a token the time is the only evidence left (a launch recorded just after it
    # began). With one, the token proves the launch and a line's time proves nothing: the
    # agent's clock may be set apart from roost's (clock_behind says by how much).
    if launch_token is None and launch_at is not None and at < int(launch_at) - LEGACY_SLACK:
        return "older than the current launch"
    if not isinstance(cwd, str) or not inside(cwd, agent_cwd):
        return f"cwd {cwd} is not the agent's {agent_cwd}"
    return None


def clock_behind(at: float, launch_at: float | None) -> float:
    """How many seconds a line of the current launch is stamped before that launch began: the
    agent's clock behind roost's (a step, another clock), a warning; 0 when it is not.

    >>> clock_behind(1000.0, 1000.9), clock_behind(999.0, 1000.2), clock_behind(5.0, None)
    (0.0, 1.0, 0.0)
    """
    if launch_at is None:
        return 0.0
    return max(0.0, int(launch_at) - at)  # hook.sh stamps whole seconds


def token_refused(token: str | None, launch_token: str | None) -> str | None:
    """Why a hook line's `token` does not show it is the current launch's (`launch_token`, the
    store's: never one the log itself names), or None when it does. The one rule for both what
    a line may change (`foreign`) and the status it may give (providers/hooks.py).

    >>> token_refused("t", "t"), token_refused(None, None), token_refused("", None)
    (None, None, None)
    >>> token_refused("FAKE", "t")
    "another launch's token"
    """
    if launch_token is not None:
        if not token:
            return "no launch token (not written by a process roost started)"
        if token != launch_token:
            return "another launch's token"
    elif token:
        return "a launch token, but the current launch has none"
    return None


def inside(path: str, folder: str) -> bool:
    """`path` is `folder` or a folder in it (a CLI may report the folder its shell moved to),
    compared as absolute paths with their dots worked out: `/w/../etc` is not in `/w`. Symlinks
    are the caller's to resolve first (this is pure).

    >>> inside("/w", "/w"), inside("/w/sub", "/w"), inside("/wx", "/w"), inside("/", "/w")
    (True, True, False, False)
    >>> inside("/w/../etc", "/w"), inside("/w/a/../b", "/w"), inside("w", "w")
    (False, True, False)
    """
    base, where = normal(folder), normal(path)
    if base is None or where is None:
        return False
    return where == base or where.startswith(base.rstrip("/") + "/")


def normal(path: str) -> str | None:
    """An absolute path without `.`, `..` or empty parts (None for a relative one).

    >>> normal("/a/./b//c/../d/"), normal("/.."), normal("a/b")
    ('/a/b/d', '/', None)
    """
    if not path.startswith("/"):
        return None
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)
