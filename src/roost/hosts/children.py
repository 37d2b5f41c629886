"""Children on a host (issue 24 part 4; docs/HOSTS.md "Children on a host"): a parent here
creates a child on a named host, messages it, waits for it, and hears of its turns as of a
local child's.

No protocol of roost's own: every step is the host's roost run over OpenSSH (hosts/operations.py):
`spawn --detached`, `send`, `ls --json`, `reply`, and `watch --json --since SEQ`, which the
roost service follows for every host with children (COMPONENT). A status change of a child on
that stream becomes the notice a local child's would (core/notify.py's kinds and words, queued
in store/orchestration.py's queue, delivered by ops/notify.py by the same rules); the change,
its notice and the host's cursor are stored in one transaction, so a reconnect resumes by seq
with nothing missed and nothing doubled.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Collection

from roost.core import notify as notice_rule
from roost.core import scope
from roost.core.delivery import Receipt
from roost.core.errors import RoostError
from roost.core.model import Agent
from roost.core.prompts import prompt_problem
from roost.core.replies import Read
from roost.hosts import childrules as rule
from roost.hosts import operations as hosts
from roost.hosts.rules import split_target
from roost.ops import service
from roost.ops.context import App
from roost.ops.service import Component
from roost.providers import mcpwire
from roost.store import events
from roost.store import hostchildren as rows
from roost.store import orchestration as queue
from roost.system.ssh import Unreachable

HostChild = rows.HostChild


# ---- asking a host -------------------------------------------------------------------------
def _ask(app: App, host: hosts.Host, args: list[str]) -> str:
    """`args` run by the host's roost; its stdout. A refusal (non-zero exit) is one error with
    the host's own words; an unreachable host is ssh's (hosts.run)."""
    found = hosts.run(hosts.reach_of(app), host, args)
    if found.code != 0:
        said = (found.err or found.out).strip().splitlines()
        why = said[-1].removeprefix("roost: ") if said else f"exit {found.code}"
        raise RoostError(f"host {host.name} refused `{args[0]}`: {why}")
    return found.out


def _host(app: App, name: str) -> hosts.Host:
    return hosts.get(hosts.reach_of(app), name)


def _listing(app: App, host: hosts.Host) -> dict[str, dict[str, object]]:
    """The host's agents (its `roost ls --json`), by name."""
    try:
        found = json.loads(_ask(app, host, ["ls", "--json"]))
    except ValueError:
        raise RoostError(f"host {host.name}: its roost ls --json said no JSON") from None
    return {str(a["name"]): a for a in found if isinstance(a, dict) and "name" in a}


def _last_seq(app: App, host: hosts.Host) -> int:
    """The host's newest event: its stream is read from there for a child spawned now."""
    try:
        found = json.loads(_ask(app, host, ["events", "--json", "--limit", "1"]))
    except ValueError:
        raise RoostError(f"host {host.name}: its roost events --json said no JSON") from None
    return int(found[-1]["id"]) if found else 0


def reply_of(app: App, host: hosts.Host, name: str) -> str | None:
    """The child's last answer (the host's `roost reply NAME`); None when there is none or the
    host does not answer (a notice goes out without it rather than not at all)."""
    try:
        found = hosts.run(hosts.reach_of(app), host, ["reply", name, "--json"])
        said = json.loads(found.out).get("reply") if found.code == 0 else None
    except (Unreachable, ValueError, AttributeError):
        return None
    return said if isinstance(said, str) else None


