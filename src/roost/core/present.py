"""What users read, in one place: how agents look in `roost ls` (a table for people, a stable
JSON shape for scripts), their status and place, what each operation reports, `roost watch`'s
changes and the event log's lines. The CLI prints these and the TUI shows the same words.

Pure (json loaded only when asked for): it runs on `roost ls`'s fast path."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from roost.core.status import Status

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import tzinfo
    from typing import Any

    from roost.core.events import Event
    from roost.core.observation import Observation
    from roost.core.questions import Question
    from roost.limits.rules import Limit

# The JSON contract: fields are only ever added, never renamed.
JSON_FIELDS = (
    "name",
    "id",
    "provider",
    "provider_session_id",
    "cwd",
    "home",
    "state",
    "pid",
    "dangerous",
    "created_at",
    "started_at",
    "exit_code",
    "args",
    "placement",
    "tab",
    "pinned",
    "linked_parent",
    "orchestration_parent",
    "orchestration_root",
    "last_active_at",
    "last_error",
    "status",
    "status_source",
    "status_since",
    "restart_policy",
    "status_reason",
    "session_history",
    "crashed",
    "worktree",
    "limit_kind",
    "limit_resets_at",
    "usage",
    "held_inputs",
    "needs_approval",
    "proposed_args",
    "collides_with",
)
TABLE_REASON = 48  # characters of an error's reason in the table (the JSON has all of it)

# Every C0 and C1 control, DEL, and the bidirectional overrides and isolates, as visible text:
# a string another machine or program wrote (a host's agent names, a folder's name, a CLI's
# words) never reaches a terminal as a control (ESC starts OSC 52, which writes the clipboard;
# CR and BS forge a row; U+202E reverses one).
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_VISIBLE = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in (*range(0x20), *range(0x7F, 0xA0), *_BIDI)
}


def visible(text: str) -> str:
    r"""`text` with its control characters shown as escapes, for a terminal.

    >>> visible("api\x1b]52;c;ZXZpbA==\x07\r\u202eok\tx")
    'api\\x1b]52;c;ZXZpbA==\\x07\\x0d\\u202eok\\x09x'
    """
    return text if text.isprintable() else text.translate(_VISIBLE)  # the check: 8x cheaper


_SHOWN = {c: text for c, text in _VISIBLE.items() if c not in (0x09, 0x0A)}


def shown(text: str) -> str:
    r"""`text` for a terminal as visible() has it, its lines and tabs kept: what any command
    writes to a person's terminal (system/terminal.py).

    >>> shown("ok\n\tsee \x1b]52;c;ZXZpbA==\x07\x9b2J")
    'ok\n\tsee \\x1b]52;c;ZXZpbA==\\x07\\x9b2J'
    """
    return text.translate(_SHOWN)


def agent_json(
    o: Observation, prices: Mapping[str, tuple[float, ...]] | None = None
) -> dict[str, object]:
    """One agent for scripts: JSON_FIELDS, in that order (`prices`: the price table its
    usage's estimated cost is worked out with, usage/prices.py; None: the shipped one)."""
    import json

    a = o.agent
    return {
        "name": a.name,
        "id": a.id,
        "provider": a.provider,
        "provider_session_id": a.provider_session_id,
        "cwd": a.cwd,
        "home": a.home,
        "state": o.state,
        "pid": o.pid,
        "dangerous": a.dangerous,
        "created_at": a.created_at,
        "started_at": a.started_at,
        "exit_code": o.exit_code,
        "args": list(a.args),
        "placement": a.placement,
        "tab": a.tab,
        "pinned": a.pinned,
        "linked_parent": a.linked_parent_name,
        "orchestration_parent": a.orchestration_parent_name,
        "orchestration_root": a.orchestration_root_name,
        "last_active_at": a.last_active_at,
        "last_error": a.last_error,
        "status": o.status,
        "status_source": o.status_source,
        "status_since": o.status_since,
        "restart_policy": a.restart_policy,
        "status_reason": o.status_reason,
        # every provider session id it had: {session_id, previous, at, reason}, oldest first
        "session_history": json.loads(a.history_json),
        "crashed": crashed(o),  # it ended by itself with a non-zero code (status "exited")
        # its git worktree {repo, branch, path} (spawn --worktree), or null
        "worktree": json.loads(a.worktree_json) if a.worktree_json else None,
        # a `limited` status's kind (limits/rules.py) and reset time (epoch seconds, or None)
        "limit_kind": o.limit.kind if o.limit is not None else None,
        "limit_resets_at": o.limit.resets_at if o.limit is not None else None,
        # tokens read from its CLI's session files and their estimated cost (issue 23 part 4)
        "usage": usage_json(json.loads(a.usage_json), prices),
        # texts roost holds for it until it is at its input (a first prompt behind a question)
        "held_inputs": a.held_inputs,
        # an import kept its arguments aside: it never starts until `roost approve` (issue 35)
        "needs_approval": a.needs_approval,
        "proposed_args": json.loads(a.proposed_args) if a.proposed_args is not None else None,
        # the worktree agents whose changes collide with its own (issue 38: roost conflicts)
        "collides_with": [] if a.collides_json == "[]" else json.loads(a.collides_json),
    }


def usage_json(
    per_model: list[list[Any]], prices: Mapping[str, tuple[float, ...]] | None
) -> dict[str, object]:
    """An agent's stored usage ([model, input, output, cache_write, cache_read] per model) as
    `ls --json` gives it: the token totals and the estimated cost ("cost_usd": None when a
    model has no price)."""
    from roost.usage import prices as price_table
    from roost.usage import rules as usage

    lines = [
        usage.Line("", "", m, usage.Tokens(*t), price_table.cost(m, usage.Tokens(*t), prices))
        for m, *t in per_model
    ]
    tokens, cost, unpriced = usage.summed(lines)
    return {
        **usage.totals_json(tokens),
        "cost_usd": None if unpriced else round(cost or 0.0, 6),
        "cost_is_estimate": True,
        "prices_taken": price_table.TAKEN,  # the date of roost's price table (issue 35)
    }


def place(o: Observation) -> str:
    placement = o.agent.placement
    if placement == "tile":
        return f"tab {o.agent.tab}"
    if placement == "detached":
        return "parked"
    return placement or "-"


def crashed(o: Observation) -> bool:
    """It ended by itself with a non-zero code (a death by signal N reads 128+N)."""
    return o.status == Status.EXITED and o.exit_code not in (None, 0)


def status_word(o: Observation) -> str:
    """The status in a word or two: an agent that ended by itself reads `exited` when its code
    was 0 (or is unknown) and `crashed (CODE)` otherwise; a user's kill reads `stopped`."""
    if crashed(o):
        return f"crashed ({o.exit_code})"
    return o.status or Status.UNKNOWN


def status_text(o: Observation) -> str:
    """status_word, with an error's or a question's words (cut short for the table), and how
    many texts roost holds for it until it is at its input."""
    said = status_word(o)
    if o.status_reason and o.status != Status.EXITED:
        reason = o.status_reason
        if len(reason) > TABLE_REASON:
            reason = reason[: TABLE_REASON - 1] + "…"
        said = f"{o.status}: {reason}"
    if o.agent.held_inputs:
        said += f" [{o.agent.held_inputs} held]"
    if o.agent.needs_approval:
        said += " [needs approval]"
    if o.agent.collides_json != "[]":
        said += f" [collides: {collides(o.agent.collides_json)}]"
    return said


def collides(names_json: str) -> str:
    """The agents a worktree agent's changes collide with, for the table (issue 38).

    >>> collides('["b", "c"]')
    'b, c'
    """
    import json

    found = json.loads(names_json)
    return few([str(n) for n in found], 2) if isinstance(found, list) else "?"


def tree_order(found: list[Observation]) -> list[tuple[Observation, int]]:
    """Agents with their depth, each orchestration child right under its parent (creation
    order among siblings); an agent whose parent is gone is a root."""
    names = {o.agent.name for o in found}
    children: dict[str | None, list[Observation]] = {}
    for o in found:
        parent = o.agent.orchestration_parent_name
        children.setdefault(parent if parent in names else None, []).append(o)
    ordered: list[tuple[Observation, int]] = []
    seen: set[str] = set()

    def walk(o: Observation, depth: int) -> None:
        if o.agent.name in seen:
            return
        seen.add(o.agent.name)
        ordered.append((o, depth))
        for child in children.get(o.agent.name, []):
            walk(child, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    for o in found:  # a cycle has no root: still listed
        walk(o, 0)
    return ordered


def table(found: list[Observation], tree: bool = False) -> str:
    if not found:
        return "no agents yet: roost spawn NAME --cwd DIR\n"
    rows: list[tuple[str, ...]] = [("NAME", "STATUS", "PROVIDER", "PLACE", "PID", "HOME", "CWD")]
    for o, depth in tree_order(found) if tree else [(o, 0) for o in found]:
        a = o.agent
        name = "  " * depth + ("└ " if depth else "") + ("* " if a.pinned else "") + a.name
        cells = (name, status_text(o), a.provider, place(o), str(o.pid or "-"), a.home, a.cwd)
        rows.append(tuple(visible(c) for c in cells))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True))
        + "  "
        + r[-1]
        + "\n"
        for r in rows
    )


