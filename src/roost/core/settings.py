"""What roost reads from `$ROOST_HOME/config.toml`: one typed, frozen `Settings`, each key
declared once below (its type, default, check and meaning), checked where the file is read.

Pure: the parsed TOML in, the first problem out (with the line it sits on, when it can be found),
so a typo or a wrong type is one clear line naming the file, the line and the key instead of a
traceback deep inside some command. No module reads the raw table: `parse` makes the Settings
every operation gets (App.settings), the service parses a changed file again (live config).

    [tmux]
    bin = "/opt/tmux/bin/tmux"

    [providers.codex]
    bin = "/usr/local/bin/codex"

    [status.patterns.codex]
    waiting = ["Allow command?"]

    [restore]
    concurrency = 3
    stagger = 0.25

    [orchestration]          # agents that create agents (roost mcp)
    max_children = 8         # live children per agent
    max_tree = 32            # live agents per orchestration tree
    notify_sleeping = "wake" # a result for a hibernated/stopped parent: "wake" it, or "hold"

    [mcp]
    enabled = true           # give `roost mcp` to the agents roost starts

    [notify]                 # alerts to the person (alerts/rules.py): each channel optional
    command = ["notify-send", "roost"]   # an argv; title and body are appended
    ntfy = "https://ntfy.sh/my-topic"    # an HTTP POST (Title header, body text)
    webhook = "https://example.org/hook" # a JSON POST {"title", "body", "agent", "edge"}
    terminal = true          # OSC 777/9 and a bell from the TUI and `roost watch --notify`
    timeout = 5              # seconds one delivery may take
    [worktree]               # spawn --worktree
    root = "~/worktrees"     # default: $ROOST_HOME/worktrees (never inside the repository)
    branch_prefix = "roost/"
    setup_timeout = 300      # seconds .roost/worktree-setup may run (then it is killed)
    [prices."claude-sonnet-4-5"]  # $ per million tokens, over roost's table (usage/prices.py)
    input = 3.0
    output = 15.0            # also cache_write, cache_read
    [budget]
    max_live = 20            # agents running at once; beyond: the idle longest hibernate
    [web]                    # roost web, run by the roost service (docs/WEB.md)
    enabled = true
    bind = "127.0.0.1:7377"
    allow_remote = false     # needed for an address other machines reach
    allow_typing = false     # the typing token (web-typing-token) may type into terminals
    [push]                   # a phone's push (roost web pair, docs/WEB.md)
    url = "https://box.tailnet.ts.net"  # where phones reach roost web (links, ntfy's buttons)

    [ssh]                    # remote hosts (docs/HOSTS.md)
    command = "ssh -F ~/.ssh/roost_config"  # like GIT_SSH_COMMAND; $ROOST_SSH_COMMAND wins
    connect_timeout = 5      # seconds to reach a host, then it is unreachable
    timeout = 120            # seconds one remote command may take
    ls_timeout = 3           # seconds a host has for its agents (ls --all, the TUI, roost web)

    [recall]                 # roost search (docs/RECALL.md)
    index = false            # the service stops indexing conversations (default: true)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from roost.core import lsconfig
from roost.core.resuming import DEFAULT_GAP, DEFAULT_JITTER

PROVIDERS = ("claude", "codex", "gemini", "aider", "command")
STATUS_KINDS = ("waiting", "error", "working", "idle", "turn", "loading")  # core/status.py's
PRICE_KINDS = ("input", "output", "cache_write", "cache_read")  # usage/prices.py's
MAX_NOTIFY_TIMEOUT = 60
DEFAULT_BIND = "127.0.0.1:7377"
# Defaults the worktrees and hosts rooms use too: declared here, so that reading the config
# (roost ls's cold path) loads neither room.
DEFAULT_PREFIX = "roost/"
CONNECT_TIMEOUT = 5.0  # seconds: reaching a host (the master's connect), then it is unreachable
LS_TIMEOUT = 3.0  # seconds: a host's list of agents (ls --all, the TUI, the web), then it is late
COMMAND_TIMEOUT = 120.0  # seconds: one remote command (a spawn waits for its start to hold)

# A check: a value's problem ("must be ..."), or None when it is good.
Check = Callable[[object], "str | None"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in the config: the dotted key it is at, and what is wrong."""

    key: str
    message: str


