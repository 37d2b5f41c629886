"""What the agent list shows, in what order, and the selected agent's details: pure, tested
without Textual.

Groups: Pinned (in pin order), then each tab (its tiles in tile order), then Parked, then Buried
(collapsed unless opened). Inside a group, an agent whose parent (linked or orchestration) is in
the same group is listed under it, indented.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from rich.markup import escape

from roost.core import present
from roost.core.observation import Observation

NEEDS_YOU = ("waiting", "error")
BADGE_STYLE = {
    "working": "bold yellow", "idle": "green", "waiting": "bold white on red",
    "error": "bold white on magenta",
    "starting": "cyan", "exited": "red", "failed": "bold red", "stopped": "dim",
    "lost": "italic yellow",
    "hibernated": "dim italic", "unknown": "magenta",
}


STATUS_WIDTH = 14  # the status column: a status and its reason, cut to fit (the badge pads 2)
ACTIVE_WIDTH = 6  # "active": an age like 59m or 12d
NAME_LEAST = 10  # the name column never gets narrower than this
CELL_PADDING = 2  # a DataTable cell's padding, left and right
SCROLLBAR = 2  # kept free for the list's vertical scrollbar


def name_room(table_width: int, provider_width: int) -> int:
    """How wide the name column may be so that provider, status and age stay on screen in a
    list `table_width` columns wide (0: not laid out yet, no limit); longer names are cut.

    >>> name_room(66, 8), name_room(0, 8), name_room(30, 8)
    (26, 64, 10)
    """
    if table_width <= 0:
        return 64
    others = provider_width + STATUS_WIDTH + 2 + ACTIVE_WIDTH + 4 * CELL_PADDING + SCROLLBAR
    return max(NAME_LEAST, table_width - others)


@dataclass(frozen=True, slots=True)
class Row:
    key: str  # agent id, or "group:<name>"
    label: str  # group title, or the agent's name
    depth: int = 0
    item: Observation | None = None  # the agent; None for a group header
    count: int = 0  # agents under a group header


def ago(iso: str | None, now: datetime | None = None) -> str:
    if not iso:
        return "-"
    seconds = ((now or datetime.now(UTC)) - datetime.fromisoformat(iso)).total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def fit(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut.

    >>> fit("waiting: Do you want to proceed?", 12), fit("idle", 12)
    ('waiting: Do…', 'idle')
    """
    return text if len(text) <= width else text[:width - 1] + "…"


def screen_tail(text: str, height: int) -> str:
    r"""The bottom `height` lines of an agent's screen, blank lines below its last text dropped:
    the prompt and any dialog waiting for the user sit at the bottom.

    >>> screen_tail("1\n2\n3\n❯ \n\n\n", 2)
    '3\n❯'
    """
    lines = text.rstrip().split("\n")
    return "\n".join(lines[-height:]) if height > 0 else ""


def counts(items: list[Observation]) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in items:
        key = item.status or "unknown"
        found[key] = found.get(key, 0) + 1
    return found


def header_text(items: list[Observation]) -> str:
    c = counts(items)
    need = sum(c.get(s, 0) for s in NEEDS_YOU)
    parts = [f"{n} {s}" for s, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]
    return (f"{len(items)} agents" + (": " + ", ".join(parts) if parts else "") +
            (f"  ·  {need} need you" if need else ""))


def _nest(members: list[Observation]) -> list[tuple[int, Observation]]:
    """Children under their parents (within the group), keeping the given order otherwise."""
    names = {m.agent.name for m in members}

    def parent(m: Observation) -> str | None:
        for name in (m.agent.linked_parent, m.agent.orchestration_parent):
            if name in names and name != m.agent.name:
                return name
        return None

    kids: dict[str | None, list[Observation]] = {}
    for m in members:
        kids.setdefault(parent(m), []).append(m)
    out: list[tuple[int, Observation]] = []
    seen: set[str] = set()

    def walk(m: Observation, depth: int) -> None:
        if m.agent.name in seen:
            return
        seen.add(m.agent.name)
        out.append((depth, m))
        for child in kids.get(m.agent.name, []):
            walk(child, depth + 1)

    for m in kids.get(None, []):
        walk(m, 0)
    for m in members:  # cycles: whatever is left, flat
        walk(m, 0)
    return out


def matches(item: Observation, needle: str) -> bool:
    needle = needle.lower()
    a = item.agent
    return any(needle in (value or "").lower()
               for value in (a.name, a.provider, item.status, a.cwd, a.tab))


def build(items: list[Observation], tab_tiles: list[tuple[str, list[str]]], pins: list[str],
          filter_text: str = "", buried_open: bool = False) -> list[Row]:
    """The list's rows. `tab_tiles` is [(tab name, [agent names in tile order])] in tab order;
    `pins` are agent names in pin order."""
    by_name = {i.agent.name: i for i in items if not filter_text or matches(i, filter_text)}
    rows: list[Row] = []
    placed: set[str] = set()

    def group(title: str, members: list[Observation], open_: bool = True) -> None:
        members = [m for m in members if m.agent.name not in placed]
        if not members:
            return
        placed.update(m.agent.name for m in members)
        rows.append(Row(key=f"group:{title}", label=title, count=len(members)))
        if open_:
            rows.extend(Row(key=m.agent.id, label=m.agent.name, depth=d, item=m)
                        for d, m in _nest(members))

    group("Pinned", [by_name[n] for n in pins if n in by_name])
    for tab, tiles in tab_tiles:
        group(f"Tab {tab}", [by_name[n] for n in tiles if n in by_name])
    group("Parked", [i for i in by_name.values() if i.agent.placement == "detached"])
    group("Buried", [i for i in by_name.values() if i.agent.placement == "buried"],
          open_=buried_open)
    group("Other", list(by_name.values()))  # stale records: owned by no tab, park or burial
    return rows


def details(item: Observation) -> str:
    """The details panel (Rich markup): who, where, what runs, links, the last exit."""
    a = item.agent
    links = ", ".join(f"{k}: {v}" for k, v in (
        ("linked parent", a.linked_parent), ("orchestration parent", a.orchestration_parent),
        ("orchestration root", a.orchestration_root)) if v)
    lines = [f"[b]{a.name}[/b]  {a.provider}  {escape(present.status_text(item))} "
             f"({item.status_source})",
             f"cwd      {a.cwd}",
             f"session  {a.provider_session_id or '-'}",
             f"home     {a.home}    pid {item.pid or '-'}",
             f"place    {present.place(item)}{'  · pinned' if a.pinned else ''}",
             f"links    {links or '-'}",
             f"last exit {item.exit_code if item.exit_code is not None else '-'}"
             + (f"   error: {a.last_error}" if a.last_error else "")]
    return "\n".join(lines)