def render(
    found: list[Observation],
    as_json: bool,
    tree: bool = False,
    prices: Mapping[str, tuple[float, ...]] | None = None,
) -> str:
    if as_json:
        import json

        ordered = [o for o, _ in tree_order(found)] if tree else found
        return json.dumps([agent_json(o, prices) for o in ordered]) + "\n"
    return table(found, tree)


# ---- what the operations report: the CLI prints these, the TUI notifies with them ------------
def spawned(name: str, provider: str, pid: int | None, home: str, first_start: bool) -> str:
    """`roost spawn`'s line; a spawn of a stopped agent wakes it.

    >>> spawned("api", "claude", 42, "api", first_start=True)
    'spawned api (claude, pid 42) in home api; attach: roost attach api'
    """
    verb = "spawned" if first_start else "woke"
    return f"{verb} {name} ({provider}, pid {pid}) in home {home}; attach: roost attach {name}"


def waiting_for_you(name: str, question: str, prompt: str | None) -> str:
    """`roost spawn`'s one line when the agent asks the person something first.

    >>> waiting_for_you("wt", "Trust this folder?", "held")  # doctest: +NORMALIZE_WHITESPACE
    'wt is waiting for you: Trust this folder?; answer it with roost answer wt … or roost
    attach wt; your prompt is kept and goes in after it'
    """
    kept = "; your prompt is kept and goes in after it" if prompt in ("held", "on-argv") else ""
    return (
        f"{name} is waiting for you: {question}; answer it with roost answer {name} … "
        f"or roost attach {name}{kept}"
    )


