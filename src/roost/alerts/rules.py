"""Alerts to the person: which events of the log deserve a notification, once, and what it says.
Pure: event rows and the remembered state in, alerts and the new state out (alerts/operations.py
reads the log, asks tmux who is attached, delivers and stores). Not core/notify.py, which is about a
child's result delivered to its parent agent.

Edges only: an agent starts waiting for its user, fails a turn with an error, hits a usage limit
(status `limited`), crashes or exits, is failed (a crash loop), or, for a person's agent (one
with no orchestration parent), an orchestrated child of it finishes a turn.

One alert per edge, remembered per agent and edge (durable: store/alerts.py keeps `Seen` rows,
so a restart of the decider, a second decider or a replay of the log decides the same; times
come from the events). After an alert the agent must leave that state and stay out of it for
DEBOUNCE seconds before the same edge alerts again: a dialog that flickers (waiting, idle,
waiting) or a state that comes back after a brief other one (waiting, error, waiting) is the
edge it was. An action (a start, a send, a kill) ends the state at once, but the same edge still
waits DEBOUNCE seconds from its last alert (a crash loop). A crash and an exit are one edge:
the pane-died hook and a status refresh both report the one exit.

Intent before effect: a stop roost makes (kill, hibernate, rm, a budget's park, `max_live`) logs
a `stopping` event, with its deadline, before its signal (store/intents.py). Until the agent
starts again or the deadline passes, nothing it does alerts or counts as alerted: its exit is
that stop's.

>>> e = Event(7, "a", "api", "2026-01-01T00:00:00+00:00", "status",
...           {"status": "waiting", "previous": "working"})
>>> found, state = decide([e], {}, set(), set())
>>> [(a.agent, a.edge) for a in found], state[("a", "waiting")].left
([('api', 'waiting')], None)
>>> decide([e], state, set(), set())[0]  # the same edge again without leaving it: nothing
[]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from roost.core import questions
from roost.core.events import Event, EventKind
from roost.core.status import Status

DEBOUNCE = 5.0  # seconds: out of a state less long than this is a flicker, not a new edge
EDGES = (
    "waiting",
    "error",
    "limited",
    "crashed",
    "exited",
    "failed",
    "finished",
    "refused",
    "collision",
)
# roost's own news of a pair of worktree agents whose changes collide (merge/operations.py logs
# one `collision` event per pair, once: its table remembers the pair), alerted as it comes:
# no state of the agent's is entered or left by it.
COLLISION: EventKind = "collision"
# roost's own edge, under the file's name as agent: an edit of config.toml or tmux.conf the
# service refused (service/main.py); a later edit it applied ends it.
REFUSED: EventKind = "config-refused"
APPLIED: EventKind = "config-applied"
KEPT = "the last good settings stay in force"
# Statuses that show the agent left an alerting state: the next edge may alert.
_LEFT = ("working", "idle", "starting", "stopped", "hibernated")
# Events of what someone did to the agent: they end its state at once (`woke`: an older
# version's start, still in the log).
_ACTIONS: tuple[str, ...] = (
    "started",
    "woke",
    "restarted",
    "killed",
    "hibernated",
    "sent",
    "stopping",
)
# A stop under way is over at a new launch, or when the stop failed (its exit is the agent's).
_STOP_ENDS: tuple[str, ...] = ("started", "woke", "restarted", "stop-failed")
STOPPING = "stopping"  # the key of a stop under way among an agent's remembered edges
MAX_TITLE = 120  # characters
MAX_BODY = 400  # characters
SCREEN_LINES = 8  # a waiting dialog's question sits in the screen's last lines (core/status)


@dataclass(frozen=True, slots=True)
class Seen:
    """What is remembered of one edge of one agent: the time of its last alert (its event's),
    and since when the agent is out of that state (None: it is in it). Under the key STOPPING,
    a stop under way: `at` is its deadline, `left` when the agent started again."""

    at: str
    left: str | None


State = Mapping[tuple[str, str], Seen]  # (agent id, edge key) -> Seen


@dataclass(frozen=True, slots=True)
class Alert:
    event_id: int
    agent_id: str
    agent: str
    edge: str
    at: str
    words: str | None  # the CLI's own words (an error's reason), when the event carries them
    exit_code: int | None = None


def edge_of(event: Event, person_child: bool) -> str | None:
    """The edge an event is, "" for one that ends its agent's state, None for one that says
    neither.

    >>> def status(**data: object) -> Event: return Event(1, "a", "x", "T", "status", data)
    >>> edge_of(status(status="exited", previous="working", exit_code=2), False)
    'crashed'
    >>> edge_of(status(status="idle", previous="working"), True)
    'finished'
    >>> edge_of(status(status="idle", previous="working"), False)
    ''
    """
    kind = event.kind
    if kind == COLLISION:
        return COLLISION
    if kind == "exited":  # the pane-died hook's, before any status refresh sees it
        return _exit_edge(event.data.get("exit_code"))
    if kind == "failed":
        return "failed"
    if kind == REFUSED:
        return "refused"
    if kind == APPLIED:
        return ""
    if kind in _ACTIONS or kind in _STOP_ENDS:
        return ""
    if kind != "status":
        return None
    status, previous = event.data.get("status"), event.data.get("previous")
    if status == previous:
        return None
    if status in (Status.WAITING, Status.ERROR, Status.LIMITED, Status.FAILED):
        return str(status)
    if status == Status.EXITED:
        return _exit_edge(event.data.get("exit_code"))
    if status == Status.IDLE and previous == Status.WORKING and person_child:
        return "finished"
    return "" if status in _LEFT else None


def _exit_edge(code: object) -> str:
    return "crashed" if isinstance(code, int) and code != 0 else "exited"


def key(edge: str) -> str:
    """The edge as remembered: a crash and an exit are one (the process ended)."""
    return "exit" if edge in ("crashed", "exited") else edge


def decide(
    events: Iterable[Event],
    state: State,
    person_children: set[str],
    attached: set[str],
) -> tuple[list[Alert], dict[tuple[str, str], Seen]]:
    """The alerts the events (oldest first) call for, and the state after them. `state`: what
    is remembered per agent and edge; `person_children`: the agents whose orchestration parent
    is a person's agent; `attached`: the agents the person looks at right now, which alert
    nobody (the state still records the edge: detaching later does not bring an old one back).
    An agent roost is stopping alerts nobody either, and its edges are not recorded: they are
    the stop's, and a crash of its next launch seconds later is news."""
    new = dict(state)
    found: list[Alert] = []
    for e in events:
        agent_id, at = e.agent_id, e.at
        edge = edge_of(e, agent_id in person_children)
        if edge is None:
            continue
        if edge == "":
            _leave(new, agent_id, at, e.kind, e.data.get("until"))
            continue
        if edge == COLLISION:  # once a pair already (merge/operations.py): no state of its own
            text = e.data.get("text")
            words = text if isinstance(text, str) and text else None
            found.append(Alert(e.seq, agent_id, e.agent, edge, at, words))
            continue
        if _stopping(new, agent_id, at):
            continue  # the stop's, not the agent's: not entered, so it holds back no later edge
        fresh = _enter(new, agent_id, key(edge), at)
        if not fresh or agent_id in attached:
            continue
        reason = e.text("reason")
        code = e.number("exit_code")
        found.append(
            Alert(
                e.seq,
                agent_id,
                e.agent,
                edge,
                at,
                reason or None,
                code,
            )
        )
    return found, new


def _enter(state: dict[tuple[str, str], Seen], agent_id: str, edge: str, at: str) -> bool:
    """The agent is in `edge`'s state from `at` (out of any other): whether that is a new edge,
    remembered then as alerted at `at`, or the one it was in (a repeat, a flicker)."""
    _leave_all(state, agent_id, at, but=edge)
    seen = state.get((agent_id, edge))
    fresh = seen is None or (
        seen.left is not None
        and _seconds(seen.left, at) >= DEBOUNCE
        and _seconds(seen.at, at) >= DEBOUNCE
    )
    state[(agent_id, edge)] = Seen(at, None) if fresh or seen is None else replace(seen, left=None)
    return fresh


def _leave(
    state: dict[tuple[str, str], Seen], agent_id: str, at: str, kind: str, until: object
) -> None:
    """A status out of every edge's state (left at `at`), or an action: that ends each state
    as of its last alert (no flicker: only the debounce since that alert holds the edge back).
    A `stopping` begins a stop under way; a start, or the stop's failure, ends it."""
    stop = state.get((agent_id, STOPPING))
    if kind in _STOP_ENDS and stop is not None and stop.left is None:
        state[(agent_id, STOPPING)] = replace(stop, left=at)
    if kind not in _ACTIONS:
        if kind not in _STOP_ENDS:
            _leave_all(state, agent_id, at)
        return
    for (agent, edge), seen in list(state.items()):
        if agent == agent_id and edge != STOPPING:
            state[(agent, edge)] = replace(seen, left=seen.at)
    if kind == "stopping" and isinstance(until, str):
        state[(agent_id, STOPPING)] = Seen(until, None)


def _leave_all(
    state: dict[tuple[str, str], Seen], agent_id: str, at: str, but: str | None = None
) -> None:
    for (agent, edge), seen in list(state.items()):
        if agent == agent_id and edge not in (but, STOPPING) and seen.left is None:
            state[(agent, edge)] = replace(seen, left=at)


def _stopping(state: State, agent_id: str, at: str) -> bool:
    """Whether a stop of the agent is under way at `at`: what happens to it is that stop's."""
    stop = state.get((agent_id, STOPPING))
    return stop is not None and stop.left is None and _seconds(at, stop.at) >= 0


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
    "refused": "was refused",
    "collision": "collides with another agent's changes",
}
_DEFAULTS = {
    "waiting": "It asks you something: roost attach {name}",
    "error": "Its last turn failed: roost attach {name}",
    "limited": "It stopped at its usage limit: roost attach {name}",
    "crashed": "Its CLI ended with an error: roost wake {name}",
    "exited": "Its CLI ended: roost wake {name}",
    "failed": "roost stopped restarting it: roost wake {name}",
    "finished": "Its result went to its parent: roost attach {name}",
    "refused": "An edit has a problem: roost doctor",
    "collision": "Two agents change the same lines: roost conflicts",
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
    >>> message(Alert(2, "", "config.toml", "refused", "T", "line 2: budget.max_live ..."))[1]
    'line 2: budget.max_live ...; the last good settings stay in force'

    """
    title = f"roost: {alert.agent} {_PHRASES.get(alert.edge, alert.edge)}"
    if alert.edge == "crashed" and alert.exit_code is not None:
        title += f" (exit {alert.exit_code})"
    default = _DEFAULTS.get(alert.edge, "roost attach {name}").format(name=alert.agent)
    body = words or alert.words or default
    if alert.edge == "refused":
        body = f"{body}; {KEPT}"
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
