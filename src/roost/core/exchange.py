"""The workspace exchange format of `roost export` / `roost import`: versioned JSON that carries
every field of every record, so a round trip loses nothing; and the check of a file before an
import writes anything. Pure: the store reads and writes the rows (store/exchange.py).

An import is untrusted input, and every value in it ends up somewhere that matters: an agent id
becomes a folder that `roost rm` deletes, a session id an argument of the agent's command line,
a cwd or a home an argument of tmux, a setting the mode of every later spawn. So every field is
checked with the rules the CLI applies to the same value (names, ids, paths, enumerations,
types), and the refusal names the field: `agents[2].id: '../../victim' is not a roost id`.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roost.core import workspace as ws
from roost.core.errors import RoostError
from roost.core.ids import is_roost_id, session_id_problem
from roost.core.model import (
    FIELDS,
    INTENT_HIBERNATED,
    INTENT_RUNNING,
    INTENT_STOPPED,
    RESTART_POLICIES,
)
from roost.core.names import name_problem
from roost.core.resuming import ON_LIMIT
from roost.core.status import Status

FORMAT = "roost-workspace"
VERSION = 1
TOP_LEVEL = (
    "format",
    "version",
    "tabs",
    "agents",
    "pins",
    "settings",
    "agent_files",
    "worktrees",  # issue 22: checked by worktrees/rules.py and verified with git on import
    "policies",  # issue 23: on-limit policies and budgets (check_policies)
)
AGENT_FIELDS = FIELDS

INTENTS = (INTENT_RUNNING, INTENT_STOPPED, INTENT_HIBERNATED)
# What core/status.py records: the statuses and the signal each came from.
STATUSES = (
    Status.STARTING,
    Status.WORKING,
    Status.IDLE,
    Status.WAITING,
    Status.ERROR,
    Status.EXITED,
    Status.STOPPED,
    Status.LOST,
    Status.HIBERNATED,
    Status.FAILED,
    Status.UNKNOWN,
)
# Every source roost stores (core/status.py, store/status.py's turns begun): an export made at
# any moment imports.
STATUS_SOURCES = ("hook", "screen", "title", "loading", "process", "store", "send", "parent")
SIDES = ("a", "b")
# The settings table, key by key: the exact values roost writes (store/workspace.py).
SETTINGS = {"dangerous": ("0", "1")}
# The provider whose session files roost records a path of (from its hooks), and the folder
# under its own directory that holds them: a transcript path is read back to callers.
TRANSCRIPTS = {"claude": "projects"}

MAX_INT = 2**63 - 1  # SQLite's INTEGER
MAX_DOLLARS = 1e12
MAX_PATH = 4096
MAX_TEXT = 65536
MAX_ARGS = 1024
# Linux refuses an exec with one argument of 128 KiB or more (MAX_ARG_STRLEN, its NUL counted),
# and all of them with the environment past ARG_MAX (2 MiB by default): an agent whose argv is
# longer could never start. 1 MiB together leaves the environment the other half.
MAX_ARG_BYTES = 128 * 1024
MAX_ARGV_BYTES = 1024 * 1024
# The providers whose args are the whole command line, the program first (`roost spawn
# --provider command -- PROGRAM ARGS`): without one the agent can never start.
PROGRAM_IN_ARGS = ("command",)
# A launch count and a tab's position only ever grow by one (a wake, a new tab): the largest
# SQLite integer would overflow on the next one (a traceback after the agent was launched).
MAX_STEPS = 2**31 - 1
# What tmux reports is an exit status, or 128 + the signal that ended it (a negative signal
# number, as Python gives it, is taken too).
MAX_EXIT = 255
MAX_TILES = 256  # tiles in one tab (more than tmux can show in one window)
MAX_TREE_DEPTH = MAX_TILES - 1  # splits from a tab's root to its deepest tile


@dataclass(frozen=True, slots=True)
class Taken:
    """What the database already holds, which an import must not reuse."""

    ids: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    tabs: frozenset[str] = frozenset()  # tab names
    tab_ids: frozenset[str] = frozenset()
    sessions: frozenset[str] = frozenset()  # provider session ids, lineage included


def refused(message: str) -> RoostError:
    return RoostError(f"import refused, nothing changed: {message}", code=2)


# ---- one value each: a check returns what is wrong, or None --------------------------------
Check = Callable[[Any], "str | None"]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def roost_id(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"must be a roost id (a UUID), not {_shown(value)}"
    return None if is_roost_id(value) else f"{_shown(value)} is not a roost id (a UUID)"


def name(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"must be a string, not {_shown(value)}"
    return name_problem(value)


def absolute_path(value: Any) -> str | None:
    """A cwd or a transcript: absolute, one line, no NUL (tmux, a shell or the OS would cut it)."""
    if not isinstance(value, str):
        return f"must be a string, not {_shown(value)}"
    if any(ch in value for ch in "\0\n\r"):
        return "has a newline or NUL"
    if not value.startswith("/"):
        return f"{_shown(value)} is not an absolute path"
    if len(value) > MAX_PATH:
        return f"is longer than {MAX_PATH} characters"
    return None


def directory(value: Any) -> str | None:
    """A cwd: an absolute path as spawn stores it (its real path: no `.` or `..`, no `//` or
    trailing `/`)."""
    problem = absolute_path(value)
    # normpath keeps POSIX's leading `//` (a path of its own meaning): spawn never stores one
    normal = "/" + posixpath.normpath(value).lstrip("/") if problem is None else value
    if normal != value:
        return f"{_shown(value)} is not a normalized path (spawn stores {_shown(normal)})"
    return problem


def text(value: Any) -> str | None:
    """Free text shown to the user (`last_error`): lines and tabs, but no terminal control."""
    if not isinstance(value, str):
        return f"must be a string, not {_shown(value)}"
    if len(value) > MAX_TEXT:
        return f"is longer than {MAX_TEXT} characters"
    if any((ord(ch) < 32 and ch not in "\n\t") or 127 <= ord(ch) < 160 for ch in value):
        return "has a control character"
    return None


def boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, not {_shown(value)}"


def count(value: Any) -> str | None:
    """A whole number from 0 (bool is not one, whatever Python says)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        return f"must be a whole number from 0 to {MAX_INT}, not {_shown(value)}"
    return None