def prompt_held(name: str) -> str:
    return (
        f"{name} is not at its input yet: roost holds your prompt and sends it once it is "
        f"(roost ls shows it queued)"
    )


def question(name: str, q: Question) -> str:
    """`roost answer NAME`: what it asks, its choices (the selected one marked), how to answer.

    >>> from roost.core.questions import Choice, Question
    >>> print(question("cc", Question("Trust?", (Choice("1", "No"), Choice("2", "Yes")), 0)),
    ...       end="")  # doctest: +ELLIPSIS
    cc asks: Trust?
      1. No  (selected)
      2. Yes
    answer: roost answer cc CHOICE --question ...
    """
    lines = [f"{name} asks: {q.text}"]
    for i, c in enumerate(q.choices):
        lines.append(f"  {c.key}. {c.label}" + ("  (selected)" if i == q.selected else ""))
    lines.append(f"answer: roost answer {name} CHOICE --question {q.fingerprint}")
    return "\n".join(lines) + "\n"


def question_json(name: str, q: Question) -> dict[str, object]:
    return {
        "name": name,
        "question": q.text,
        "question_id": q.fingerprint,
        "choices": [
            {"key": c.key, "label": c.label, "selected": i == q.selected}
            for i, c in enumerate(q.choices)
        ],
    }


