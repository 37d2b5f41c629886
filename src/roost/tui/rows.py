"""What the agent list shows, in what order, and the selected agent's details: pure, tested
without Textual.

Groups: Need you (the agents that wait for the person, failed or crashed: core/web's
NEEDS_YOU, as the web page groups them; each row says its question or error), then Pinned (in
pin order), then each tab (its tiles in tile order), then Parked, then Buried (collapsed unless
opened). Inside a group, an agent whose parent (linked or orchestration) is in the same group is
listed under it, indented. With remote hosts (docs/HOSTS.md), this machine's groups come under a
"local" header, then each host's agents under its name (`with_hosts`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.markup import escape

from roost.core import present
from roost.core.fleet import LOCAL, HostView
from roost.core.observation import Observation
from roost.core.status import Status
from roost.core.web import NEEDS_YOU
from roost.worktrees import rules as wt

NEEDS_GROUP = "Need you"  # the group at the top, "Need you (2)" as the header says "2 need you"
BADGE_STYLE: dict[str, str] = {
    Status.WORKING: "bold yellow",
    Status.IDLE: "green",
    Status.WAITING: "bold white on red",
    Status.ERROR: "bold white on magenta",
    Status.LIMITED: "bold black on yellow",  # a usage limit (limits/rules.py): it waits for a reset
    Status.STARTING: "cyan",
    Status.EXITED: "red",
    Status.FAILED: "bold red",
    Status.STOPPED: "dim",
    Status.LOST: "italic yellow",
    Status.HIBERNATED: "dim italic",
    Status.UNKNOWN: "magenta",
}


STATUS_WIDTH = 14  # the status column: a status and its reason, cut to fit (the badge pads 2)
ACTIVE_WIDTH = 6  # "active": an age like 59m or 12d
NAME_LEAST = 10  # the name column never gets narrower than this
CELL_PADDING = 2  # a DataTable cell's padding, left and right
SCROLLBAR = 2  # kept free for the list's vertical scrollbar


def name_room(table_width: int, provider_width: int, tokens_width: int = 0) -> int:
    """How wide the name column may be so that provider, status, age (and tokens, when that
    column shows: `tokens_width` > 0) stay on screen in a list `table_width` columns wide (0:
    not laid out yet, no limit); longer names are cut. The needs-you group's rows fill it: the
    question after the name gets what room the list has.

    >>> name_room(66, 8), name_room(0, 8), name_room(30, 8), name_room(66, 8, 6)
    (26, 64, 10, 18)
    """
    if table_width <= 0:
        return 64
    others = provider_width + STATUS_WIDTH + 2 + ACTIVE_WIDTH + 4 * CELL_PADDING + SCROLLBAR
    if tokens_width:
        others += tokens_width + CELL_PADDING
    return max(NAME_LEAST, table_width - others)


@dataclass(frozen=True, slots=True)
class Row:
    key: str  # agent id, or "group:<name>"
    label: str  # group title, or the agent's name
    depth: int = 0
    item: Observation | None = None  # the agent; None for a group header
    count: int = 0  # agents under a group header
    host: str | None = None  # a host's header or agent: the host's name (None: this machine)
    remote: Mapping[str, Any] | None = None  # a host's agent: its `roost ls --json` row
    unreachable: str | None = None  # a host's header: why it did not answer
    asks: str | None = None  # a needs-you agent: its question or error, shown after its name

    @property
    def is_header(self) -> bool:
        return self.item is None and self.remote is None


def ago(iso: str | None, now: datetime | None = None) -> str:
    if not iso:
        return "-"
    seconds = ((now or datetime.now(UTC)) - datetime.fromisoformat(iso)).total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(0, int(seconds))}s"


def fit(text: str, width: int) -> str:
    r"""`text` cut to `width` characters, an ellipsis marking the cut, its control characters
    shown (a host's or a CLI's words: an ESC in a cell would be the terminal's command).

    >>> fit("waiting: Do you want to proceed?", 12), fit("idle", 12), fit("a\x1b[2J", 12)
    ('waiting: Do…', 'idle', 'a\\x1b[2J')
    """
    text = present.visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"


ASKS_LEAST = 8  # characters of a question worth showing after a name; fewer: the name alone


def asks_fit(name: str, asks: str | None, width: int) -> bool:
    """Whether a needs-you row's question (or error) shows after its name in `width`: at least
    ASKS_LEAST characters of it (else the status column keeps saying it, as on other rows)."""
    return bool(asks) and len(name) + 2 + ASKS_LEAST <= width


def name_cell(name: str, asks: str | None, width: int) -> str:
    """A row's name column: the name, then (a needs-you row) its question or error, cut to
    `width`; the question is left out when it does not fit (asks_fit).

    >>> name_cell("api", "Do you want to proceed?", 20), name_cell("api", "Proceed?", 12)
    ('api  Do you want to…', 'api')
    """
    if asks_fit(name, asks, width):
        return fit(f"{name}  {asks}", width)
    return fit(name, width)


def screen_tail(text: str, height: int) -> str:
    r"""The bottom `height` lines of an agent's screen, blank lines below its last text dropped:
    the prompt and any dialog waiting for the user sit at the bottom.

    >>> screen_tail("1\n2\n3\n❯ \n\n\n", 2)
    '3\n❯'
    """
    lines = present.shown(text).rstrip().split("\n")
    return "\n".join(lines[-height:]) if height > 0 else ""


def needs_you(item: Observation) -> bool:
    """It waits for the person: a question, an error, a usage limit, a start that failed, or a
    crash (an exit by itself with a non-zero code).

    >>> from roost.tui.demo import item
    >>> [needs_you(item("a", s)) for s in ("waiting", "error", "limited", "failed", "idle")]
    [True, True, True, True, False]
    >>> needs_you(item("a", "exited", exit_code=1)), needs_you(item("a", "exited", exit_code=0))
    (True, False)
    """
    return item.status in NEEDS_YOU or present.crashed(item)


def asks(item: Observation) -> str | None:
    """What a needs-you row says after the agent's name: its question or its error's words (a
    crash: its last error), whole (the table cuts it to the room it has).

    >>> from roost.tui.demo import item
    >>> waiting = item("a", "waiting", reason="Do you want to proceed?")
    >>> asks(waiting), asks(item("b", "exited", exit_code=1))
    ('Do you want to proceed?', None)
    """
    if item.status == Status.EXITED:
        return item.agent.last_error or None
    return item.status_reason or (item.agent.last_error if item.status == Status.FAILED else None)


def status_cell(item: Observation, asks_shown: bool = False) -> str:
    """A local agent's status column: present.status_text, without the reason when the row
    shows it after the name (`asks_shown`: a needs-you row with room for it), so the badge
    keeps the status word.

    >>> from roost.tui.demo import item
    >>> waiting = item("a", "waiting", reason="Do you want to proceed?")
    >>> status_cell(waiting), status_cell(waiting, asks_shown=True)
    ('waiting: Do you want to proceed?', 'waiting')
    """
    if not asks_shown:
        return present.status_text(item)
    return present.status_text(dataclasses.replace(item, status_reason=None))


def counts(items: list[Observation]) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in items:
        key = item.status or Status.UNKNOWN
        found[key] = found.get(key, 0) + 1
    return found


def header_text(items: list[Observation]) -> str:
    c = counts(items)
    need = sum(needs_you(i) for i in items)
    parts = [f"{n} {s}" for s, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]
    return (
        f"{len(items)} agents"
        + (": " + ", ".join(parts) if parts else "")
        + (f"  ·  {need} need you" if need else "")
    )


def _nest(members: list[Observation]) -> list[tuple[int, Observation]]:
    """Children under their parents (within the group), keeping the given order otherwise."""
    names = {m.agent.name for m in members}

    def parent(m: Observation) -> str | None:
        for name in (m.agent.linked_parent_name, m.agent.orchestration_parent_name):
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
    return any(
        needle in (value or "").lower() for value in (a.name, a.provider, item.status, a.cwd, a.tab)
    )


def build(
    items: list[Observation],
    tab_tiles: list[tuple[str, list[str]]],
    pins: list[str],
    filter_text: str = "",
    buried_open: bool = False,
) -> list[Row]:
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
            rows.extend(
                Row(
                    key=m.agent.id,
                    label=m.agent.name,
                    depth=d,
                    item=m,
                    asks=asks(m) if title == NEEDS_GROUP else None,
                )
                for d, m in _nest(members)
            )

    # An agent that needs the person is listed here only, not at its usual place too (as the
    # web page's groups do): each row's key stays its agent's id, so the cursor follows it back
    # to its tab once answered, and the list never shows the same agent twice. Its place is in
    # the details panel.
    group(NEEDS_GROUP, [i for i in by_name.values() if needs_you(i)])
    group("Pinned", [by_name[n] for n in pins if n in by_name])
    for tab, tiles in tab_tiles:
        group(f"Tab {tab}", [by_name[n] for n in tiles if n in by_name])
    group("Parked", [i for i in by_name.values() if i.agent.placement == "detached"])
    group(
        "Buried", [i for i in by_name.values() if i.agent.placement == "buried"], open_=buried_open
    )
    group("Other", list(by_name.values()))  # stale records: owned by no tab, park or burial
    return rows


HOST_KEY = "host:"  # a host header's key prefix; "host:" alone heads this machine's agents
REMOTE_KEY = "remote:"  # a host's agent: "remote:HOST:ID"


def remote_matches(agent: Mapping[str, Any], needle: str) -> bool:
    needle = needle.lower()
    fields = ("name", "provider", "status", "cwd", "tab")
    return any(needle in str(agent.get(f) or "").lower() for f in fields)


def with_hosts(local: list[Row], hosts: Sequence[HostView], filter_text: str = "") -> list[Row]:
    """The fleet's rows: without hosts, `local` as it is (a one-machine TUI never changes);
    else this machine's groups under a "local" header, then each host's agents (by name)
    under its own, and a host that did not answer one header line saying why."""
    if not hosts:
        return local
    here = sum(r.count for r in local if r.is_header)
    rows = [Row(key=HOST_KEY, label=LOCAL, count=here), *local]
    for view in hosts:
        key = f"{HOST_KEY}{view.host}"
        if view.unreachable is not None:
            rows.append(Row(key=key, label=view.host, host=view.host, unreachable=view.unreachable))
            continue
        agents = sorted(
            (a for a in view.agents if not filter_text or remote_matches(a, filter_text)),
            key=lambda a: str(a.get("name")),
        )
        rows.append(Row(key=key, label=view.host, host=view.host, count=len(agents)))
        rows.extend(
            Row(
                key=f"{REMOTE_KEY}{view.host}:{a.get('id')}",
                label=str(a.get("name")),
                host=view.host,
                remote=a,
            )
            for a in agents
        )
    return rows


def host_title(row: Row) -> str:
    """A host header's text: its name and agent count, or why it did not answer.

    >>> host_title(Row("host:b", "b", host="b", unreachable="no answer within 5 s"))
    'b  unreachable: no answer within 5 s'
    """
    if row.unreachable is not None:
        return f"{row.label}  unreachable: {row.unreachable}"
    return f"{row.label} ({row.count})"


def remote_status(agent: Mapping[str, Any]) -> str:
    """A host's agent's status as the table says a local one's (present.status_text).

    >>> remote_status({"status": "error", "status_reason": "API Error: 500"})
    'error: API Error: 500'
    """
    status = str(agent.get("status") or Status.UNKNOWN)
    reason = agent.get("status_reason")
    if agent.get("crashed"):
        return f"crashed ({agent.get('exit_code')})"
    if reason and status != Status.EXITED:
        return f"{status}: {fit(str(reason), present.TABLE_REASON)}"
    return status


def remote_refusal(name: str, host: str) -> str:
    """What a key other than Enter says on a host's agent: the TUI drives only this machine."""
    return (
        f"{name} runs on host {host}: here Enter attaches to it; "
        f"roost --host {host} … does the rest"
    )


def remote_details(agent: Mapping[str, Any], host: str) -> str:
    """The details panel for a host's agent (Rich markup; every value from the host escaped)."""

    def text(key: str) -> str:
        return safe(str(agent.get(key) or "-"))

    place = text("tab") if agent.get("placement") == "tile" else text("placement")
    return "\n".join(
        [
            f"[b]{text('name')}[/b]  {text('provider')}  {safe(remote_status(agent))}"
            f"  on host [b]{escape(host)}[/b]",
            f"cwd      {text('cwd')}",
            f"session  {text('provider_session_id')}",
            f"place    {place}",
            f"last error {text('last_error')}",
            f"[dim]Enter attaches (ssh -tt; {escape(host)}'s C-q comes back here); other keys "
            f"act on this machine only: roost --host {escape(host)} …[/dim]",
        ]
    )


def safe(text: str) -> str:
    """A value in a panel's Rich markup: its brackets escaped (a folder named `[red]` is
    not a style) and its control characters shown (core/present.visible)."""
    return escape(present.visible(text))


def host_details(row: Row) -> str:
    """The details panel for a host's header."""
    if row.host is None:
        return f"[b]{LOCAL}[/b]: this machine's agents ({row.count})"
    name = escape(row.host)
    if row.unreachable is not None:
        return (
            f"[b]{name}[/b]  unreachable: {safe(row.unreachable)}\n"
            f"[dim]asked again every few seconds; roost host check {name} tells more[/dim]"
        )
    return f"[b]{name}[/b]: {row.count} agents (asked over ssh every few seconds)"


def details(item: Observation, git: dict[str, object] | None = None) -> str:
    """The details panel (Rich markup): who, where, what runs, links, the last exit; `git`: a
    worktree agent's counts, once asked (the app asks when the panel shows that agent)."""
    a = item.agent
    links = ", ".join(
        f"{k}: {v}"
        for k, v in (
            ("linked parent", a.linked_parent_name),
            ("orchestration parent", a.orchestration_parent_name),
            ("orchestration root", a.orchestration_root_name),
        )
        if v
    )
    lines = [
        f"[b]{a.name}[/b]  {a.provider}  {safe(present.status_text(item))} ({item.status_source})",
        f"cwd      {safe(a.cwd)}",
        f"session  {safe(a.provider_session_id or '-')}",
        f"home     {a.home}    pid {item.pid or '-'}",
        f"place    {present.place(item)}{'  · pinned' if a.pinned else ''}",
        f"links    {links or '-'}",
        f"last exit {item.exit_code if item.exit_code is not None else '-'}"
        + (f"   error: {safe(a.last_error)}" if a.last_error else ""),
    ]
    if a.worktree_json:  # its git worktree (spawn --worktree): the branch, in the repository
        import json

        tree = json.loads(a.worktree_json)
        lines.insert(2, f"branch   {safe(tree['branch'])} (worktree of {safe(tree['repo'])})")
        if git is not None:
            lines.insert(3, f"git      {escape(wt.git_state(git))}")
    return "\n".join(lines)