def setting(default: Any, check: Check, meaning: str) -> Any:
    """A key of a section: its default, its check and what it means (`roost doctor`, docs)."""
    return field(default=default, metadata={"check": check, "meaning": meaning})


# ---- checks ----------------------------------------------------------------------------------
def _number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _whole(value: object) -> str | None:
    good = not isinstance(value, bool) and isinstance(value, int) and value >= 1
    return None if good else f"must be a whole number of at least 1, not {_shown(value)}"


def _seconds(value: object) -> str | None:
    good = _number(value) and value >= 0  # type: ignore[operator]
    return None if good else f"must be a number of seconds, 0 or more, not {_shown(value)}"


def _seconds_above_0(value: object) -> str | None:
    good = _number(value) and value > 0  # type: ignore[operator]
    return None if good else f"must be a number of seconds above 0, not {_shown(value)}"


def _notify_timeout(value: object) -> str | None:
    good = _number(value) and 0 < value <= MAX_NOTIFY_TIMEOUT  # type: ignore[operator]
    return (
        None
        if good
        else f"must be a number of seconds above 0 and at most {MAX_NOTIFY_TIMEOUT}, "
        f"not {_shown(value)}"
    )


def _flag(value: object) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, not {_shown(value)}"


def _text(value: object) -> str | None:
    good = isinstance(value, str) and bool(value)
    return None if good else f"must be a non-empty string, not {_shown(value)}"


def _one_of(*choices: str) -> Check:
    wanted = " or ".join(f'"{c}"' for c in choices)

    def check(value: object) -> str | None:
        return None if value in choices else f"must be {wanted}, not {_shown(value)}"

    return check


def _argv(value: object) -> str | None:
    good = isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)
    return (
        None
        if good
        else "must be a list of non-empty strings (an argv, run without a shell), "
        f"not {_shown(value)}"
    )


def _url(value: object) -> str | None:
    good = isinstance(value, str) and is_url(value)
    return None if good else f"must be an http:// or https:// URL, not {_shown(value)}"


def _bind(value: object) -> str | None:
    from roost.core.errors import RoostError
    from roost.core.web import parse_bind

    if isinstance(value, str) and value:
        try:
            parse_bind(value)
            return None
        except RoostError:
            pass
    return f"must be a string HOST:PORT, not {_shown(value)}"


# ---- the sections, each key declared once ----------------------------------------------------
@dataclass(frozen=True, slots=True)
class TmuxSettings:
    bin: str | None = setting(None, _text, "the tmux roost runs (default: tmux on PATH)")


@dataclass(frozen=True, slots=True)
class RestoreSettings:
    concurrency: int = setting(3, _whole, "agents `roost restore` starts at once")
    stagger: float = setting(0.25, _seconds, "seconds between two starts of a restore")
    # CLIs refresh a shared login at start; single-use refresh tokens make simultaneous
    # refreshes log each other out (issue 23, part 3)
    account_gap: float = setting(0.5, _seconds, "seconds between two starts of one account")


@dataclass(frozen=True, slots=True)
class OrchestrationSettings:
    max_children: int = setting(8, _whole, "live children per agent")
    max_tree: int = setting(32, _whole, "live agents per orchestration tree")
    notify_sleeping: str = setting(
        "wake", _one_of("wake", "hold"), "a result for a hibernated or stopped parent"
    )


@dataclass(frozen=True, slots=True)
class McpSettings:
    enabled: bool = setting(True, _flag, "give roost's MCP tools to the agents roost starts")


@dataclass(frozen=True, slots=True)
class NotifySettings:
    command: tuple[str, ...] | None = setting(
        None, _argv, "an argv run for each alert, its title and body appended"
    )
    ntfy: str | None = setting(None, _url, "an ntfy topic URL alerts are POSTed to")
    webhook: str | None = setting(None, _url, "a URL alerts are POSTed to as JSON")
    terminal: bool = setting(True, _flag, "OSC 777/9 and a bell from the TUI and roost watch")
    timeout: float = setting(5.0, _notify_timeout, "seconds one delivery may take")