def answered(
    name: str, choice: str, status: str, reason: str | None, held_delivered: bool | None
) -> str:
    """What `roost answer` did and what the agent shows next.

    >>> answered("cc", "Yes", "idle", None, True)
    'answered cc: Yes; it is at its input now; its held prompt went in'
    >>> answered("cc", "Yes", "waiting", "Use this API key?", None)
    'answered cc: Yes; it now asks: Use this API key? (roost answer cc)'
    """
    if status == Status.WAITING:
        after = f"it now asks: {reason or 'another question'} (roost answer {name})"
    elif status == Status.IDLE:
        after = "it is at its input now"
    elif status in (Status.EXITED, Status.STOPPED, Status.LOST):
        after = f"it is {status} now"
    else:
        after = f"it is {status}" + (f": {reason}" if reason else "") + " now"
    if held_delivered is True:
        after += "; its held prompt went in"
    elif held_delivered is False:
        after += "; its held prompt is still held (roost ls shows it)"
    return f"answered {name}: {choice}; {after}"


def without_service(why: str) -> str:
    """What a command says, once, when it works without the roost service (issue 36)."""
    return f"working without the roost service ({why}; roost doctor tells more)"


def woke(name: str, started: bool, pid: int | None, home: str) -> str:
    if started:
        return f"woke {name} (pid {pid}) in home {home}"
    return f"{name} is already running (pid {pid})"


def stopped(name: str, processes: int) -> str:
    if processes:
        return f"stopped {name} ({counted(processes, 'process')}); wake: roost wake {name}"
    return f"{name} was not running"


def no_screen(name: str, state: str, intent: str) -> str:
    """Why an agent has no screen to show, in the word its status uses (core.status).

    >>> no_screen("a", "hibernated", "hibernated")
    'a has no screen: it hibernates (roost wake a)'
    """
    if state == "hibernated":
        why = "it hibernates"
    elif state == "failed":
        why = "its last start failed"
    elif intent == "stopped":
        why = "you stopped it"
    else:  # meant to run: its window went with the tmux server, or was closed
        return (
            f"{name} has no screen: it is lost (its window is gone); roost restore brings "
            f"the workspace back, roost wake {name} this agent"
        )
    return f"{name} has no screen: {why} (roost wake {name})"


def needs_terminal(name: str) -> str:
    """Why `roost attach NAME` refused, before waking anything: tmux attaches a terminal."""
    return (
        f"roost attach needs a terminal, and its input is not one: nothing was woken (run it in "
        f"a terminal; roost wake {name} starts {name} without one)"
    )


def killed_tree(names: Sequence[str]) -> str:
    return f"killed {', '.join(names)}"


def handed_over(name: str, verb: str) -> str:
    """A stop of the agent that runs the command, carried on by a process outside it."""
    return (
        f"{name} runs this command: roost {verb} {name} goes on outside it, and ends this "
        f"command with it (roost events {name} shows it done)"
    )


def removed(name: str) -> str:
    return f"removed {name}"


def hibernates(name: str) -> str:
    return f"{name} hibernates; roost wake {name} brings it back"


def parked(names: Sequence[str]) -> str:
    return f"parked {', '.join(names)}"


def placed(name: str, tab: str, pid: int | None, moved_from: str | None = None) -> str:
    """`roost place`'s line; an agent that already was a tile was moved (from where)."""
    if moved_from is not None:
        return f"moved {name} from {moved_from} to {tab} (pid {pid})"
    return f"{name} is a tile of {tab} (pid {pid})"


def buried(name: str) -> str:
    return f"buried {name}; revive: roost unbury {name}"


def unburied(name: str, tab: str | None) -> str:
    """Where `roost unbury` put it: back in its tab, or parked when that tab is gone."""
    if tab:
        return f"{name} is back in tab {tab}"
    return f"{name} is parked (its tab is gone); roost place {name} --tab TAB"


