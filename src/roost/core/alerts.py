"""Alerts to the person: which events of the log deserve a notification, once, and what it says.
Pure: event rows and the remembered state in, alerts and the new state out (ops/alerts.py reads
the log, asks tmux who is attached, delivers and stores). Not core/notify.py, which is about a
child's result delivered to its parent agent.

Edges only: an agent starts waiting for its user, fails a turn with an error, hits a usage limit
(status `limited`), crashes or exits, is failed (a crash loop), or, for a person's agent (one
with no orchestration parent), an orchestrated child of it finishes a turn.

One alert per agent per edge: after an alert the agent must leave that state (a status that is
no edge, a start) before the same edge alerts again, and not within DEBOUNCE seconds of the
last one (a dialog that flickers, the pane-died hook and a status refresh both reporting one
exit). Times come from the events, so replaying the log decides the same.

>>> e = {"id": 7, "agent_id": "a", "agent": "api", "at": "2026-01-01T00:00:00+00:00",
...      "kind": "status", "status": "waiting", "previous": "working"}
>>> found, state = decide([e], {}, set(), set())
>>> [(a.agent, a.edge) for a in found], state["a"].armed
([('api', 'waiting')], False)
>>> decide([e], state, set(), set())[0]  # the same edge again without leaving it: nothing
[]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from roost.core import questions

DEBOUNCE = 5.0  # seconds: the same edge of one agent alerts at most once within it
EDGES = ("waiting", "error", "limited", "crashed", "exited", "failed", "finished")
# Statuses and events that show the agent left an alerting state: the next edge may alert.
_LEFT = ("working", "idle", "starting", "stopped", "hibernated")
_REARM_EVENTS = ("started", "woke", "restarted", "killed", "hibernated", "sent")
MAX_TITLE = 120  # characters
MAX_BODY = 400  # characters
SCREEN_LINES = 8  # a waiting dialog's question sits in the screen's last lines (core/status)


@dataclass(frozen=True, slots=True)
class Seen:
    """What was last alerted of one agent: the edge, its event's time, and whether the agent
    left that state since (armed: the same edge may alert again once DEBOUNCE has passed)."""

    edge: str
    at: str
    armed: bool


@dataclass(frozen=True, slots=True)
class Alert:
    event_id: int
    agent_id: str
    agent: str
    edge: str
    at: str
    words: str | None  # the CLI's own words (an error's reason), when the event carries them
    exit_code: int | None = None


def edge_of(event: Mapping[str, object], person_child: bool) -> str | None:
    """The edge an event is, "" for one that re-arms its agent, None for one that says neither.

    >>> gone = {"kind": "status", "status": "exited", "previous": "working", "exit_code": 2}
    >>> edge_of(gone, False)
    'crashed'
    >>> edge_of({"kind": "status", "status": "idle", "previous": "working"}, True)
    'finished'
    >>> edge_of({"kind": "status", "status": "idle", "previous": "working"}, False)
    ''
    """
    kind = event.get("kind")
    if kind == "exited":  # the pane-died hook's, before any status refresh sees it
        return _exit_edge(event.get("exit_code"))
    if kind == "failed":
        return "failed"
    if kind in _REARM_EVENTS:
        return ""
    if kind != "status":
        return None
    status, previous = event.get("status"), event.get("previous")
    if status == previous:
        return None
    if status in ("waiting", "error", "limited", "failed"):
        return str(status)
    if status == "exited":
        return _exit_edge(event.get("exit_code"))
    if status == "idle" and previous == "working" and person_child:
        return "finished"
    return "" if status in _LEFT else None


def _exit_edge(code: object) -> str:
    return "crashed" if isinstance(code, int) and code != 0 else "exited"


def decide(
    events: Iterable[Mapping[str, object]],
    state: Mapping[str, Seen],
    person_children: set[str],
    attached: set[str],
) -> tuple[list[Alert], dict[str, Seen]]:
    """The alerts the events (oldest first) call for, and the state after them. `state`: what
    was last alerted per agent id; `person_children`: the agents whose orchestration parent is
    a person's agent; `attached`: the agents the person looks at right now, which alert nobody
    (the state still records the edge: detaching later does not bring an old one back)."""
    new = dict(state)
    found: list[Alert] = []
    for e in events:
        agent_id = str(e.get("agent_id"))
        edge = edge_of(e, agent_id in person_children)
        seen = new.get(agent_id)
        if edge == "":
            if seen is not None:
                new[agent_id] = replace(seen, armed=True)
            continue
        if edge is None:
            continue
        at = str(e.get("at"))
        if seen is not None and not _fresh(seen, edge, at):
            continue
        new[agent_id] = Seen(edge, at, armed=False)
        if agent_id in attached:
            continue
        reason = e.get("reason")
        code = e.get("exit_code")
        found.append(
            Alert(
                int(str(e.get("id"))),
                agent_id,
                str(e.get("agent")),
                edge,
                at,
                reason if isinstance(reason, str) and reason else None,
                code if isinstance(code, int) else None,
            )
        )
    return found, new


def _fresh(seen: Seen, edge: str, at: str) -> bool:
    """Whether `edge` at `at` is a new edge after `seen`, or a repeat of it."""
    if seen.edge != edge:
        return True
    return seen.armed and _seconds(seen.at, at) >= DEBOUNCE


def _seconds(earlier: str, later: str) -> float:
    try:
        return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds()
    except (ValueError, TypeError):
        return DEBOUNCE  # an unreadable time: do not hold an alert back on it


_PHRASES = {
    "waiting": "is waiting for you",
    "error": "hit an error",
    "limited": "hit a usage limit",
    "crashed": "crashed",
    "exited": "exited",
    "failed": "failed: it keeps crashing",
    "finished": "finished its turn",
}
_DEFAULTS = {
    "waiting": "It asks you something: roost attach {name}",
    "error": "Its last turn failed: roost attach {name}",
    "limited": "It stopped at its usage limit: roost attach {name}",
    "crashed": "Its CLI ended with an error: roost wake {name}",
    "exited": "Its CLI ended: roost wake {name}",
    "failed": "roost stopped restarting it: roost wake {name}",
    "finished": "Its result went to its parent: roost attach {name}",
}


def message(alert: Alert, words: str | None = None) -> tuple[str, str]:
    """(title, body) of an alert: the agent and what happened, then what it needs in its CLI's
    own words (`words`: a waiting dialog's question from its screen; else the event's reason),
    or what to run. Plain text: no control characters (a terminal channel writes them inside
    an escape sequence), each bounded.

    >>> message(Alert(1, "a", "api", "crashed", "T", None, 137))
    ('roost: api crashed (exit 137)', 'Its CLI ended with an error: roost wake api')
    >>> message(Alert(1, "a", "x\\x1b]0;evil\\x07", "error", "T", "API Error: 500"))
    ('roost: x]0;evil hit an error', 'API Error: 500')
    """
    title = f"roost: {alert.agent} {_PHRASES.get(alert.edge, alert.edge)}"
    if alert.edge == "crashed" and alert.exit_code is not None:
        title += f" (exit {alert.exit_code})"
    default = _DEFAULTS.get(alert.edge, "roost attach {name}").format(name=alert.agent)
    body = words or alert.words or default
    return plain(title, MAX_TITLE), plain(body, MAX_BODY)


def plain(text: str, limit: int) -> str:
    """One line of printable text at most `limit` characters: control characters (ESC, BEL,
    C1 codes) dropped, whitespace runs made one space.

    >>> plain("a\\x1b\\x07\\x9c b\\n\\tc", 10)
    'a b c'
    """
    words = "".join(ch for ch in " ".join(text.split()) if unicodedata.category(ch) != "Cc")
    return words if len(words) <= limit else words[: limit - 1] + "…"


def question(screen: str, waiting: Sequence[str]) -> str | None:
    """A waiting CLI's question in its own words: among the screen's last SCREEN_LINES non-empty
    lines, the last one that asks (ends with "?"), else the first that shows a `waiting`
    pattern; None when neither is there. When the dialog has a top rule (a line of "─", as
    Claude Code draws), what it says between that rule and the question follows (the tool, its
    description, its command), without rules and tips.

    >>> question("Bash command\\n  rm -rf build\\nDo you want to proceed?\\n❯ 1. Yes\\n  2. No",
    ...          ["Do you want"])
    'Do you want to proceed?'

    Claude Code's folder trust asks far above its choices, which a pattern reads first:

    >>> question("Is this a project you trust? (Like your own code.)\\n" + "more\\n" * 9
    ...          + " ❯ No, exit\\n   Yes, I trust this folder\\n Enter to confirm",
    ...          ["Yes, I trust this folder"])
    'Is this a project you trust?'
    >>> question("old words\\n" + "─" * 30 + "\\n Bash command\\n Tip: use auto mode\\n"
    ...          " Write a marker\\n" + "╌" * 30 + "\\n echo hi > m.txt\\n"
    ...          " Do you want to proceed?\\n ❯ 1. Yes\\n   2. No", [])
    'Do you want to proceed? — Bash command · Write a marker · echo hi > m.txt'
    """
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    recent = range(max(0, len(lines) - SCREEN_LINES), len(lines))
    asking = [i for i in recent if lines[i].rstrip(" :").endswith("?")]
    read = questions.read(screen)  # a question above its list of choices, however tall
    if not asking and read is not None:
        return plain(read.text, MAX_BODY)
    if not asking:
        patterns = [p.strip("^$") for p in waiting if p.strip("^$")]
        shown = [i for i in recent if any(p in lines[i] for p in patterns)]
        return _unbox(lines[shown[0]]) if shown else None
    at = asking[-1]
    words = _unbox(lines[at])
    top = next(
        (i for i in range(at - 1, max(-1, at - DIALOG_LINES), -1) if _rule(lines[i], "─")), None
    )
    if top is None:
        return words
    said = [_unbox(x) for x in lines[top + 1 : at] if not _rule(x) and not x.startswith("Tip:")]
    said = [x for x in said if x]
    return plain(f"{words} — {' · '.join(said)}", MAX_BODY) if said else words


DIALOG_LINES = 16  # how far above its question a dialog's top rule may be


def _rule(line: str, drawn: str = "─━╌╍┄┈-═") -> bool:
    """A line drawn of these rules only (a dialog's top edge: "─"; any separator)."""
    return len(line) >= 3 and all(ch in drawn for ch in line)


def _unbox(line: str) -> str:
    return plain(line.strip("●•◦✦※⎿❯›>│┃╭╮╰╯─└✗✘✕⚠ℹ■▌ "), MAX_BODY)


# ---- the terminal channel: OSC 777 and OSC 9 desktop notifications plus a bell ----------------


def osc(title: str, body: str, in_tmux: bool) -> str:
    """What a TUI or `roost watch --notify` writes to its terminal for an alert: OSC 777
    (title and body: rxvt, foot, wezterm, ghostty), OSC 9 (one text: iTerm2, Windows Terminal,
    kitty) and a BEL. Inside tmux each escape sequence is wrapped for passthrough
    (`\\ePtmux;…\\e\\\\`, every inner ESC doubled; tmux passes it on with `allow-passthrough
    on`), the BEL is not (tmux handles bells itself). The texts are plain() again: a ";" in the
    title would end it early, so it becomes ",".

    >>> osc("t", "b", False)
    '\\x1b]777;notify;t;b\\x07\\x1b]9;t: b\\x07\\x07'
    >>> osc("t", "b", True).split("\\x1b\\\\")
    ['\\x1bPtmux;\\x1b\\x1b]777;notify;t;b\\x07', '\\x1bPtmux;\\x1b\\x1b]9;t: b\\x07', '\\x07']
    """
    title = plain(title, MAX_TITLE).replace(";", ",")
    body = plain(body, MAX_BODY)
    sequences = [f"\x1b]777;notify;{title};{body}\x07", f"\x1b]9;{title}: {body}\x07"]
    if in_tmux:
        sequences = [_passthrough(s) for s in sequences]
    return "".join(sequences) + "\x07"


def _passthrough(sequence: str) -> str:
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