# ---- create ----------------------------------------------------------------------------------
def create(
    app: App,
    parent: Agent | None,
    members: list[scope.Member],
    limits: scope.Limits,
    caller: scope.Caller,
    host_name: str,
    provider: str,
    prompt: str | None,
    cwd: str | None,
    name: str | None,
) -> scope.Created:
    """Spawn a child on `host_name` (parked there, `--detached`, with the prompt) and record it
    here; its name for the parent is `HOST:NAME`. The caller holds the create lock and checked
    the provider and name. A refusal anywhere (no such host, no answer, a name taken there, the
    host's spawn refused) records nothing."""
    host = _host(app, host_name)
    if prompt is not None and (problem := prompt_problem(prompt)):
        raise RoostError(f"invalid prompt: {problem}", code=2)  # as a local spawn, before ssh
    if parent is None:
        raise RoostError("a child on a host needs a parent agent (call from an agent's MCP tools)")
    known = [*members, *_members_on_hosts(app)]
    scope.check_create(caller, known, limits)
    there = _listing(app, host)
    if name is None:
        name = _free_name(parent.name, there)
    elif name in there:
        raise RoostError(f"host {host.name} has an agent named {name!r}; choose another name")
    read = rows.cursor(app.store.conn, host.name)  # followed already: from there, never later
    seq = read if read is not None else _last_seq(app, host)
    made = _spawn_there(app, host, name, provider, cwd)
    # its status: as its host's stream tells it
    child = HostChild(parent.id, host.name, name, str(made["id"]), None, app.store.now_iso())
    with app.store.write() as c:
        rows.insert(c, child, seq)
    mcpwire.mark_in_tree(str(app.paths.home), parent.id)  # its own Stop delivers notices
    app.store.log(parent, "child-created", child=rule.qualified(host.name, name), host=host.name)
    _ensure_service(app)
    # The prompt goes as a message, not on the spawn's command line: the host's `send` waits
    # until the CLI took it and records the turn begun, so a turn that ends before any look
    # there is still one working -> idle line of its stream (store/status.record_turn_begun).
    sent = _first_prompt(app, host, child, prompt) if prompt else None
    return {
        "name": rule.qualified(host.name, name),
        "host": host.name,
        "provider": provider,
        "cwd": made.get("cwd"),
        "placement": "parked",
        "parent": parent.name,
        "prompt_delivered": None if sent is None else sent["delivered"],
        **({"prompt_how": sent["how"]} if sent is not None and not sent["delivered"] else {}),
    }


def _first_prompt(app: App, host: hosts.Host, child: HostChild, prompt: str) -> Receipt:
    """The child's first prompt, as a message (`send`): recorded already, the child is the
    parent's whatever happens to the message; a host that stopped answering meanwhile is a
    prompt not delivered, with ssh's words, not an error that would hide the child."""
    try:
        return send(app, host, child, prompt)
    except RoostError as exc:  # Unreachable is one
        return {"delivered": False, "how": str(exc)}


def _spawn_there(
    app: App, host: hosts.Host, name: str, provider: str, cwd: str | None
) -> dict[str, object]:
    """The host's `roost spawn NAME --detached …` (options as `--opt=value`: a cwd that starts
    with '-' stays a value), and its row of the host's `ls --json` (with its id)."""
    args = ["spawn", name, f"--provider={provider}", "--detached"]
    args += [f"--cwd={cwd}"] if cwd else []  # none: the host roost's own default
    _ask(app, host, args)
    made = _listing(app, host).get(name)
    if made is None or not made.get("id"):
        raise RoostError(f"host {host.name} spawned {name} but does not list it; not recorded")
    return made


def _free_name(base: str, taken: Collection[str]) -> str:
    for _ in range(100):
        name = f"{base[:50]}-{uuid.uuid4().hex[:6]}"
        if name not in taken:
            return name
    raise RoostError("could not find a free name")


def _members_on_hosts(app: App) -> list[scope.Member]:
    """Children on hosts count against their tree's limits as running ones (what they do
    there is the host's to say; asking it at every create would cost a round trip each)."""
    return [_member(c) for c in _every(app)]


def _every(app: App) -> list[HostChild]:
    conn = app.store.conn
    return [c for host in rows.hosts(conn) for c in rows.on_host(conn, host).values()]


def _ensure_service(app: App) -> None:
    """The service follows the host (results arrive only through it): start it if it is not."""
    service.ensure_running(app, timeout=0)


# ---- send, wait, list ------------------------------------------------------------------------
def target(
    app: App, caller: scope.Caller, qualified: str, members: list[scope.Member], write: bool
) -> tuple[hosts.Host, HostChild] | None:
    """(its host, the child) for `HOST:NAME`, None for a plain name; scoped as a local child
    (core/scope.py: the caller's subtree; everything, read-only unless --allow-write, for a
    person's client). `members`: the local agents'."""
    found = split_target(qualified)
    if found is None:
        return None
    child = rows.get(app.store.conn, *found)
    if child is None:
        raise RoostError(f"no agent named {qualified!r} among the children on hosts")
    me = _member(child)
    scope.check_target(caller, me, [*members, *_members_on_hosts(app)], write)
    return _host(app, child.host), child