def integer(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not -MAX_INT <= value <= MAX_INT:
        return f"must be a whole number, not {_shown(value)}"
    return None


def exit_code(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not -MAX_EXIT <= value <= MAX_EXIT:
        return (
            f"must be a whole number from -{MAX_EXIT} to {MAX_EXIT} (an exit status), "
            f"not {_shown(value)}"
        )
    return None


def up_to(largest: int) -> Check:
    """A whole number from 0 to `largest`."""

    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= largest:
            return f"must be a whole number from 0 to {largest}, not {_shown(value)}"
        return None

    return check


def ratio(value: Any) -> str | None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not ws.MIN_RATIO <= value <= ws.MAX_RATIO
    ):
        return f"must be a number in [{ws.MIN_RATIO}, {ws.MAX_RATIO}], not {_shown(value)}"
    return None


def moment(value: Any) -> str | None:
    """An ISO 8601 time with its zone, as roost writes them (ages are computed against now)."""
    if not isinstance(value, str):
        return f"must be a string (an ISO 8601 time), not {_shown(value)}"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return f"{_shown(value)} is not an ISO 8601 time"
    return None if parsed.tzinfo is not None else f"{_shown(value)} has no time zone"


def one_of(allowed: tuple[str, ...]) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, str) and value in allowed:
            return None
        return f"must be one of {', '.join(allowed)}, not {_shown(value)}"

    return check


def optional(check: Check) -> Check:
    def maybe(value: Any) -> str | None:
        return None if value is None else check(value)

    return maybe


