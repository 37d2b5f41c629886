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
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `roost ls` checks the config without importing typing
if TYPE_CHECKING:
    from typing import Any

PROVIDERS = ("claude", "codex", "gemini", "aider", "command")
STATUS_KINDS = ("waiting", "working", "error", "idle", "turn")  # core/status.py's
SECTIONS = ("tmux", "providers", "status", "restore")


class Problem:
    """One thing wrong in the config: the dotted key it is at, and what is wrong."""

    __slots__ = ("key", "message")

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and (self.key, self.message) == (other.key,
                                                                            other.message)

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
            found.append(Problem(key, f"is not a setting roost knows (known: "
                                      f"{', '.join(SECTIONS)})"))
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
            found.append(Problem(f"status.{name}", "is not a setting roost knows (known: "
                                                   "status.patterns)"))
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
                        found.append(Problem(where, f"is not a status kind (known: "
                                                    f"{', '.join(STATUS_KINDS)})"))
                    elif not (isinstance(patterns, list) and all(
                            isinstance(p, str) and p for p in patterns)):
                        found.append(Problem(where, "must be a list of non-empty strings, "
                                                    f"not {_shown(patterns)}"))
    return found


def _restore(table: dict[str, Any]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"restore.{name}"
        if name == "concurrency":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                found.append(Problem(key, "must be a whole number of at least 1, "
                                          f"not {_shown(value)}"))
        elif name == "stagger":
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                found.append(Problem(key, f"must be a number of seconds, 0 or more, "
                                          f"not {_shown(value)}"))
        else:
            found.append(Problem(key, "is not a setting roost knows (known: "
                                      "restore.concurrency, restore.stagger)"))
    return found


def _strings_only(table: dict[str, Any], prefix: str, known: tuple[str, ...]) -> list[Problem]:
    found: list[Problem] = []
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if name not in known:
            found.append(Problem(key, f"is not a setting roost knows (known: "
                                      f"{', '.join(f'{prefix}.{k}' for k in known)})"))
        elif not isinstance(value, str) or not value:
            found.append(Problem(key, f"must be a non-empty string, not {_shown(value)}"))
    return found


_CHECKS = {"tmux": _tmux, "providers": _providers, "status": _status, "restore": _restore}


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