def pinned(name: str, changed: bool) -> str:
    return f"pinned {name}" if changed else f"{name} was pinned already"


def unpinned(name: str, changed: bool) -> str:
    return f"unpinned {name}" if changed else f"{name} was not pinned"


def linked(child: str, parent: str | None) -> str:
    return f"{child} is linked under {parent}" if parent else f"{child} unlinked"


def layout_edited(name: str, tab: str, edit: str) -> str:
    """The tab view's tile edits (ops.workspace.LAYOUT_EDITS), said the way its keys name them."""
    said = {
        "next": "moved right",
        "prev": "moved left",
        "split-v": "side by side",
        "split-h": "stacked",
        "grow": "grown",
        "shrink": "shrunk",
    }
    if edit == "close":
        return buried(name)
    return f"{name} in tab {tab}: {said.get(edit, edit)}"


def delivered(name: str, how: str) -> str:
    return f"delivered to {name} (confirmed by {how})"


def not_delivered(name: str, why: str) -> str:
    """Why a send failed (an error: `roost send` exits 1 with it)."""
    return f"not delivered to {name}: {why}"


def turn_failed(name: str, failure: str) -> str:
    """A message delivered whose turn then failed (an error: `roost send` exits 1 with it)."""
    return f"{name}'s turn failed: {failure} (the message was delivered)"


def no_reply(name: str, why: str) -> str:
    """`send --wait` found no reply to print (an error: `roost send` exits 1 with it)."""
    return (
        f"no reply from {name} to show: {why} (the message was delivered; roost capture "
        f"{name} shows its screen)"
    )


def restart_policy_set(name: str, policy: str) -> str:
    return f"{name}: restart {policy}"


def reload_refused(failed: Mapping[str, str]) -> str:
    """A reload whose new mode a CLI refused (its agents run again in their previous mode)."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in sorted(failed.items()):
        by_reason.setdefault(reason, []).append(name)  # one reason, said once, with its agents
    why = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())
    return f"reload refused, the agents run in their previous mode again: {why}"


def reloaded(names: Sequence[str]) -> str:
    return f"restarted {', '.join(names)}" if names else "no live agent runs: nothing restarted"


def collected(found: Sequence[tuple[str, str]], dry_run: bool) -> str:
    """`roost gc`'s lines: each agent (name, why) removed, or that would be."""
    verb = "would remove" if dry_run else "removed"
    if not found:
        return "nothing to remove\n"
    return "".join(f"{verb} {name}: {why}\n" for name, why in found)


def imported(count: int, left_off: list[str] | None = None) -> str:
    said = f"imported {count} agents; roost restore starts the tiles"
    if not left_off:
        return said
    return f"{said}\nleft off (`roost import --allow-dangerous FILE` keeps them): " + "; ".join(
        left_off
    )


def approval(name: str, provider: str, args: Sequence[str], program_first: bool) -> str:
    r"""`roost approve`'s account of what it would keep: each argument on its own line, quoted,
    exactly (a backslash or a quote in it escaped) and its control characters visible (a
        file's text never reaches the terminal raw). `program_first`: the args are the whole
    command line (a command agent's), else they follow the CLI's and roost's own.

    >>> print(approval("logs", "command", ["tail", "-f", "it's\\a\x1b[2J"], True), end="")
    logs (command) was imported with this command line, kept aside until you approve it:
      argv[0] 'tail'
      argv[1] '-f'
      argv[2] 'it\'s\\a\x1b[2J'
    >>> print(approval("api", "claude", ["--model", "opus"], False), end="")
    ... # doctest: +NORMALIZE_WHITESPACE
    api (claude) was imported with these arguments for claude (after roost's own), kept
    aside until you approve them:
      arg 1 '--model'
      arg 2 'opus'
    """
    if program_first:
        said = f"{name} ({provider}) was imported with this command line"
        lines = [f"argv[{n}]" for n in range(len(args))]
    else:
        said = f"{name} ({provider}) was imported with these arguments for {provider}"
        said += " (after roost's own)"
        lines = [f"arg {n + 1}" for n in range(len(args))]
    said += ", kept aside until you approve " + ("it" if program_first else "them")
    return f"{said}:\n" + "".join(
        f"  {label} '{visible(_quoted(arg))}'\n" for label, arg in zip(lines, args, strict=True)
    )