def money(value: Any) -> str | None:
    """Dollars: a finite number from 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= MAX_DOLLARS
    ):
        return f"must be a number of dollars from 0 to {MAX_DOLLARS:g}, not {_shown(value)}"
    return None


def link(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        return f"must be a string or null, not {_shown(value)}"
    return None if value is None else roost_id(value)


# Every field of an agent record that is checked on its own, in the order of the record.
FIELD_CHECKS: dict[str, Check] = {
    "id": roost_id,
    "name": name,
    "cwd": directory,
    "home": name,
    "dangerous": boolean,
    "created_at": moment,
    "intent": one_of(INTENTS),
    "started_at": optional(moment),
    "launches": up_to(MAX_STEPS),
    "last_exit": optional(exit_code),
    "placement": optional(one_of(ws.PLACEMENTS)),
    "tab_id": link,
    "buried_sibling": link,
    "buried_side": optional(one_of(SIDES)),
    "buried_direction": optional(one_of(ws.DIRECTIONS)),
    "buried_ratio": optional(ratio),
    "linked_parent": link,
    "orchestration_parent": link,
    "orchestration_root": link,
    "last_active_at": optional(moment),
    "last_error": optional(text),
    "status": optional(one_of(STATUSES)),
    "status_source": optional(one_of(STATUS_SOURCES)),
    "status_since": optional(moment),
    "restart_policy": one_of(RESTART_POLICIES),
    "conversation_seen": boolean,
    "transcript_path": optional(absolute_path),
    "hook_offset": count,
    "mcp": boolean,
}
# Agent fields added after exports of this version were first written: absent means this value.
ADDED_FIELDS: dict[str, object] = {"mcp": True}
# The others need more than their own value (_check_agents): the provider is one of the given
# providers, args a list of arguments, and session ids have the provider's shape.
CHECKED_TOGETHER = ("provider", "args", "provider_session_id")


def _require(where: str, problem: str | None) -> None:
    if problem:
        raise refused(f"{where}: {problem}")


# ---- the file ------------------------------------------------------------------------------
def validate(
    data: Any,
    taken: Taken,
    providers: Mapping[str, str],
    provider_dirs: Mapping[str, str] | None = None,
) -> None:
    """Raise a clear error for the first thing wrong with `data` (parsed JSON). `providers`
    maps each provider's name to how its session ids become known (its traits);
    `provider_dirs` a provider's own directory on this machine (claude's ~/.claude), where an
    agent's transcript must be."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise refused(f"not a roost workspace export (format must be {FORMAT!r})")
    _require("a string", not_text(data))
    unknown = sorted(set(data) - set(TOP_LEVEL), key=str)
    if unknown:
        raise refused(
            f"{_shown(unknown[0])} is not part of a roost workspace export "
            f"(it has {', '.join(TOP_LEVEL)})"
        )
    if data.get("version") != VERSION:
        raise refused(
            f"unsupported export version {_shown(data.get('version'))} (this roost reads {VERSION})"
        )
    for key, kind in (("tabs", list), ("agents", list), ("pins", list), ("settings", dict)):
        if not isinstance(data.get(key), kind):
            raise refused(f"{key!r} must be a {kind.__name__}")
    _check_settings(data["settings"])
    ids = _check_agents(data["agents"], taken, providers)
    for i, a in enumerate(data["agents"]):
        _require(f"agents[{i}].transcript_path", transcript_problem(a, provider_dirs or {}))
    tiled, tab_ids = _check_tabs(data["tabs"], ids, taken)
    _check_placements(data["agents"], ids, tiled, tab_ids)
    for i, pin in enumerate(data["pins"]):
        _require(
            f"pins[{i}]", None if isinstance(pin, str) else f"must be a roost id, not {_shown(pin)}"
        )
        if pin not in ids:
            raise refused(f"pin {pin!r} is not an agent of this file")
    if len(set(data["pins"])) != len(data["pins"]):
        raise refused("an agent is pinned twice")
    check_policies(data.get("policies"), ids, tab_ids)


# ---- on-limit policies and budgets (issue 23) ----------------------------------------------
ON_LIMIT_CHECKS: dict[str, Check] = {
    "scope": one_of(("agent", "tab")),
    "target": roost_id,
    "policy": one_of(ON_LIMIT),
}
BUDGET_CHECKS: dict[str, Check] = {
    "agent": roost_id,
    "tokens": optional(count),
    "dollars": optional(money),
    "tree_tokens": optional(count),
    "tree_dollars": optional(money),
    "parked": optional(text),  # why a budget parked it, until it is woken
}


