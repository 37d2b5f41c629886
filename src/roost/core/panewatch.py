"""What tmux pushes to the service's control client (tmux/control.py), as data: the news that
something changed, the one `list-panes` that says what, its parsing, and what changed between
two looks. Pure; service/monitor.py acts on it.

tmux 3.3a checks a control client's subscriptions once a second. A subscription whose format
looped over every session, window and pane (this module's first way) cost tmux about 1 % of a
core at 200 agents while nothing happened. Now tmux says when something happened, and the
service asks what only then:
- Every window is watched for activity (`monitor-activity`), and a session nobody is attached
  to has `activity-action any`: a window's first output after a look runs the alert-activity
  hook, which counts it in the server option `@roost_news`. tmux runs the hook once per window
  until the window's activity flag is cleared, so a window streaming output costs a hook a
  look, not one a write. Bells (alert-bell) count too, and a pane roost respawns (tmux 3.3a has
  no hook for it: tmux/client.py's respawn counts it); windows, sessions and clients that come
  or go are control-mode notifications of their own (NOTIFICATIONS).
- A session someone is attached to has `activity-action none` (set by roost's attach and by
  the client-attached and client-session-changed hooks, so without the service too): with any
  other value tmux would ring the person's terminal at every re-arm, or for every write of the
  window they look at. Its agents are heard through a second subscription, over the attached
  sessions only, which the monitor holds only while a look saw one (ATTACHED).
- The hooks also signal a `wait-for` channel the service's control client waits on, so the
  first change after a quiet spell is looked at within milliseconds; the counter is also the
  one subscription (one format a second, whatever the number of panes), a net under that.
- A look (`look_argv`) clears the activity flags the last look saw and arms the sessions it
  saw unattached, then lists every agent's pane, in one command list: output after the clear
  runs the hook again, so nothing written between two looks is missed; while a look saw a flag
  up, the monitor looks again as its budget allows, which re-arms that window.
Titles may hold any separator: they go through `#{q:...}`, which backslash-escapes them, so an
unescaped '|' ends a pane's entry.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from roost.core.service import SESSION

NAME = "roost"
NEWS = "@roost_news"
SUBSCRIPTION = f"{NAME}::n#{{{NEWS}}}"  # never empty: an empty value means "no report"
_COUNT = "#{e|+:#{?" + NEWS + ",#{" + NEWS + "},0},1}"
# News wakes the monitor at once too: its control client waits on this channel (tmux's
# `wait-for`; a signal with nobody waiting is kept for the next wait), then prints WOKEN.
CHANNEL = "roost_news"
WOKEN = "roost-news"
WAIT = (("wait-for", CHANNEL), ("display-message", "-p", WOKEN))
# News, as words (tmux/client.py's respawn adds them to its command list).
BUMP = ("set-option", "-sF", NEWS, _COUNT, ";", "wait-for", "-S", CHANNEL)
NEWS_HOOK = f'set-option -sF {NEWS} "{_COUNT}" ; wait-for -S {CHANNEL}'
# The bell hook (tmux's alert-bell): a per-window counter the look sees change, and news.
BELL_HOOK = 'set -wF @roost_bell "#{e|+:#{?@roost_bell,#{@roost_bell},0},1}" ; ' + NEWS_HOOK
QUIET = ("set-option", "activity-action", "none")  # an attached session (see above)
# Set on roost's own server when the monitor starts: tmux's options and hooks, as words. The
# new hooks at an index of their own (hooks are arrays): one a user's tmux.conf set stays.
SLOT = "[20]"
SETUP = (
    ("set-option", "-gw", "monitor-activity", "on"),
    ("set-option", "-g", "activity-action", "any"),
    ("set-hook", "-g", "alert-activity" + SLOT, NEWS_HOOK),
    ("set-hook", "-g", "alert-bell", BELL_HOOK),
    ("set-hook", "-g", "client-attached" + SLOT, " ".join(QUIET)),
    ("set-hook", "-g", "client-session-changed" + SLOT, " ".join(QUIET)),
)
# Control-mode notifications that are news too: windows, sessions and clients come or gone.
NOTIFICATIONS = frozenset(
    {
        "window-add",
        "window-close",
        "unlinked-window-add",
        "unlinked-window-close",
        "sessions-changed",
        "client-session-changed",
        "client-detached",
    }
)

_PANE = (
    "#{pane_id} #{pane_dead} #{window_activity} #{history_size} #{cursor_y} #{cursor_x} "
    "#{@roost_bell} #{q:pane_title}|"
)
_AGENT = "#{&&:#{@roost_id},#{!=:#{session_name}," + SESSION + "}}"
# A look's entry: agent or not, activity flag up, session attached, armed (`any`), session id.
FIELDS = (
    "#{?" + _AGENT + ",a,-}#{window_activity_flag}#{?session_attached,1,0}"
    "#{?#{==:#{activity-action},any},1,0}#{session_id} " + _PANE
)
# Every agent's window (tagged @roost_id when it is made), in every session but the service's
# own (what the service prints is no agent's change, and a write for it would wake every TUI:
# tui/live.py's stamp); and any other window whose activity flag is up, only so the next look
# clears it (a home's keeper redrawn, the service's own window).
FILTER = "#{||:#{@roost_id},#{window_activity_flag}}"
ATTACHED = f"{NAME}-attached"
ATTACHED_FORMAT = (
    "#{S:#{?#{&&:#{session_attached},#{!=:#{session_name},"
    + SESSION
    + "}},#{W:#{?#{@roost_id},#{P:"
    + _PANE
    + "},}},}}"
)

_ENTRY = re.compile(
    r"([a-])([01])([01])([01])(\$\d+) (%\d+) (\d) (\d*) (\d*) (\d*) (\d*) (\d*) "
    r"((?:\\.|[^\\|])*)\|"
)


def look_argv(
    flagged: Collection[str], unarmed: Collection[str], loud: Collection[str] = ()
) -> list[str]:
    """One tmux command list: clear the activity flags of the `flagged` sessions (re-arming
    their windows' hook), arm the `unarmed` ones if still nobody is attached to them (checked
    as tmux runs it: a person attaching meanwhile keeps `none`), quiet the `loud` ones if
    someone still is (attached before the hooks were set), then list every pane the monitor
    watches. A session gone meanwhile fails the list (monitor.py looks again without).

    >>> look_argv(["$2"], [])[:5]
    ['kill-session', '-C', '-t', '$2', ';']
    >>> look_argv([], ["$3"])[4:7]
    ['#{session_attached}', '', "set-option -t '$3' activity-action any"]
    >>> look_argv([], [])[:2]
    ['list-panes', '-a']
    """
    words: list[str] = []
    for session in sorted(flagged):
        words += ["kill-session", "-C", "-t", session, ";"]  # -C: alerts only, kills nothing
    for session in sorted(unarmed):  # ids from tmux ($N): single-quoted, never expanded
        arm = f"set-option -t '{session}' activity-action any"
        words += ["if-shell", "-F", "-t", session, "#{session_attached}", "", arm, ";"]
    for session in sorted(loud):
        quiet = f"set-option -t '{session}' activity-action none"
        words += ["if-shell", "-F", "-t", session, "#{session_attached}", quiet, "", ";"]
    return [*words, "list-panes", "-a", "-f", FILTER, "-F", FIELDS]


@dataclass(frozen=True, slots=True)
class PaneState:
    dead: bool
    activity: str  # the window's last output (seconds)
    screen: tuple[str, str, str]  # history size, cursor row and column: the screen moved
    bells: int
    title: str  # as tmux quoted it: only compared


@dataclass(frozen=True, slots=True)
class Look:
    panes: dict[str, PaneState]  # each agent's pane's state, by pane id
    flagged: frozenset[str]  # sessions with an activity flag up: the next look clears them
    unarmed: frozenset[str]  # agents' sessions nobody is attached to, not yet `any`
    loud: frozenset[str]  # agents' sessions someone is attached to, still `any`
    attached: bool  # someone is attached to an agent's session: the ATTACHED subscription


def parse(value: str) -> Look:
    """A look's answer.

    >>> look = parse(
    ...     "a010$1 %1 0 17 0 3 0  vm|\\n"
    ...     "a101$2 %0 1 18 5 2 1 2 x\\\\|y\\\\;z\\\\\\\\ q|\\n"
    ...     "a000$4 %5 0 1 0 0 0  u|\\n"
    ...     "-101$3 %7 0 1 0 0 0  k|"
    ... )
    >>> sorted(look.panes), look.panes["%0"].dead, look.panes["%0"].bells, look.panes["%0"].title
    (['%0', '%1', '%5'], True, 2, 'x\\\\|y\\\\;z\\\\\\\\ q')
    >>> sorted(look.flagged), sorted(look.unarmed), sorted(look.loud), look.attached
    (['$2', '$3'], ['$4'], [], True)
    >>> parse("a011$9 %2 0 1 0 0 0  t|").loud
    frozenset({'$9'})
    """
    panes, flagged, unarmed, loud, attached = {}, set(), set(), set(), False
    for m in _ENTRY.finditer(value):
        kind, flag, on, armed, session, pane, dead, activity, *screen, bells, title = m.groups()
        if flag == "1":
            flagged.add(session)
        if kind != "a":
            continue
        moved = (screen[0], screen[1], screen[2])  # history size, cursor row and column
        panes[pane] = PaneState(dead == "1", activity, moved, int(bells or 0), title)
        if on == "1":
            attached = True
            if armed == "1":
                loud.add(session)
        elif armed == "0":
            unarmed.add(session)
    return Look(panes, frozenset(flagged), frozenset(unarmed), frozenset(loud), attached)


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