def _member(child: HostChild) -> scope.Member:
    return scope.Member(
        child.remote_id, rule.qualified(child.host, child.name), child.parent_id, True
    )


def send(app: App, host: hosts.Host, child: HostChild, text: str) -> Receipt:
    """The host's `roost send NAME TEXT`: delivered when its roost says so (exit 0)."""
    # at most 30 s for a busy child to be ready, as a local child's send (orchestrate)
    args = ["send", child.name, "--ready-timeout=30", "--", text]
    found = hosts.run(hosts.reach_of(app), host, args)
    said = (found.out if found.code == 0 else found.err or found.out).strip().splitlines()
    delivered = found.code == 0
    how = said[-1].removeprefix("roost: ") if said else f"exit {found.code}"
    return {"name": rule.qualified(host.name, child.name), "delivered": delivered, "how": how}


def stop(app: App, host: hosts.Host, child: HostChild) -> dict[str, object]:
    """The host's `roost kill NAME`: stopped there, its record kept (a message wakes it)."""
    _ask(app, host, ["kill", child.name])
    return {"name": rule.qualified(host.name, child.name), "stopped": True}


def park(app: App, host: hosts.Host, child: HostChild) -> dict[str, object]:
    """The host's `roost park NAME`: off the screen of its person there, still running."""
    _ask(app, host, ["park", child.name])
    return {"name": rule.qualified(host.name, child.name), "parked": True}


def read(app: App, host: hosts.Host, child: HostChild, messages: int, max_chars: int) -> Read:
    """The host's `roost read NAME --json`: the child's recent conversation, as its host reads
    it (its CLI's record there, or the screen's tail of one that keeps none), named as its
    parent knows it."""
    args = ["read", child.name, f"--messages={messages}", f"--max-chars={max_chars}", "--json"]
    try:
        found = rule.read_answer(json.loads(_ask(app, host, args)), max_chars)
    except ValueError:
        found = None
    if found is None:
        raise RoostError(f"host {host.name}: its roost read --json said no conversation")
    return {"name": rule.qualified(host.name, child.name), **found}


def remove(app: App, host: hosts.Host, child: HostChild) -> dict[str, object]:
    """The host's `roost rm NAME`, then its row here (its host's stream is no longer followed
    for it; nor at all once the host has no children here)."""
    _ask(app, host, ["rm", child.name])
    with app.store.write() as c:
        rows.delete(c, host.name, child.name)
    return {"name": rule.qualified(host.name, child.name), "removed": True}


def statuses(app: App, children: list[HostChild]) -> dict[tuple[str, str], dict[str, object]]:
    """Each child's row of its host's `roost ls --json` (one call per host); a host that does
    not answer gives rows with status None and why."""
    found: dict[tuple[str, str], dict[str, object]] = {}
    for host_name in sorted({c.host for c in children}):
        try:
            listing = _listing(app, _host(app, host_name))
        except RoostError as exc:
            listing = {}
            for c in children:
                if c.host == host_name:
                    found[(c.host, c.name)] = {"status": None, "unreachable": str(exc)}
            continue
        for c in children:
            if c.host == host_name:
                found[(c.host, c.name)] = listing.get(c.name) or {"status": "removed"}
    return found


def of_parent(app: App, parent_id: str | None) -> list[HostChild]:
    return rows.of_parent(app.store.conn, parent_id) if parent_id else []


def waited(
    app: App, child: HostChild, row: dict[str, object], bounded: Callable[[str | None], str | None]
) -> dict[str, object]:
    """wait_for_agents' entry for a child on a host: its status there and its last answer."""
    said = reply_of(app, _host(app, child.host), child.name) if row.get("id") else None
    entry = {
        "name": rule.qualified(child.host, child.name),
        "status": row.get("status"),
        "last_reply": bounded(said),
    }
    return {**entry, "unreachable": row["unreachable"]} if "unreachable" in row else entry


