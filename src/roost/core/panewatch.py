"""What tmux pushes to the service's control client (tmux/control.py), as data: the one format
subscription over every pane of the server, its parsing, and what changed between two of its
reports. Pure; ops/monitor.py acts on it.

tmux 3.3a checks a subscription once a second and reports it only when its value changed. A
pane or window subscription sees only the attached session, so the format loops over every
session, window and pane itself (next-capabilities §1). Titles may hold any separator: they go
through `#{q:...}`, which backslash-escapes them, so an unescaped '|' ends a pane's entry.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from roost.core.service import SESSION

NAME = "roost"
FIELDS = (
    "#{pane_id} #{pane_dead} #{window_activity} #{history_size} #{cursor_y} #{cursor_x} "
    "#{@roost_bell} #{q:pane_title}|"
)
# Every agent's window (tagged @roost_id when it is made), in every session but the service's
# own: what the service prints in its pane (its messages, a library's log line at an agent's
# first MCP call) is no agent's change, and a write for it would wake every TUI (tui/live.py's
# stamp). Homes' keepers (one per agent, as many panes as the agents') are left out too: tmux
# evaluates the format over each pane it names once a second, the largest part of an idle
# service's cost at 200 agents.
FORMAT = (
    "#{S:#{?#{==:#{session_name}," + SESSION + "},,#{W:#{?#{@roost_id},#{P:" + FIELDS + "},}}}}"
)
# The bell hook (tmux's alert-bell): a per-window counter the subscription sees change.
BELL_HOOK = 'set -wF @roost_bell "#{e|+:#{?@roost_bell,#{@roost_bell},0},1}"'

_ENTRY = re.compile(r"(%\d+) (\d) (\d*) (\d*) (\d*) (\d*) (\d*) ((?:\\.|[^\\|])*)\|")


@dataclass(frozen=True, slots=True)
class PaneState:
    dead: bool
    activity: str  # the window's last output (seconds)
    screen: tuple[str, str, str]  # history size, cursor row and column: the screen moved
    bells: int
    title: str  # as tmux quoted it: only compared


def parse(value: str) -> dict[str, PaneState]:
    """A subscription's value: each pane's state by pane id.

    >>> s = parse(r"%1 0 17 0 3 0  vm|%0 1 18 5 2 1 2 x\\|y\\;z\\\\ q|")
    >>> sorted(s), s["%0"].dead, s["%0"].bells, s["%0"].title, s["%1"].bells
    (['%0', '%1'], True, 2, 'x\\\\|y\\\\;z\\\\\\\\ q', 0)
    """
    found = {}
    for m in _ENTRY.finditer(value):
        pane, dead, activity, history, row, column, bells, title = m.groups()
        found[pane] = PaneState(
            dead == "1", activity, (history, row, column), int(bells or 0), title
        )
    return found


@dataclass(frozen=True, slots=True)
class Changes:
    changed: frozenset[str]  # panes new, moved on screen, retitled, died or revived
    gone: frozenset[str]  # panes no longer there
    bells: Mapping[str, int]  # pane id -> bells rung since the last report

    def __bool__(self) -> bool:
        return bool(self.changed or self.gone or self.bells)


def diff(before: Mapping[str, PaneState] | None, after: Mapping[str, PaneState]) -> Changes:
    """What changed from one report to the next; with no report before, every pane changed.

    >>> a = PaneState(False, "1", ("0", "0", "0"), 0, "t")
    >>> moved = PaneState(False, "2", ("0", "1", "0"), 1, "t")
    >>> d = diff({"%1": a, "%2": a}, {"%1": moved, "%3": a})
    >>> sorted(d.changed), sorted(d.gone), dict(d.bells)
    (['%1', '%3'], ['%2'], {'%1': 1})
    >>> bool(diff({"%1": a}, {"%1": a}))
    False
    """
    before = before or {}
    changed = frozenset(p for p, s in after.items() if before.get(p) != s)
    gone = frozenset(p for p in before if p not in after)
    bells = {
        p: s.bells - before[p].bells
        for p, s in after.items()
        if p in before and s.bells > before[p].bells
    }
    return Changes(changed, gone, bells)


def notification(line: str) -> tuple[str, str, str]:
    """A control-mode line as (kind, subscription name, value); kind is the word after '%'
    ("" for a line that is not a notification). Only subscription changes carry a value.

    >>> notification("%subscription-changed roost $1 - - - : %1 0 1 0 0 0  t|")
    ('subscription-changed', 'roost', '%1 0 1 0 0 0  t|')
    >>> notification("%session-changed $1 _roost_service")
    ('session-changed', '', '')
    >>> notification("plain")
    ('', '', '')
    """
    if not line.startswith("%"):
        return "", "", ""
    kind, _, rest = line[1:].partition(" ")
    if kind != "subscription-changed":
        return kind, "", ""
    head, _, value = rest.partition(" : ")
    return kind, head.split(" ", 1)[0], value


# The pane-died poke: tmux runs no notification for a command its hooks run (they carry
# CMDQ_STATE_NOHOOKS, which also silences control clients), and the subscription sees a death
# only at its next 1 s check. So the global pane-died hook starts a tmux client (run-shell: a
# fork, no Python) that renames the service's window to its own name, which every control
# client hears at once as `%window-renamed` (tmux/client.py sets it).
POKE = "window-renamed"


def newly_dead(known: Mapping[str, PaneState] | None, dead: Collection[str]) -> frozenset[str]:
    """The panes dead now that the last report (`known`) had alive or had not seen.

    >>> alive = PaneState(False, "1", ("0", "0", "0"), 0, "t")
    >>> gone = PaneState(True, "1", ("0", "0", "0"), 0, "t")
    >>> sorted(newly_dead({"%1": alive, "%2": gone}, ["%1", "%2", "%3"]))
    ['%1', '%3']
    """
    known = known or {}
    return frozenset(p for p in dead if p not in known or not known[p].dead)


def with_dead(known: Mapping[str, PaneState], dead: Collection[str]) -> dict[str, PaneState]:
    """The last report with these panes marked dead: a poke already acted on them, so the
    next report does not count their death as news again.

    >>> alive = PaneState(False, "1", ("0", "0", "0"), 0, "t")
    >>> with_dead({"%1": alive}, ["%1", "%9"])["%1"].dead
    True
    """
    return {p: replace(s, dead=True) if p in dead else s for p, s in known.items()}


def came_or_went(before: Mapping[str, PaneState] | None, after: Mapping[str, PaneState]) -> bool:
    """Whether the set of live panes changed (a first report: yes): the cue to look up again
    which agents there are.

    >>> a = PaneState(False, "1", ("0", "0", "0"), 0, "t")
    >>> moved = PaneState(False, "2", ("0", "1", "0"), 0, "t")
    >>> came_or_went({"%1": a}, {"%1": moved}), came_or_went({"%1": a}, {"%1": a, "%2": a})
    (False, True)
    >>> came_or_went(None, {})
    True
    """
    if before is None:
        return True
    return {p for p, s in before.items() if not s.dead} != {
        p for p, s in after.items() if not s.dead
    }