@dataclass(frozen=True, slots=True)
class WorktreeSettings:
    root: str | None = setting(None, _text, "where worktrees go (default: ROOST_HOME/worktrees)")
    branch_prefix: str = setting(DEFAULT_PREFIX, _text, "an agent's branch: this + its name")
    setup_timeout: float = setting(
        300.0, _seconds_above_0, "seconds .roost/worktree-setup may run (then it is killed)"
    )


@dataclass(frozen=True, slots=True)
class LimitsSettings:
    on_limit: str = setting(
        "off", _one_of("off", "resume"), "resume an agent at its usage limit's reset"
    )
    jitter: float = setting(DEFAULT_JITTER, _seconds, "the most a resume waits after the reset")
    gap: float = setting(DEFAULT_GAP, _seconds, "seconds between two resumes of one account")


@dataclass(frozen=True, slots=True)
class BudgetSettings:
    max_live: int | None = setting(
        None, _whole, "agents running at once; beyond it the idle longest hibernate"
    )


@dataclass(frozen=True, slots=True)
class WebSettings:
    enabled: bool = setting(False, _flag, "the service runs roost web")
    allow_remote: bool = setting(False, _flag, "needed for an address other machines reach")
    allow_typing: bool = setting(False, _flag, "the typing token may type into terminals")
    bind: str = setting(DEFAULT_BIND, _bind, "HOST:PORT roost web listens on")


@dataclass(frozen=True, slots=True)
class PushSettings:
    url: str | None = setting(
        None, _url, "where phones reach roost web: pairing links and ntfy's answer buttons"
    )


@dataclass(frozen=True, slots=True)
class SshSettings:
    command: str | None = setting(None, _text, "the ssh command (like GIT_SSH_COMMAND)")
    timeout: float = setting(
        COMMAND_TIMEOUT, _seconds_above_0, "seconds one remote command may take"
    )
    connect_timeout: float = setting(
        CONNECT_TIMEOUT, _seconds_above_0, "seconds to reach a host, then it is unreachable"
    )
    ls_timeout: float = setting(
        LS_TIMEOUT, _seconds_above_0, "seconds a host has to list its agents"
    )


def _check_command(value: object) -> str | None:
    """A command line split as a shell would split its words (shlex), run without one."""
    import shlex

    if isinstance(value, str) and value.strip():
        try:
            if shlex.split(value):
                return None
        except ValueError:
            pass
    return f'must be a command line such as "pytest -q" (run without a shell), not {_shown(value)}'


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    check: str | None = setting(
        None, _check_command, "what `roost compare --check` runs in each worktree (no shell)"
    )
    check_timeout: float = setting(
        600.0, _seconds_above_0, "seconds the check may run in one worktree before it is killed"
    )


@dataclass(frozen=True, slots=True)
class RecallSettings:
    index: bool = setting(True, _flag, "the service indexes every conversation (roost search)")
    agents_see: str = setting(
        "subtree",
        _one_of("subtree", "all"),
        "what an agent's search_conversations (MCP) searches: its subtree, or every agent",
    )


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    bin: str | None = setting(None, _text, "the CLI's executable")


# The fixed sections, by their table's name.
SECTIONS: dict[str, type] = {
    "tmux": TmuxSettings,
    "restore": RestoreSettings,
    "orchestration": OrchestrationSettings,
    "mcp": McpSettings,
    "notify": NotifySettings,
    "worktree": WorktreeSettings,
    "limits": LimitsSettings,
    "budget": BudgetSettings,
    "web": WebSettings,
    "push": PushSettings,
    "ssh": SshSettings,
    "recall": RecallSettings,
    "review": ReviewSettings,
}
TABLES = (*SECTIONS, "providers", "status", "prices")