def rows_of(
    app: App, caller: scope.Caller, names: dict[str, str], members: list[scope.Member]
) -> list[dict[str, object]]:
    """list_agents' rows for the children on hosts the caller may see (core/scope.visible),
    as their hosts list them; `names`: the local agents' names by id, `members` theirs."""
    mine = {m.id for m in scope.visible(caller, [*members, *_members_on_hosts(app)])}
    children = [c for c in _every(app) if c.remote_id in mine]
    found = statuses(app, children)
    return [
        {
            "name": rule.qualified(c.host, c.name),
            "provider": found[(c.host, c.name)].get("provider"),
            "parent": names.get(c.parent_id),
            "status": found[(c.host, c.name)].get("status"),
            "state": found[(c.host, c.name)].get("state"),
            "you": False,
            "host": c.host,
        }
        for c in children
    ]


# ---- the service's component: results reach the parent -------------------------------------
PAUSE_MAX = 30.0  # seconds: a dropped stream is retried after 1 s, doubling to this


def on_line(app: App, host: str, event: dict[str, object]) -> str | None:
    """One line of the host's stream: a child's status change stored with its notice and the
    host's cursor, in one transaction. The parent's id when it has a notice to deliver."""
    seq = event.get("seq")
    if not isinstance(seq, int):
        return None  # a first look's line (no --since): never, since a cursor is always kept
    child = rows.get(app.store.conn, host, str(event.get("name")))
    found = rule.change(event) if child else None
    if child is None or found is None:
        if seq % 50 == 0:  # others' lines: the cursor moves now and then (replaying them is
            with app.store.write() as c:  # harmless: they change nothing here)
                rows.set_cursor(c, host, seq)
        return None
    detail = found.detail
    if found.kind == "finished":  # its last words, asked before the transaction
        detail = reply_of(app, _host(app, host), child.name)
    at = app.store.now_iso()
    with app.store.write() as c:
        now = rows.get(c, host, child.name)
        if now is None or (rows.cursor(c, host) or 0) >= seq:
            return None  # read before (a replay), or forgotten meanwhile
        rows.set_status(c, host, child.name, found.status)
        rows.set_cursor(c, host, seq)
        if found.kind is None:
            return None
        qualified = rule.qualified(host, child.name)
        text = notice_rule.text(qualified, found.kind, detail)
        queue.enqueue(c, child.parent_id, child.remote_id, qualified, found.kind, text, at)
        events.append(
            c, child.parent_id, _name_of(app, child.parent_id), at, "notice-queued",
            {"child": qualified, "notice": found.kind},
        )  # fmt: skip
    return child.parent_id


def _name_of(app: App, agent_id: str) -> str:
    agent = app.store.get_by_id(agent_id)
    return agent.name if agent else agent_id


def follow(app: App, host_name: str, stopping: threading.Event) -> None:
    """Follow one host's stream from its cursor until stopped or it has no children here;
    after a drop, again with --since the last seq stored (1 s, doubling to 30 s)."""
    from roost.ops import notify

    pause = 1.0
    while not stopping.is_set():
        seq = rows.cursor(app.store.conn, host_name)
        if seq is None or not rows.on_host(app.store.conn, host_name):
            return
        try:
            host = _host(app, host_name)
            link = hosts.link(hosts.reach_of(app), host)
            args = ["watch", "--json", "--since", str(seq)]
            for text in link.lines(hosts.line(host, args)):
                event = _event(text)
                parent_id = on_line(app, host_name, event) if event else None
                if parent_id is not None:
                    notify.deliver_to(app, parent_id)
                pause = 1.0
                if stopping.is_set():
                    return
            why = "its stream ended"
        except RoostError as exc:
            why = str(exc)
        if stopping.is_set():
            return
        service.say(f"children on {host_name}: {why}; again in {pause:g} s")
        stopping.wait(pause)
        pause = min(pause * 2, PAUSE_MAX)


def _event(text: str) -> dict[str, object] | None:
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _start(app: App) -> Callable[[], None]:
    """Each host with children here followed in a thread of its own."""
    return service.per_host(app, "hostchildren", lambda mine: rows.hosts(mine.store.conn), follow)


COMPONENT = Component(name="hostchildren", start=_start)
