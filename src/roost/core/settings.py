"""What roost reads from `$ROOST_HOME/config.toml`, checked once where the file is read.

Pure: the parsed TOML in, the first problem out (with the line it sits on, when it can be found),
so a typo or a wrong type is one clear line naming the file, the line and the key instead of a
traceback deep inside some command.

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

    [notify]                 # alerts to the person (core/alerts.py): each channel optional
    command = ["notify-send", "roost"]   # an argv; title and body are appended
    ntfy = "https://ntfy.sh/my-topic"    # an HTTP POST (Title header, body text)
    webhook = "https://example.org/hook" # a JSON POST {"title", "body", "agent", "edge"}
    terminal = true          # OSC 777/9 and a bell from the TUI and `roost watch --notify`
    timeout = 5              # seconds one delivery may take
    [worktree]               # spawn --worktree
    root = "~/worktrees"     # default: $ROOST_HOME/worktrees (never inside the repository)
    branch_prefix = "roost/"
    setup_timeout = 300      # seconds .roost/worktree-setup may run (then it is killed)
    [prices."claude-sonnet-4-5"]  # $ per million tokens, over roost's table (core/prices.py)
    input = 3.0
    output = 15.0            # also cache_write, cache_read
    [budget]
    max_live = 20            # agents running at once; beyond: the idle longest hibernate
    [web]                    # roost web, run by the roost service (docs/WEB.md)
    enabled = true
    bind = "127.0.0.1:7377"
    allow_remote = false     # needed for an address other machines reach
    allow_typing = false     # the typing token (web-typing-token) may type into terminals

    [ssh]                    # remote hosts (docs/HOSTS.md)
    command = "ssh -F ~/.ssh/roost_config"  # like GIT_SSH_COMMAND; $ROOST_SSH_COMMAND wins
    connect_timeout = 5      # seconds to reach a host, then it is unreachable
    timeout = 120            # seconds one remote command may take
    ls_timeout = 3           # seconds a host has for its agents (ls --all, the TUI, roost web)
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `roost ls` checks the config without importing typing
if TYPE_CHECKING:
    from typing import Any

PROVIDERS = ("claude", "codex", "gemini", "aider", "command")
STATUS_KINDS = ("waiting", "error", "working", "idle", "turn", "loading")  # core/status.py's
SECTIONS = (
    "tmux",
    "providers",
    "status",
    "restore",
    "orchestration",
    "mcp",
    "notify",
    "worktree",
    "limits",  # issue 23 part 2 (branch limits2)
    "prices",  # issue 23 part 4 (branch usage)
    "budget",
    "web",  # issue 25 (branch web)
    "ssh",  # issue 24 (branch hosts)
)
PRICE_KINDS = ("input", "output", "cache_write", "cache_read")  # core/prices.py's
WEB_FLAGS = ("enabled", "allow_remote", "allow_typing")
NOTIFY_SLEEPING = ("wake", "hold")


class Problem:
    """One thing wrong in the config: the dotted key it is at, and what is wrong."""

    __slots__ = ("key", "message")

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and (self.key, self.message) == (other.key, other.message)

    def __repr__(self) -> str:
        return f"Problem({self.key!r}, {self.message!r})"


def problems(data: dict[str, Any]) -> list[Problem]:
    """Every unknown key and wrongly typed value, in file order.

    >>> problems({"restore": {"concurrency": 2}})
    []
    >>> problems({"restore": {"concurrency": "2"}})
    [Problem('restore.concurrency', 'must be a whole number of at least 1, not "2"')]
    """
    found: list[Problem] = []
    for key, value in data.items():
        if key not in SECTIONS:
            found.append(
                Problem(key, f"is not a setting roost knows (known: {', '.join(SECTIONS)})")
            )
        elif not isinstance(value, dict):
            found.append(Problem(key, f"must be a table ([{key}]), not {_shown(value)}"))
        else:
            found += _CHECKS[key](value)
    return found


def _tmux(table: dict[str, Any]) -> list[Problem]:
    return _strings_only(table, "tmux", ("bin",))


def _providers(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"providers.{name}"
        if name not in PROVIDERS:
            found.append(Problem(key, f"is not a provider (known: {', '.join(PROVIDERS)})"))
        elif not isinstance(value, dict):
            found.append(Problem(key, f"must be a table ([{key}]), not {_shown(value)}"))
        else:
            found += _strings_only(value, key, ("bin",))
    return found


def _status(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        if name != "patterns":
            found.append(
                Problem(f"status.{name}", "is not a setting roost knows (known: status.patterns)")
            )
            continue
        if not isinstance(value, dict):
            found.append(Problem("status.patterns", f"must be a table, not {_shown(value)}"))
            continue
        for provider, kinds in value.items():
            key = f"status.patterns.{provider}"
            if provider not in PROVIDERS:
                found.append(Problem(key, f"is not a provider (known: {', '.join(PROVIDERS)})"))
            elif not isinstance(kinds, dict):
                found.append(Problem(key, f"must be a table ([{key}]), not {_shown(kinds)}"))
            else:
                for kind, patterns in kinds.items():
                    where = f"{key}.{kind}"
                    if kind not in STATUS_KINDS:
                        found.append(
                            Problem(
                                where, f"is not a status kind (known: {', '.join(STATUS_KINDS)})"
                            )
                        )
                    elif not (
                        isinstance(patterns, list)
                        and all(isinstance(p, str) and p for p in patterns)
                    ):
                        found.append(
                            Problem(
                                where,
                                f"must be a list of non-empty strings, not {_shown(patterns)}",
                            )
                        )
    return found


def _restore(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"restore.{name}"
        if name == "concurrency":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                found.append(
                    Problem(key, f"must be a whole number of at least 1, not {_shown(value)}")
                )
        elif name in ("stagger", "account_gap"):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                found.append(
                    Problem(key, f"must be a number of seconds, 0 or more, not {_shown(value)}")
                )
        else:
            found.append(
                Problem(
                    key,
                    "is not a setting roost knows (known: restore.concurrency, restore.stagger, "
                    "restore.account_gap)",
                )
            )
    return found


def _strings_only(table: dict[str, Any], prefix: str, known: tuple[str, ...]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in known:
            found.append(
                Problem(
                    key,
                    f"is not a setting roost knows (known: "
                    f"{', '.join(f'{prefix}.{k}' for k in known)})",
                )
            )
        elif not isinstance(value, str) or not value:
            found.append(Problem(key, f"must be a non-empty string, not {_shown(value)}"))
    return found


def _orchestration(table: dict[str, Any]) -> list[Problem]:
    """
    >>> _orchestration({"max_tree": 0, "notify_sleeping": "poke"})
    [Problem('orchestration.max_tree', 'must be a whole number of at least 1, not 0'), \
Problem('orchestration.notify_sleeping', 'must be "wake" or "hold", not "poke"')]
    """
    found: list[Problem] = []
    for name, value in table.items():
        key = f"orchestration.{name}"
        if name in ("max_children", "max_tree"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                found.append(
                    Problem(key, f"must be a whole number of at least 1, not {_shown(value)}")
                )
        elif name == "notify_sleeping":
            if value not in NOTIFY_SLEEPING:
                found.append(Problem(key, f'must be "wake" or "hold", not {_shown(value)}'))
        else:
            found.append(
                Problem(
                    key,
                    "is not a setting roost knows (known: "
                    "orchestration.max_children, orchestration.max_tree, "
                    "orchestration.notify_sleeping)",
                )
            )
    return found


def _mcp(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        if name != "enabled":
            found.append(
                Problem(f"mcp.{name}", "is not a setting roost knows (known: mcp.enabled)")
            )
        elif not isinstance(value, bool):
            found.append(Problem("mcp.enabled", f"must be true or false, not {_shown(value)}"))
    return found


def _web(table: dict[str, Any]) -> list[Problem]:
    """[web]: its flags are booleans, its bind a string (core/web.parse_bind reads it).

    >>> _web({"enabled": "yes", "bind": 7377, "port": 1})
    [Problem('web.enabled', 'must be true or false, not "yes"'), \
Problem('web.bind', 'must be a string HOST:PORT, not 7377'), \
Problem('web.port', 'is not a setting roost knows (known: web.enabled, web.allow_remote, \
web.allow_typing, web.bind)')]
    """
    found: list[Problem] = []
    for name, value in table.items():
        key = f"web.{name}"
        if name == "bind":
            if not isinstance(value, str) or not value:
                found.append(Problem(key, f"must be a string HOST:PORT, not {_shown(value)}"))
        elif name not in WEB_FLAGS:
            known = ", ".join(f"web.{k}" for k in (*WEB_FLAGS, "bind"))
            found.append(Problem(key, f"is not a setting roost knows (known: {known})"))
        elif not isinstance(value, bool):
            found.append(Problem(key, f"must be true or false, not {_shown(value)}"))
    return found


SETUP_TIMEOUT = 300.0  # seconds: long enough for a dependency install, short of forever


def _worktree(table: dict[str, Any]) -> list[Problem]:
    """
    >>> _worktree({"setup_timeout": 0})
    [Problem('worktree.setup_timeout', 'must be a number of seconds above 0, not 0')]
    """
    strings = {k: v for k, v in table.items() if k != "setup_timeout"}
    known = ("root", "branch_prefix", "setup_timeout")
    found = _strings_only(strings, "worktree", known)
    if "setup_timeout" in table:
        value = table["setup_timeout"]
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            found.append(
                Problem(
                    "worktree.setup_timeout",
                    f"must be a number of seconds above 0, not {_shown(value)}",
                )
            )
    return found


def setup_timeout(data: dict[str, Any]) -> float:
    """How long a worktree's setup script may run (`[worktree] setup_timeout`, checked).

    >>> setup_timeout({}), setup_timeout({"worktree": {"setup_timeout": 2}})
    (300.0, 2.0)
    """
    return float((data.get("worktree") or {}).get("setup_timeout", SETUP_TIMEOUT))


def _ssh(table: dict[str, Any]) -> list[Problem]:
    """
    >>> _ssh({"timeout": -1, "command": ""})[0].message
    'must be a number of seconds above 0, not -1'
    """
    limits = ("timeout", "connect_timeout", "ls_timeout")
    found = _strings_only(
        {k: v for k, v in table.items() if k not in limits}, "ssh", ("command", *limits)
    )
    for key in limits:
        value = table.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            found.insert(
                0,
                Problem(f"ssh.{key}", f"must be a number of seconds above 0, not {_shown(value)}"),
            )
    return found


def orchestration(data: dict[str, Any]) -> tuple[int, int, str]:
    """max_children, max_tree and notify_sleeping from a checked config (defaults filled in).

    >>> orchestration({"orchestration": {"max_tree": 5}})
    (8, 5, 'wake')
    """
    table = data.get("orchestration") or {}
    return (
        int(table.get("max_children", 8)),
        int(table.get("max_tree", 32)),
        str(table.get("notify_sleeping", "wake")),
    )


def mcp_enabled(data: dict[str, Any]) -> bool:
    """Whether agents get `roost mcp` (config.toml `[mcp] enabled`, default true)."""
    return bool((data.get("mcp") or {}).get("enabled", True))


NOTIFY_KEYS = ("command", "ntfy", "webhook", "terminal", "timeout")
MAX_NOTIFY_TIMEOUT = 60


def _notify(table: dict[str, Any]) -> list[Problem]:
    """
    >>> _notify({"command": "notify-send roost", "ntfy": "ntfy.sh/x", "timeout": 0})
    [Problem('notify.command', 'must be a list of non-empty strings (an argv, run without a \
shell), not "notify-send roost"'), Problem('notify.ntfy', 'must be an http:// or https:// URL, \
not "ntfy.sh/x"'), Problem('notify.timeout', 'must be a number of seconds above 0 and at most \
60, not 0')]
    """
    found: list[Problem] = []
    for name, value in table.items():
        key = f"notify.{name}"
        if name == "command":
            if not (
                isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)
            ):
                found.append(
                    Problem(
                        key,
                        "must be a list of non-empty strings (an argv, run without a shell), "
                        f"not {_shown(value)}",
                    )
                )
        elif name in ("ntfy", "webhook"):
            if not (isinstance(value, str) and is_url(value)):
                found.append(
                    Problem(key, f"must be an http:// or https:// URL, not {_shown(value)}")
                )
        elif name == "terminal":
            if not isinstance(value, bool):
                found.append(Problem(key, f"must be true or false, not {_shown(value)}"))
        elif name == "timeout":
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 < value <= MAX_NOTIFY_TIMEOUT
            ):
                found.append(
                    Problem(
                        key,
                        f"must be a number of seconds above 0 and at most {MAX_NOTIFY_TIMEOUT}, "
                        f"not {_shown(value)}",
                    )
                )
        else:
            found.append(
                Problem(
                    key,
                    "is not a setting roost knows (known: "
                    f"{', '.join(f'notify.{k}' for k in NOTIFY_KEYS)})",
                )
            )
    return found


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


def notify(data: dict[str, Any]) -> dict[str, Any]:
    """The `[notify]` table of a checked config, defaults filled in (terminal on, 5 s).

    >>> notify({})
    {'command': None, 'ntfy': None, 'webhook': None, 'terminal': True, 'timeout': 5.0}
    """
    table = data.get("notify") or {}
    return {
        "command": list(table["command"]) if "command" in table else None,
        "ntfy": table.get("ntfy"),
        "webhook": table.get("webhook"),
        "terminal": bool(table.get("terminal", True)),
        "timeout": float(table.get("timeout", 5)),
    }


def _limits(table: dict[str, Any]) -> list[Problem]:
    """[limits]: resume at a usage limit's reset (core/resuming.py).

    >>> _limits({"on_limit": "resume", "gap": 10})
    []
    >>> _limits({"on_limit": "yes", "jitter": -1})
    [Problem('limits.on_limit', 'must be "off" or "resume", not "yes"'), \
Problem('limits.jitter', 'must be a number of seconds, 0 or more, not -1')]
    """
    found: list[Problem] = []
    for name, value in table.items():
        key = f"limits.{name}"
        if name == "on_limit":
            if value not in ("off", "resume"):
                found.append(Problem(key, f'must be "off" or "resume", not {_shown(value)}'))
        elif name in ("jitter", "gap"):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                found.append(
                    Problem(key, f"must be a number of seconds, 0 or more, not {_shown(value)}")
                )
        else:
            found.append(
                Problem(
                    key,
                    "is not a setting roost knows (known: limits.on_limit, limits.jitter, "
                    "limits.gap)",
                )
            )
    return found


def _prices(table: dict[str, Any]) -> list[Problem]:
    """`[prices."model"]`: dollars per million tokens over roost's own table (issue 23).

    >>> _prices({"m": {"input": -1, "outptu": 2}})
    [Problem('prices.m.input', 'must be a number of dollars per million tokens, at least 0, \
not -1'), Problem('prices.m.outptu', 'is not a price (known: input, output, cache_write, \
cache_read)')]
    >>> _prices({"m": {"output": float("nan")}})[0].message
    'must be a number of dollars per million tokens, at least 0, not nan'
    """
    from roost.core.prices import is_price

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


def _budget(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"budget.{name}"
        if name != "max_live":
            found.append(Problem(key, "is not a setting roost knows (known: budget.max_live)"))
        elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
            found.append(Problem(key, f"must be a whole number of at least 1, not {_shown(value)}"))
    return found


def max_live(data: dict[str, Any]) -> int | None:
    """`[budget] max_live`: how many agents may run at once (None: no limit)."""
    value = data.get("budget", {}).get("max_live")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_CHECKS = {
    "tmux": _tmux,
    "providers": _providers,
    "status": _status,
    "restore": _restore,
    "orchestration": _orchestration,
    "mcp": _mcp,
    "notify": _notify,
    "worktree": _worktree,
    "limits": _limits,
    "prices": _prices,
    "budget": _budget,
    "web": _web,
    "ssh": _ssh,
}


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