def _quoted(arg: str) -> str:
    return arg.replace("\\", "\\\\").replace("'", "\\'")


def approved(name: str) -> str:
    return f"approved {name}'s arguments; wake it: roost wake {name}"


# ---- tabs --------------------------------------------------------------------------------------
def cannot_resume(name: str, why: str) -> str:
    """An imported agent whose conversation is not found here (a warning after an import)."""
    return f"warning: {name} cannot resume its conversation: {why}"


def tab_created(name: str) -> str:
    return f"tab {name} created"


def tab_renamed(old: str, new: str) -> str:
    return f"tab {old} is now {new}"


def tab_closed(name: str, parked_names: Sequence[str]) -> str:
    return f"tab {name} closed" + (f"; parked {', '.join(parked_names)}" if parked_names else "")


def tab_balanced(name: str, tiles: int) -> str:
    return f"tab {name} balanced: {counted(tiles, 'tile')} in an even grid"


def tabs(found: Sequence[tuple[str, list[str], str | None]], as_json: bool) -> str:
    """`roost tab ls`: each tab (name, tile names in order, focused tile's name)."""
    if as_json:
        import json

        return (
            json.dumps(
                [{"name": name, "tiles": tiles, "focus": focus} for name, tiles, focus in found]
            )
            + "\n"
        )
    return "".join(f"{name}: {' | '.join(tiles) or '(empty)'}\n" for name, tiles, _f in found)


# ---- the event log -----------------------------------------------------------------------------
def local_time(stamp: object, zone: tzinfo | None, clock_only: bool = False) -> str:
    """A stored time (ISO 8601 with its offset) for people: in the reader's `zone` (None: as
    stored), without the offset; a value that is no such time is shown as it is. The JSON
    outputs keep the stored ISO 8601 form.

    >>> from datetime import timedelta, timezone
    >>> local_time("2026-11-29T11:59:00.250+00:00", timezone(timedelta(hours=5, minutes=30)))
    '2026-11-29 17:29:00'
    >>> local_time("2026-11-29T11:59:00+00:00", None, clock_only=True), local_time("T", None)
    ('11:59:00', 'T')
    """
    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    if zone is not None and when.tzinfo is not None:
        when = when.astimezone(zone)
    return when.strftime("%H:%M:%S" if clock_only else "%Y-%m-%d %H:%M:%S")


def event_line(event: Event, zone: tzinfo | None = None) -> str:
    """One event for `roost events`: when (in `zone`), whose, what, then its details as
    key=value.

    >>> from roost.core.events import Event
    >>> event_line(Event(1, "id-a", "api", "T", "exited", {"exit_code": 1}))
    'T  api  exited  exit_code=1'
    """
    listed = event.listed()
    extra = " ".join(
        f"{k}={v}" for k, v in listed.items() if k not in ("id", "agent", "at", "kind")
    )
    return (
        f"{local_time(listed['at'], zone)}  {listed['agent']}  {listed['kind']}  {extra}".rstrip()
    )


def event_brief(event: Event, zone: tzinfo | None = None) -> str:
    """One event in the TUI's details: the time of day (in `zone`), what, and a status or an
    exit code.

    >>> from roost.core.events import Event
    >>> event_brief(Event(1, "a", "a", "2026-11-29T11:59:00+00:00", "status", {"status": "idle"}))
    '11:59:00 status idle'
    """
    line = f"{local_time(event.at, zone, clock_only=True)} {event.kind}"
    if event.kind in ("status", "exited"):
        line += f" {event.data.get('status') or event.data.get('exit_code') or ''}"
    return line


