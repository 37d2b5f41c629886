"""The one `list-panes -a` format roost reads and its parsing into Panes, and the chained capture
of many screens in one call. Import-light: `roost ls` uses it on its fast path."""

from __future__ import annotations

from roost.core.pane import Pane

SEP = "\t"
TITLE_LIMIT = 64  # characters of a pane's title: its first one tells a spinner
FIELDS = (
    "session_id",
    "session_name",
    "window_id",
    "window_name",
    "window_index",
    "pane_id",
    "pane_pid",
    "pane_dead",
    "pane_dead_status",
    "pane_dead_signal",
    "roost_id",
    "roost_keeper",
    "roost_home",
    "server_pid",
    "window_activity",
    "pane_title",
)
FORMAT = SEP.join(
    [
        "#{session_id}",
        "#{session_name}",
        "#{window_id}",
        "#{window_name}",
        "#{window_index}",
        "#{pane_id}",
        "#{pane_pid}",
        "#{pane_dead}",
        "#{pane_dead_status}",
        "#{pane_dead_signal}",
        "#{@roost_id}",
        "#{@roost_keeper}",
        "#{@roost_home}",
        "#{pid}",
        "#{window_activity}",
        # Last, and cut short: the title is whatever the pane's program set (tmux drops its control
        # characters). It is only read, never handed back to tmux.
        f"#{{={TITLE_LIMIT}:pane_title}}",
    ]
)
CAPTURE_LINES = 40  # enough for a dialog; status patterns read the last 15 non-empty lines
# "no current target": a server whose last session is going away answers list-panes -a so
NO_SERVER = (
    "no server running",
    "error connecting to",
    "server exited unexpectedly",
    "no current target",
)
MARKER = "\x1e"  # ends each screen of a chained capture: a control character never starts a line


def rows(text: str) -> list[dict[str, str]]:
    """The listing's rows; the title, last, keeps any separator its program may have put in."""
    found = []
    for line in text.splitlines():
        parts = line.split(SEP, len(FIELDS) - 1)
        if len(parts) == len(FIELDS):
            found.append(dict(zip(FIELDS, parts, strict=True)))
    return found


def exit_status(row: dict[str, str]) -> int | None:
    """A dead pane's exit status; a death by signal N reads 128+N, as in shells."""
    if row["pane_dead"] != "1":
        return None
    if row["pane_dead_status"]:
        return int(row["pane_dead_status"])
    return 128 + int(row["pane_dead_signal"]) if row["pane_dead_signal"] else None


def to_pane(row: dict[str, str]) -> Pane:
    return Pane(
        session_id=row["session_id"],
        session_name=row["session_name"],
        window_id=row["window_id"],
        window_name=row["window_name"],
        window_index=int(row["window_index"] or 0),
        pane_id=row["pane_id"],
        pid=int(row["pane_pid"]) if row["pane_pid"] else None,
        dead=row["pane_dead"] == "1",
        dead_status=exit_status(row),
        agent_id=row["roost_id"],
        is_keeper=row["roost_keeper"] == "1",
        is_home=row["roost_home"] == "1",
        activity=_seconds(row["window_activity"]),
        title=row.get("pane_title", ""),
    )


def panes(text: str) -> list[Pane]:
    return [to_pane(row) for row in rows(text)]


def _seconds(text: str) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


COMMAND_BUDGET = 15_000  # bytes of argv per tmux call: tmux refuses a command list over ~16 KiB


def capture_args(pane_ids: list[str], marker: str) -> list[str]:
    """One tmux command list capturing many panes, each followed by a marker line: status for a
    hundred agents costs one tmux call, not a hundred. Short spellings (~45 bytes a pane) keep
    ~300 panes within one call."""
    args: list[str] = []
    for pane_id in pane_ids:
        args += [
            "capturep",
            f"-pJS-{CAPTURE_LINES}",
            f"-t{pane_id}",
            ";",
            "display",
            "-p",
            f"{marker}{pane_id}",
            ";",
        ]
    return args[:-1]


def capture_batches(pane_ids: list[str], marker: str) -> list[list[str]]:
    """Pane ids split so that each batch's command fits tmux's limit (usually one batch)."""
    batches: list[list[str]] = [[]]
    used = 0
    for pane_id in pane_ids:
        cost = sum(len(a.encode()) + 1 for a in capture_args([pane_id], marker)) + 2
        if batches[-1] and used + cost > COMMAND_BUDGET:
            batches.append([])
            used = 0
        batches[-1].append(pane_id)
        used += cost
    return [b for b in batches if b]


def split_captures(text: str, marker: str) -> dict[str, str]:
    found: dict[str, str] = {}
    chunk: list[str] = []
    for line in text.split("\n"):
        if line.startswith(marker):
            found[line[len(marker) :].strip()] = "\n".join(chunk)
            chunk = []
        else:
            chunk.append(line)
    return found