@dataclass(frozen=True, slots=True)
class Settings:
    """config.toml, checked and typed, defaults filled in. `Settings()` is an empty file's."""

    tmux: TmuxSettings = field(default_factory=TmuxSettings)
    restore: RestoreSettings = field(default_factory=RestoreSettings)
    orchestration: OrchestrationSettings = field(default_factory=OrchestrationSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    worktree: WorktreeSettings = field(default_factory=WorktreeSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    web: WebSettings = field(default_factory=WebSettings)
    push: PushSettings = field(default_factory=PushSettings)
    ssh: SshSettings = field(default_factory=SshSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)
    providers: Mapping[str, ProviderSettings] = field(default_factory=dict)
    # status.patterns: provider -> status kind -> the texts that show it (core/status.py)
    patterns: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    # prices."model": kind -> dollars per million tokens, over roost's table (usage/prices.py)
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def provider_bin(self, provider: str) -> str | None:
        found = self.providers.get(provider)
        return found.bin if found is not None else None


class Invalid(ValueError):
    """A config with problems: the first is the one a person is told."""

    def __init__(self, found: list[Problem]) -> None:
        super().__init__(f"{found[0].key} {found[0].message}")
        self.problems = found


def parse(data: Mapping[str, Any]) -> Settings:
    """The Settings of a parsed config.toml; Invalid when it has a problem.

    >>> parse({"restore": {"concurrency": 2}}).restore.concurrency
    2
    >>> parse({}).ssh.ls_timeout, parse({}).web.bind
    (3.0, '127.0.0.1:7377')
    >>> parse({"budget": {"max_live": 0}})
    Traceback (most recent call last):
    ...
    roost.core.settings.Invalid: budget.max_live must be a whole number of at least 1, not 0
    """
    found = problems(data)
    if found:
        raise Invalid(found)
    made: dict[str, Any] = {
        name: _section(cls, data.get(name) or {}) for name, cls in SECTIONS.items()
    }
    return Settings(
        **made,
        providers={
            name: _section(ProviderSettings, table)
            for name, table in (data.get("providers") or {}).items()
        },
        patterns=lsconfig.patterns(data),
        prices=lsconfig.prices(data),
    )


def _section(cls: type, table: Mapping[str, Any]) -> Any:
    values = {}
    for f in fields(cls):
        if f.name in table:
            value = table[f.name]
            if isinstance(value, list):
                value = tuple(value)
            elif isinstance(value, int) and not isinstance(value, bool) and f.type == "float":
                value = float(value)
            values[f.name] = value
    return cls(**values)


def meanings() -> list[tuple[str, object, str]]:
    """(dotted key, default, meaning) of every fixed key, in declaration order."""
    return [
        (f"{name}.{f.name}", None if f.default is MISSING else f.default, f.metadata["meaning"])
        for name, cls in SECTIONS.items()
        for f in fields(cls)
    ]


# ---- the checker -----------------------------------------------------------------------------
def problems(data: Mapping[str, Any]) -> list[Problem]:
    """Every unknown key and wrongly typed value, in file order.

    >>> problems({"restore": {"concurrency": 2}})
    []
    >>> problems({"restore": {"concurrency": "2"}})
    [Problem(key='restore.concurrency', message='must be a whole number of at least 1, not "2"')]
    """
    found: list[Problem] = []
    for key, value in data.items():
        if key not in TABLES:
            found.append(Problem(key, f"is not a setting roost knows (known: {', '.join(TABLES)})"))
        elif not isinstance(value, dict):
            found.append(Problem(key, f"must be a table ([{key}]), not {_shown(value)}"))
        elif key in SECTIONS:
            found += _keys(SECTIONS[key], key, value)
        else:
            found += _DYNAMIC[key](value)
    return found


def _keys(cls: type, prefix: str, table: Mapping[str, Any]) -> list[Problem]:
    """A fixed section's problems: unknown keys, and each known key's own check."""
    declared = {f.name: f for f in fields(cls)}
    found: list[Problem] = []
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in declared:
            known = ", ".join(f"{prefix}.{k}" for k in declared)
            found.append(Problem(key, f"is not a setting roost knows (known: {known})"))
        else:
            message = declared[name].metadata["check"](value)
            if message is not None:
                found.append(Problem(key, message))
    return found


def _providers(table: dict[str, object]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"providers.{name}"
        if name not in PROVIDERS:
            found.append(Problem(key, f"is not a provider (known: {', '.join(PROVIDERS)})"))
        elif not isinstance(value, dict):
            found.append(Problem(key, f"must be a table ([{key}]), not {_shown(value)}"))
        else:
            found += _keys(ProviderSettings, key, value)
    return found


def _status(table: dict[str, object]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        if name != "patterns":
            found.append(
                Problem(f"status.{name}", "is not a setting roost knows (known: status.patterns)")
            )
        elif not isinstance(value, dict):
            found.append(Problem("status.patterns", f"must be a table, not {_shown(value)}"))
        else:
            for provider, kinds in value.items():
                found += _provider_patterns(f"status.patterns.{provider}", provider, kinds)
    return found


def _provider_patterns(key: str, provider: str, kinds: object) -> list[Problem]:
    if provider not in PROVIDERS:
        return [Problem(key, f"is not a provider (known: {', '.join(PROVIDERS)})")]
    if not isinstance(kinds, dict):
        return [Problem(key, f"must be a table ([{key}]), not {_shown(kinds)}")]
    found: list[Problem] = []
    for kind, patterns in kinds.items():
        where = f"{key}.{kind}"
        if kind not in STATUS_KINDS:
            found.append(Problem(where, f"is not a status kind (known: {', '.join(STATUS_KINDS)})"))
        elif not (isinstance(patterns, list) and all(isinstance(p, str) and p for p in patterns)):
            found.append(
                Problem(where, f"must be a list of non-empty strings, not {_shown(patterns)}")
            )
    return found


def _prices(table: dict[str, object]) -> list[Problem]:
    """`[prices."model"]`: dollars per million tokens over roost's own table (issue 23).

    >>> _prices({"m": {"input": -1, "outptu": 2}})[1]
    Problem(key='prices.m.outptu', message='is not a price (known: input, output, cache_write, \
cache_read)')
    >>> _prices({"m": {"output": float("nan")}})[0].message
    'must be a number of dollars per million tokens, at least 0, not nan'
    """
    from roost.usage.prices import is_price

    found: list[Problem] = []
    for model, value in table.items():
        if not isinstance(value, dict):
            found.append(Problem(f"prices.{model}", f"must be a table, not {_shown(value)}"))
            continue
        for kind, price in value.items():
            key = f"prices.{model}.{kind}"
            if kind not in PRICE_KINDS:
                found.append(Problem(key, f"is not a price (known: {', '.join(PRICE_KINDS)})"))
            elif not is_price(price):  # nor TOML's nan, inf (issue 35)
                found.append(
                    Problem(
                        key,
                        f"must be a number of dollars per million tokens, at least 0, not "
                        f"{_shown(price)}",
                    )
                )
    return found


_DYNAMIC: dict[str, Callable[[dict[str, object]], list[Problem]]] = {
    "providers": _providers,
    "status": _status,
    "prices": _prices,
}


def is_url(text: str) -> bool:
    """An http(s) URL with a host and no spaces or control characters.

    >>> is_url("https://ntfy.sh/topic"), is_url("http://127.0.0.1:8080/x"), is_url("https://")
    (True, True, False)
    >>> is_url("file:///etc/passwd"), is_url("http://a b"), is_url("http://a\\nb")
    (False, False, False)
    """
    scheme, sep, rest = text.partition("://")
    host = rest.split("/", 1)[0].split("?", 1)[0]
    return (
        sep == "://"
        and scheme in ("http", "https")
        and bool(host)
        and not any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text)
    )


def _shown(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return repr(value).lower() if isinstance(value, bool) else repr(value)


def line_of(text: str, key: str) -> int | None:
    """The 1-based line where dotted `key` is set in the TOML `text` (best effort: the key's own
    line inside its table, else its table's header), or None.

    >>> line_of("[restore]\\nstagger = 1\\nconcurrency = 'x'\\n", "restore.concurrency")
    3
    """
    import re  # only when there is a problem to report: `roost ls` checks without it

    header_line = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+")
    parts = key.split(".")
    table_line: int | None = None
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = header_line.match(line)
        if header:
            table = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
            if table == key:
                return number
            if table == ".".join(parts[:-1]) and table_line is None:
                table_line = number
            continue
        assigned = re.match(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=", line)
        if assigned:
            name = ".".join(p.strip().strip("\"'") for p in assigned.group(1).split("."))
            if ".".join(filter(None, (table, name))) == key:
                return number
    return table_line