# ---- roost watch -------------------------------------------------------------------------------
def watch_news(
    events: Iterable[Mapping[str, object]], shown: Mapping[str, str | None]
) -> list[Mapping[str, object]]:
    """What `roost watch` prints of the `status` events recorded since its last look (by any
    roost command), in the log's order: each change of status (not of its source alone) newer
    than what its first look showed of that agent (`shown`: agent id -> that status's time).

    >>> e = {"agent_id": "a", "status": "idle", "previous": "working", "at": "T2"}
    >>> watch_news([e], {"a": "T1"}) == [e], watch_news([e], {"a": "T2"})
    (True, [])
    >>> watch_news([{**e, "previous": "idle"}], {})
    []
    """
    return [
        e
        for e in events
        if e.get("status") != e.get("previous")
        and str(e.get("at")) > str(shown.get(str(e.get("agent_id"))) or "")
    ]


def watch_line(
    o: Observation, previous: str | None, as_json: bool, zone: tzinfo | None = None
) -> str:
    """One agent as `roost watch`'s first look shows it (see watch_event_line)."""
    return watch_event_line(
        {
            "agent": o.agent.name,
            "status": o.status,
            "previous": previous,
            "source": o.status_source,
            "exit_code": o.exit_code,
            "at": o.status_since,
            "reason": o.status_reason,
        },
        as_json,
        zone,
    )


def watch_event_line(event: Mapping[str, object], as_json: bool, zone: tzinfo | None = None) -> str:
    """One change for `roost watch` (a `status` event): a JSON object for scripts (ISO 8601
    times), else a line for people (times in `zone`)."""
    status, code = event.get("status"), event.get("exit_code")
    crashed = status == Status.EXITED and code not in (None, 0)
    if as_json:
        import json

        return json.dumps(
            {
                "name": event["agent"],
                "status": status,
                "previous": event.get("previous"),
                "source": event.get("source"),
                "exit_code": code,
                "at": event.get("at"),
                "reason": event.get("reason"),
                "crashed": crashed,
            }
        )
    word = f"crashed ({code})" if crashed else (status or Status.UNKNOWN)
    why = f": {event['reason']}" if event.get("reason") else ""
    when = local_time(str(event["at"]), zone) if event.get("at") else ""
    return f"{when}  {event['agent']}: {word} ({event.get('source')}){why}"


def stream_line(
    streamed: Event,
    shown: Mapping[str, str | None],
    as_json: bool,
    zone: tzinfo | None = None,
) -> str | None:
    """One event of the log as `roost watch` prints it, or None: with --json every event, one
    object a line with its `seq` (to resume with --since) and `kind` (a status change keeps
    watch_event_line's fields); for people, status changes only (watch_news's rule). A status
    event not newer than what the first look showed of that agent (`shown`) is not printed.

    >>> from roost.core.events import Event
    >>> e = Event(7, "a", "x", "T2", "status",
    ...           {"status": "idle", "previous": "working", "source": "screen"})
    >>> import json; json.loads(stream_line(e, {}, True))["seq"], stream_line(e, {"a": "T2"}, True)
    (7, None)
    >>> json.loads(stream_line(Event(7, "a", "x", "T2", "bell", {"count": 1}), {}, True))["kind"]
    'bell'
    >>> stream_line(Event(7, "a", "x", "T2", "bell", {}), {}, False) is None
    True
    """
    import json

    event = streamed.streamed()  # the stream's shape, as `roost watch --json` prints it
    seq, kind = streamed.seq, streamed.kind
    if kind == "status":
        if streamed.at <= str(shown.get(streamed.agent_id) or ""):
            return None
        if not as_json:
            return watch_event_line(event, False, zone) if watch_news([event], {}) else None
        line = json.loads(watch_event_line(event, True, zone))
        return json.dumps({"seq": seq, "kind": kind, **line})
    if not as_json:
        return None
    rest = {k: v for k, v in event.items() if k not in ("seq", "kind", "agent", "agent_id")}
    return json.dumps({"seq": seq, "kind": kind, "name": streamed.agent, **rest})