def check_policies(policies: Any, ids: set[str], tab_ids: set[str]) -> None:
    """`policies` (absent in older exports): each on-limit policy of one of the file's agents
    or tabs, once; each budget of one of its agents, once."""
    if policies is None:
        return
    if not isinstance(policies, dict) or set(policies) - {"on_limit", "budgets"}:
        raise refused("'policies' must be an object with on_limit and budgets")
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(_rows(policies, "on_limit", ON_LIMIT_CHECKS)):
        known = ids if row["scope"] == "agent" else tab_ids
        if row["target"] not in known:
            raise refused(
                f"policies.on_limit[{i}]: {row['target']!r} is no {row['scope']} of this file"
            )
        if (row["scope"], row["target"]) in seen:
            raise refused(f"policies.on_limit[{i}]: a second policy for {row['target']!r}")
        seen.add((row["scope"], row["target"]))
    budgeted: set[str] = set()
    for i, row in enumerate(_rows(policies, "budgets", BUDGET_CHECKS)):
        if row["agent"] not in ids or row["agent"] in budgeted:
            raise refused(
                f"policies.budgets[{i}]: {row['agent']!r} is no agent of this file, or twice"
            )
        budgeted.add(row["agent"])


def _rows(policies: dict[str, Any], key: str, checks: Mapping[str, Check]) -> list[dict[str, Any]]:
    rows = policies.get(key, [])
    if not isinstance(rows, list):
        raise refused(f"policies.{key} must be a list")
    for i, row in enumerate(rows):
        where = f"policies.{key}[{i}]"
        if not isinstance(row, dict) or set(row) != set(checks):
            raise refused(f"{where} must have {', '.join(checks)}")
        for field, check in checks.items():
            _require(f"{where}.{field}", check(row[field]))
    return rows


def not_text(data: Any) -> str | None:
    """Whether any string of the parsed file, key or value, is no text: JSON's `\\ud800` (a lone
    surrogate) parses, but no database, file name or command line can hold it. Walked without
    recursion: the file's depth is whatever the JSON parser allowed."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack += [*node.keys(), *node.values()]
        elif isinstance(node, list):
            stack += node
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return f"{_shown(node)} holds a lone surrogate (\\ud800-\\udfff), which is no text"
    return None


def transcript_problem(agent: dict[str, Any], provider_dirs: Mapping[str, str]) -> str | None:
    """A transcript path must name one of the agent's own conversations in its provider's
    folder on this machine: `<dir>/projects/<folder>/<session id>.jsonl`, nothing else (roost
    reads it back to the agent's parent; /etc/shadow is no transcript)."""
    path = agent["transcript_path"]
    if path is None:
        return None
    root, folder = provider_dirs.get(agent["provider"]), TRANSCRIPTS.get(agent["provider"])
    if root is None or folder is None:
        return f"{agent['provider']} agents keep no transcript path"
    sessions = {*agent["session_history"], agent["provider_session_id"]}
    parts = path[len(root) :].split("/") if path.startswith(root.rstrip("/") + "/") else []
    if (
        len(parts) != 4
        or parts[:2] != ["", folder]
        or parts[2] in ("", ".", "..")
        or parts[3] not in {f"{sid}.jsonl" for sid in sessions if sid}
    ):
        return (
            f"{_shown(path)} is not one of this agent's conversations "
            f"({root.rstrip('/')}/{folder}/<folder>/<its session id>.jsonl)"
        )
    return None


def leave_off_permissions(
    data: dict[str, Any],
) -> tuple[dict[str, Any], list[str], dict[str, list[str]]]:
    """A checked export without what could turn permission checks off: the workspace's
    dangerous mode, its agents' and their CLI arguments (any argument can: claude's
    `--settings`, codex's `-c`, a `command` agent's program). Returns the rest; what was left
    off, for the person to read; and each agent's arguments by its id, kept aside for the
    person's approval (`roost approve`): an agent whose arguments were left off never starts
    without them, nor with them until approved."""
    left: list[str] = []
    proposed: dict[str, list[str]] = {}
    settings = dict(data["settings"])
    if settings.get("dangerous") == "1":
        del settings["dangerous"]
        left.append("settings.dangerous")
    agents = []
    for a in data["agents"]:
        if a["dangerous"]:
            left.append(f"{a['name']}: dangerous mode")
        if a["args"]:
            left.append(
                f"{a['name']}: arguments {_shown(' '.join(a['args']))}, kept aside until "
                f"`roost approve {a['name']}`"
            )
            proposed[a["id"]] = list(a["args"])
        agents.append({**a, "dangerous": False, "args": []})
    return {**data, "settings": settings, "agents": agents}, left, proposed


def _check_settings(settings: dict[str, Any]) -> None:
    for key, value in settings.items():
        if key not in SETTINGS:
            raise refused(
                f"settings.{key}: is not a setting roost knows (known: {', '.join(SETTINGS)})"
            )
        allowed = SETTINGS[key]
        if not (isinstance(value, str) and value in allowed):
            raise refused(
                f"settings.{key}: must be "
                f"{' or '.join(f'{chr(34)}{v}{chr(34)}' for v in allowed)}, "
                f"not {_shown(value)}"
            )


def _check_agents(agents: list[Any], taken: Taken, providers: Mapping[str, str]) -> set[str]:
    """Each record on its own, and against the database; returns the file's agent ids."""
    ids: set[str] = set()
    names: set[str] = set()
    sessions: set[str] = set()
    for i, a in enumerate(agents):
        where = f"agents[{i}]"
        if not isinstance(a, dict):
            raise refused(f"{where}: must be an object, not {_shown(a)}")
        given = set(a) - {"session_history"}
        if "session_history" not in a or not (
            set(AGENT_FIELDS) - set(ADDED_FIELDS) <= given <= set(AGENT_FIELDS)
        ):
            raise refused(
                f"{where} must have exactly the fields {sorted(AGENT_FIELDS)} and session_history"
            )
        for field, check in FIELD_CHECKS.items():
            _require(f"{where}.{field}", check(a.get(field, ADDED_FIELDS.get(field))))
        if a["id"] in ids | taken.ids:
            raise refused(f"{where}.id: {a['id']!r} is already used")
        if a["name"] in names | taken.names:
            raise refused(f"{where}: agent name {a['name']!r} already exists")
        if not isinstance(a["provider"], str) or a["provider"] not in providers:
            raise refused(f"{where}: unknown provider {_shown(a['provider'])}")
        _check_args(where, a["args"], a["provider"] in PROGRAM_IN_ARGS)
        history = _check_sessions(where, a, providers[a["provider"]])
        for sid in history + ([a["provider_session_id"]] if a["provider_session_id"] else []):
            if sid in taken.sessions or (sid in sessions and sid not in history):
                raise refused(f"{where}: provider session {sid} already belongs to another agent")
        sessions.update(history)
        ids.add(a["id"])
        names.add(a["name"])
    return ids


def _check_args(where: str, args: Any, program_first: bool) -> None:
    """An argv an exec can pass (spawn's is one by the time it is stored); `program_first`:
    the args start with the program (a command agent's), which spawn requires."""
    if not isinstance(args, list) or not all(isinstance(x, str) for x in args):
        raise refused(f"{where}: args must be a list of strings")
    _require(f"{where}.args", args_problem(args, program_first))
    for n, arg in enumerate(args):
        _require(f"{where}.args[{n}]", arg_problem(arg))
    if program_first and not args[0]:
        raise refused(f"{where}.args[0]: a command agent's program cannot be empty")


def args_problem(args: list[str], program_first: bool) -> str | None:
    """What is wrong with the argument list as a whole (None: nothing).

    >>> args_problem([], True)
    "a command agent's args hold its program, and these are empty"
    """
    if program_first and not args:
        return "a command agent's args hold its program, and these are empty"
    if len(args) > MAX_ARGS:
        return f"has more than {MAX_ARGS} arguments"
    if sum(len(arg.encode("utf-8", "surrogatepass")) + 1 for arg in args) > MAX_ARGV_BYTES:
        return f"is more than {MAX_ARGV_BYTES} bytes together (an exec could not pass them)"
    return None


def arg_problem(arg: str) -> str | None:
    if "\0" in arg:
        return "has a NUL"
    if len(arg.encode("utf-8", "surrogatepass")) >= MAX_ARG_BYTES:
        return f"is {MAX_ARG_BYTES} bytes or more (an exec could not pass it)"
    return None


def _check_sessions(where: str, a: dict[str, Any], learned: str) -> list[str]:
    """The current session id and the lineage: each in its provider's shape (`learned`: how its
    ids become known). Returns the lineage."""
    if a["provider_session_id"] is not None:
        _require(
            f"{where}.provider_session_id",
            session_id_problem(a["provider"], a["provider_session_id"], learned),
        )
    history = a["session_history"]
    if not isinstance(history, list) or not all(isinstance(s, str) for s in history):
        raise refused(f"{where}: session_history must be a list of strings")
    for n, sid in enumerate(history):
        _require(f"{where}.session_history[{n}]", session_id_problem(a["provider"], sid, learned))
    return history


def _check_tabs(tabs: list[Any], ids: set[str], taken: Taken) -> tuple[dict[str, str], set[str]]:
    """Each tab and its tree; returns which tab tiles each agent, and the file's tab ids."""
    tab_ids: set[str] = set()
    names: set[str] = set()
    tiled: dict[str, str] = {}
    for i, t in enumerate(tabs):
        where = f"tabs[{i}]"
        if not isinstance(t, dict) or set(t) != {"id", "name", "position", "layout", "focus"}:
            raise refused(f"{where} must have id, name, position, layout, focus")
        _require(f"{where}.id", roost_id(t["id"]))
        if t["id"] in tab_ids | taken.tab_ids:
            raise refused(f"{where}.id: {t['id']!r} is already used")
        if not isinstance(t["name"], str) or name_problem(t["name"]) or t["name"] in taken.tabs:
            raise refused(f"{where}: bad or existing tab name {_shown(t['name'])}")
        if t["name"] in names:
            raise refused(f"{where}.name: tab name {t['name']!r} is used twice")
        _require(f"{where}.position", up_to(MAX_STEPS)(t["position"]))
        _check_tree(t["layout"], f"{where}.layout")
        for agent_id in ws.leaves(t["layout"]):
            if agent_id not in ids or agent_id in tiled:
                raise refused(
                    f"{where}: tile {agent_id} is not an agent of this file, or tiled twice"
                )
            tiled[agent_id] = t["id"]
        _require(f"{where}.focus", link(t["focus"]))
        if t["focus"] is not None and t["focus"] not in ws.leaves(t["layout"]):
            raise refused(f"{where}: focus must be one of its tiles")
        tab_ids.add(t["id"])
        names.add(t["name"])
    return tiled, tab_ids


BURIED_FIELDS = ("buried_sibling", "buried_side", "buried_direction", "buried_ratio")


def settled(agent: Mapping[str, Any], tiled: Collection[str]) -> dict[str, Any]:
    """The agent's record with its placement as the file's layouts say (`tiled`: the ids they
    hold), the store's rule (store/schema.py, tiles_stored_once): a tile is one because a layout
    holds it, whatever its record says, and a record that says `tile` while no layout holds it
    (an export of a store whose two copies had drifted) is parked in the tab it names.

    >>> settled({"id": "a", "placement": "tile", "tab_id": "t"}, set())["placement"]
    'detached'
    >>> settled({"id": "a", "placement": "buried", "tab_id": "t"}, {"a"})["placement"]
    'tile'
    """
    if agent["id"] in tiled:
        return {**agent, "placement": ws.TILE, **dict.fromkeys(BURIED_FIELDS)}
    if agent["placement"] == ws.TILE:
        return {**agent, "placement": ws.DETACHED}
    return dict(agent)


def _check_tree(layout: Any, where: str) -> None:
    """Bounded first (without recursion, so no depth can overflow the stack), then well-formed."""
    tiles = 0
    stack = [(layout, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise refused(f"{where}: a tile tree is at most {MAX_TREE_DEPTH} splits deep")
        if isinstance(node, dict) and "split" in node:
            stack += [(node.get(side), depth + 1) for side in ("a", "b")]
        elif node is not None:
            tiles += 1
            if tiles > MAX_TILES:
                raise refused(f"{where}: a tab holds at most {MAX_TILES} tiles")
    try:
        ws.validate_tree(layout, where)
    except ws.LayoutError as exc:
        raise refused(str(exc)) from None


def _check_placements(
    agents: list[Any], ids: set[str], tiled: dict[str, str], tab_ids: set[str]
) -> None:
    """Every link stays inside the file. (Which agents are tiles, the tabs' layouts say: see
    `settled`.)"""
    for i, a in enumerate(agents):
        where = f"agents[{i}] ({a['name']})"
        if a["tab_id"] is not None and a["tab_id"] not in tab_ids:
            raise refused(f"{where}: tab_id {a['tab_id']} is not a tab of this file")
        for field in (
            "linked_parent",
            "orchestration_parent",
            "orchestration_root",
            "buried_sibling",
        ):
            if a[field] is not None and a[field] not in ids:
                raise refused(f"{where}: {field} {a[field]} is not an agent of this file")
    _check_no_cycle(agents)


PARENTS = ("linked_parent", "orchestration_parent")


def _check_no_cycle(agents: list[dict[str, Any]]) -> None:
    """No agent is its own ancestor through its links of either kind (`roost link` refuses
    such a link; `kill --tree` and the trees' budgets walk them). Kahn's algorithm both ways:
    what is left once every agent with no parent left is taken away, then every one with no
    child left, lies on a cycle; the first of those in the file names the link."""
    parents = {a["id"]: {a[f] for f in PARENTS if a[f] is not None} for a in agents}
    children: dict[str, set[str]] = {agent_id: set() for agent_id in parents}
    for child, theirs in parents.items():
        for parent in theirs:
            children[parent].add(child)
    left = _peeled(_peeled(set(parents), parents, children), children, parents)
    for i, a in enumerate(agents):
        for field in PARENTS:
            if a["id"] in left and a[field] in left:
                raise refused(
                    f"agents[{i}] ({a['name']}): {field} {a[field]} makes a cycle of links "
                    "(an agent cannot be its own ancestor)"
                )


def _peeled(
    nodes: set[str], inward: Mapping[str, set[str]], outward: Mapping[str, set[str]]
) -> set[str]:
    """`nodes` without each one that has no `inward` edge from the others, again and again."""
    counts = {n: len(inward[n] & nodes) for n in nodes}
    free = [n for n, c in counts.items() if c == 0]
    left = set(nodes)
    while free:
        node = free.pop()
        left.discard(node)
        for after in outward[node] & left:
            counts[after] -= 1
            if counts[after] == 0:
                free.append(after)
    return left


# ---- the agents' own files (added in issue 19) -----------------------------------------------
# What an agent needs to resume that lives in roost's home rather than in its CLI's: aider's
# chat history. They travel under the export's top-level "agent_files" ({agent id: {file name:
# text}}), which older roosts ignore. Only these names: a name in the file never becomes a
# path of its own choosing.
AGENT_FILE_NAMES = ("aider.chat.history.md",)
MAX_AGENT_FILE = 64 << 20  # characters of one file (a long chat history is a few MB)


def check_agent_files(files: Any, ids: set[str]) -> dict[str, dict[str, str]]:
    """The export's `agent_files` (absent: none), checked: each key an agent of this file,
    each name one roost writes, each content text; else a refusal naming the entry.

    >>> check_agent_files(None, set())
    {}
    >>> try:
    ...     check_agent_files({"x": {}}, set())
    ... except RoostError as exc:
    ...     print(exc)
    import refused, nothing changed: agent_files: 'x' is not an agent of this file
    """
    if files is None:
        return {}
    if not isinstance(files, dict):
        raise refused(f"agent_files must be an object, not {_shown(files)}")
    for agent_id, named in files.items():
        if agent_id not in ids:
            raise refused(f"agent_files: {_shown(agent_id)} is not an agent of this file")
        if not isinstance(named, dict):
            raise refused(f"agent_files.{agent_id} must be an object, not {_shown(named)}")
        for file_name, content in named.items():
            where = f"agent_files.{agent_id}"
            if file_name not in AGENT_FILE_NAMES:
                raise refused(
                    f"{where}: {_shown(file_name)} is not a file roost keeps for an "
                    f"agent (known: {', '.join(AGENT_FILE_NAMES)})"
                )
            if not isinstance(content, str) or len(content) > MAX_AGENT_FILE:
                raise refused(
                    f"{where}.{file_name}: must be text of at most {MAX_AGENT_FILE} characters"
                )
    return files