# ---- the user's words (issue 11: words, states and intent) -------------------------------
def few(items: Sequence[str], limit: int) -> str:
    """Up to `limit` items; more are counted.

    >>> few(["a", "b"], 3), few([str(i) for i in range(5)], 3)
    ('a, b', '0, 1, 2 and 2 more')
    """
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 process', '2 processes', '0 tiles'."""
    return f"{n} {noun if n == 1 else plural or noun + ('es' if noun.endswith('s') else 's')}"


def placement_words(placement: str | None, tab: str | None) -> str:
    """Where an agent is, as people say it: 'a tile of main', 'parked', 'buried'."""
    if placement == "tile":
        return f"a tile of {tab}" if tab else "a tile"
    if placement == "detached":
        return "parked"
    return placement or "owned by nothing"


# Characters a POSIX shell takes literally in a bare word: anything else is quoted.
_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-")


def shell_word(text: str) -> str:
    """`text` as one word a POSIX shell reads back unchanged: `$11` stays `$11`.

    >>> print(shell_word("$11"), shell_word("@3"), shell_word("it's"), shell_word(""))
    '$11' @3 'it'"'"'s' ''
    """
    if text and all(c in _SHELL_SAFE for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def command(*words: str, note: str = "") -> str:
    """A command for a person to paste into a shell: each word quoted, a note after `#` (so the
    whole line still pastes as it is)."""
    line = " ".join(shell_word(w) for w in words)
    return f"{line}  # {note}" if note else line


# ---- usage limits (issue 23) -------------------------------------------------------------------
def span(seconds: float) -> str:
    """A duration for people, to the minute: "2 h 10 min", "3 d 4 h", "under a minute".

    >>> span(7800), span(30), span(3 * 86400 + 4 * 3600 + 59)
    ('2 h 10 min', 'under a minute', '3 d 4 h')
    """
    minutes = int(seconds // 60)
    if minutes < 1:
        return "under a minute"
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    return f"{mins} min"


def reset_time(resets_at: float | None, now: float, zone: tzinfo | None) -> str:
    """When a usage limit resets, for people: "17:00 (in 2 h 10 min)" (with the date when it is
    not today in `zone`), or "an unknown time" when the CLI did not say."""
    if resets_at is None:
        return "an unknown time (the CLI gave none)"
    when = datetime.fromtimestamp(resets_at, zone or UTC)
    today = datetime.fromtimestamp(now, zone or UTC).date()
    clock = when.strftime("%H:%M") if when.date() == today else when.strftime("%Y-%m-%d %H:%M")
    return f"{clock} (in {span(resets_at - now)})" if resets_at > now else f"{clock} (passed)"


def limited_until(name: str, resets_at: float | None, now: float, zone: tzinfo | None) -> str:
    """What a send to a limited agent says.

    >>> from datetime import UTC
    >>> limited_until("api", 1_000_000_000 + 7800, 1_000_000_000, UTC)
    'api is limited until 03:56 (in 2 h 10 min)'
    """
    return f"{name} is limited until {reset_time(resets_at, now, zone)}"


def limits_table(
    rows: Sequence[tuple[str, str, Limit, float]],
    now: float,
    zone: tzinfo | None,
    then: Mapping[str, str] | None = None,
) -> str:
    """`roost limits`: one line per limited agent, and what happens at its reset (`then`: by
    name, ops/resume.outlooks)."""
    if not rows:
        return "no agent is limited\n"
    return "".join(
        f"{name}  {provider}  {limit.kind}  resets {reset_time(limit.resets_at, now, zone)}  "
        f"then: {(then or {}).get(name, 'nothing: on-limit is off')}\n"
        for name, provider, limit, _seen in rows
    )


def for_terminal(text: str) -> str:
    r"""A model's words for a terminal: control characters dropped (an escape sequence would be
    the terminal's command), lines and tabs kept.

    >>> for_terminal("a\x1b[2Jb\n\tc\x07")
    'a[2Jb\n\tc'
    """
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
