"""What `roost mcp` does for an agent that drives agents: create, send to, wait for, read, list,
stop, park and remove its children. Every call is scoped by core/scope.py: a caller acts only on
itself and its subtree. Results are plain dicts (JSON for the MCP client), text bounded.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import datetime
from typing import Any, cast

from roost.core import delivery, present, replies, scope
from roost.core.errors import RoostError
from roost.core.model import INTENT_RUNNING, Agent
from roost.core.names import name_problem
from roost.core.settings import Settings
from roost.core.status import Status
from roost.ops import lifecycle, observe, send
from roost.ops import replies as answers
from roost.ops.context import App
from roost.ops.learn import launch_token
from roost.providers import hooks, traits
from roost.providers.base import get as provider_of
from roost.store import events as event_log
from roost.store import orchestration as queue
from roost.system import locks

MAX_REPLY = 4000  # characters of a reply or conversation handed back to the model
MAX_WAIT = 3600.0
SETTLED = (
    Status.IDLE,
    Status.WAITING,
    Status.LIMITED,
    Status.EXITED,
    Status.STOPPED,
    Status.LOST,
    Status.FAILED,
)


# ---- who is calling ----------------------------------------------------------------------
def caller_from(app: App, allow_write: bool) -> scope.Caller:
    """The calling agent from its environment (ROOST_AGENT_ID, set by roost at launch), checked
    against this roost home; no id: a person's own client."""
    agent_id = app.environ.get("ROOST_AGENT_ID")
    if not agent_id:
        return scope.Caller(None, allow_write)
    home = app.environ.get("ROOST_HOME")
    if home and os.path.realpath(home) != os.path.realpath(app.paths.home):
        raise RoostError(f"ROOST_AGENT_ID belongs to roost home {home}, not {app.paths.home}")
    if app.store.get_by_id(agent_id) is None:
        raise RoostError(f"ROOST_AGENT_ID {agent_id} is no agent of roost home {app.paths.home}")
    return scope.Caller(agent_id, allow_write)


def members(agents: Sequence[Agent]) -> list[scope.Member]:
    return [
        scope.Member(a.id, a.name, a.orchestration_parent, a.intent == INTENT_RUNNING)
        for a in agents
    ]


def limits(settings: Settings) -> scope.Limits:
    return scope.Limits(settings.orchestration.max_children, settings.orchestration.max_tree)


def _target(
    app: App, caller: scope.Caller, name: str, write: bool, self_allowed: bool = False
) -> Agent:
    agent = app.store.get(name)
    agents = app.store.agents()
    if agent is None:
        raise RoostError(f"no agent named {name!r} in your subtree")
    scope.check_target(caller, members([agent])[0], members(agents), write, self_allowed)
    return agent


def _remote(app: App, caller: scope.Caller, name: str, write: bool = True) -> Any:
    """(host, child) for a `HOST:NAME` child on a host in the caller's scope; None for a plain
    name."""
    if ":" not in name:
        return None
    from roost.hosts import children as hostchildren

    return hostchildren.target(app, caller, name, members(app.store.agents()), write)


def _bounded(text: str | None, limit: int = MAX_REPLY) -> str | None:
    return replies.bounded(text, limit)


def _caller_agent(app: App, caller: scope.Caller) -> Agent | None:
    return app.store.get_by_id(caller.agent_id) if caller.agent_id else None


# ---- create ------------------------------------------------------------------------------
def create(
    app: App,
    caller: scope.Caller,
    provider: str,
    prompt: str | None = None,
    cwd: str | None = None,
    name: str | None = None,
    tab: str | None = None,
    host: str | None = None,
) -> scope.Created:
    parent = _caller_agent(app, caller)
    if host is not None and tab is not None:
        raise RoostError("a child on a host is parked there: give a host or a tab, not both")
    if provider not in traits.BY_NAME:
        raise RoostError(
            f"unknown provider {provider!r}; choose one of {', '.join(traits.BY_NAME)}"
        )
    if name is not None and (problem := name_problem(name)):
        raise RoostError(f"invalid name: {problem}")
    # The limits are checked and the child recorded under one lock: two calls racing for the
    # last free place must not both pass the check. (One lock for every tree: creating is rare
    # and takes a second; the key holds a '.', so no agent's name lock is ever the same.)
    with locks.hold(app.paths.locks, "orchestration.create"):
        if host is not None:  # a child on a host (hosts/children.py): its roost spawns it
            from roost.hosts import children as hostchildren

            found = members(app.store.agents())
            return hostchildren.create(
                app, parent, found, limits(app.settings), caller, host, provider, prompt, cwd, name
            )
        scope.check_create(caller, members(app.store.agents()), limits(app.settings))
        if name is None:
            name = _new_name(app, parent.name if parent else provider)
        if app.store.get(name) is not None:
            raise RoostError(f"an agent named {name!r} already exists; choose another name")
        place = lifecycle.Place(
            tab=tab, detached=tab is None, orchestrated_by=parent.name if parent else None
        )
        looked = event_log.last_id(app.store.conn)  # a look at its first turn comes after
        folder = cwd
        if parent is not None:  # a relative folder is the parent's, not this process's (`/`)
            folder = os.path.join(parent.cwd, cwd) if cwd else parent.cwd
        result = lifecycle.spawn(
            app,
            name,
            provider=provider,
            cwd=folder,
            prompt=prompt,
            place=place,
        )
    log = hooks.log_path(str(app.paths.home), result.agent.id)
    child = result.agent
    asks = result.question  # it asks its person something first: the prompt waits behind it
    queued = bool(prompt) and (asks is not None or result.prompt == "held")
    delivered = _first_prompt_seen(app, child, log, prompt) if prompt and not queued else None
    if queued:
        delivered = False
    if delivered:  # its UserPromptSubmit: the turn it began is recorded once
        send.turn_begun(app, child, looked, log, 0, "parent")
    elif delivered is None and prompt:  # a CLI without hooks: typed, its screen the witness
        _asked(app, child)
    if parent is not None:
        app.store.log(parent, "child-created", child=child.name, provider=child.provider)
    return {
        "name": child.name,
        "provider": child.provider,
        "cwd": child.cwd,
        "placement": "tab " + tab if tab else "parked",
        "parent": parent.name if parent else None,
        "prompt_delivered": delivered,
        # its question, when it asks one first (answer_question answers it); the prompt is
        # then "queued": kept by roost (or its CLI) and delivered once it is at its input
        "waiting": asks,
        "prompt": _prompt_fate(prompt, queued, delivered, result.prompt),
    }


def _prompt_fate(
    prompt: str | None, queued: bool, delivered: bool | None, how: str | None
) -> str | None:
    """What became of a child's first prompt, in one word for its parent."""
    if not prompt:
        return None
    if queued:
        return "queued"
    if delivered:
        return "delivered"
    return "on its command line" if how == "on-argv" else "typed"


def _new_name(app: App, base: str) -> str:
    stem = base[:50]
    for _ in range(100):
        name = f"{stem}-{uuid.uuid4().hex[:6]}"
        if app.store.get(name) is None:
            return name
    raise RoostError("could not find a free name")


def _first_prompt_seen(
    app: App, child: Agent, log: str, prompt: str, timeout: float = 15.0
) -> bool | None:
    """Whether the child took its first prompt (its UserPromptSubmit hook); None when its CLI
    reports no hooks (the prompt was typed; its screen is the only witness)."""
    if not traits.of(child.provider).hooks:
        return None
    deadline = app.clock.monotonic() + timeout
    token = launch_token(app, child.id)
    while app.clock.monotonic() < deadline:
        events, _ = hooks.read_since(log, 0, token)
        if any(e == "UserPromptSubmit" for _, e, _p in events):
            return True
        app.clock.sleep(0.1)
    return False


# ---- answer ------------------------------------------------------------------------------
def answer(
    app: App, caller: scope.Caller, name: str, choice: str | None, question_id: str | None
) -> dict[str, object]:
    """A child's open question (no `choice`), or the answer to it (ops/answer.py): only an
    agent in the caller's subtree, never the caller itself."""
    from roost.ops import answer as answering

    child = _target(app, caller, name, write=True)
    if choice is None:
        q = answering.asked(app, child.name).question
        return present.question_json(child.name, q)
    done = answering.answer(app, child.name, choice, expect=question_id)
    return {
        "name": child.name,
        "question": done.question.text,
        "answered": done.choice.label,
        "status": done.status,
        "status_reason": done.reason,
        "held_prompt_delivered": done.held,
    }


# ---- send --------------------------------------------------------------------------------
# An MCP call blocks the calling agent's turn: a send to a busy child gives up after this many
# seconds (not delivered, saying what it waited for) instead of the CLI's minute-long wait.
SEND_TIMEOUT = 30.0


def send_to(
    app: App, caller: scope.Caller, name: str, text: str, idempotency_key: str | None = None
) -> delivery.Receipt:
    """Deliver `text` to a child; the receipt says whether it arrived and how we know. With an
    idempotency key, a retry returns the first attempt's receipt instead of sending again."""
    remote = _remote(app, caller, name)
    if remote is not None:  # a child on a host: its roost delivers (no idempotency key there)
        from roost.hosts import children as hostchildren

        host, child_there = remote
        return {**hostchildren.send(app, host, child_there, text), "duplicate": False}
    child = _target(app, caller, name, write=True)
    if not idempotency_key:
        return {**_deliver(app, caller, child, text), "duplicate": False}
    who = caller.agent_id or ""
    # The key's lock is held by the attempt until its result is stored; the kernel drops it if
    # the process dies (even by SIGKILL), so a claim without a result and without a holder is
    # an abandoned one, never "under way" forever.
    held = ExitStack()
    try:
        held.enter_context(locks.hold(app.paths.locks, _key_lock(who, idempotency_key), timeout=0))
    except RoostError:
        return {
            "delivered": False,
            "how": "an earlier attempt with this idempotency key "
            "is still under way; wait and retry with the same key",
            "duplicate": True,
        }
    with held:
        return _send_once(app, caller, child, text, who, idempotency_key)


def _key_lock(caller: str, key: str) -> str:
    return "request." + hashlib.sha256(f"{caller}\0{key}".encode(errors="replace")).hexdigest()


def _send_once(
    app: App, caller: scope.Caller, child: Agent, text: str, who: str, key: str
) -> delivery.Receipt:
    """An attempt under the key's lock: a key is bound to its child and text."""
    digest = hashlib.sha256(text.encode(errors="replace")).hexdigest()
    with app.store.write() as c:
        claim = queue.claim_request(c, who, key, "send", child.id, digest, app.store.now_iso())
    if claim.state == "other":
        raise RoostError(
            f"idempotency key {key!r} was used for another message (another "
            "child or another text); use a new key for a new message"
        )
    if claim.state == "done" and claim.answer is not None:
        # the receipt it stored (its own JSON, written by finish_request below)
        return {**cast(delivery.Receipt, claim.answer), "duplicate": True}
    earlier = _taken_since(app, child, text, claim.at) if claim.state == "abandoned" else None
    if earlier is not None:  # the dead attempt got as far as the child: never type it twice
        with app.store.write() as c:
            queue.finish_request(c, who, key, earlier)
        return {**earlier, "duplicate": True}
    try:
        receipt = _deliver(app, caller, child, text)
    except BaseException:
        with app.store.write() as c:
            queue.forget_request(c, who, key)
        raise
    with app.store.write() as c:
        queue.finish_request(c, who, key, receipt)
    return {**receipt, "duplicate": False}


def _taken_since(app: App, child: Agent, text: str, at: str | None) -> delivery.Receipt | None:
    """The receipt of an abandoned attempt that the child took anyway: its UserPromptSubmit
    with this text since the claim (CLIs with hooks); None when there is no such sign."""
    if at is None or not traits.of(child.provider).hooks:
        return None
    since = datetime.fromisoformat(at).timestamp() - 1
    events, _ = hooks.read_since(
        hooks.log_path(str(app.paths.home), child.id), 0, launch_token(app, child.id)
    )
    if any(
        e == "UserPromptSubmit" and ts >= since and delivery.same_message(p.get("prompt"), text)
        for ts, e, p in events
    ):
        return {
            "name": child.name,
            "delivered": True,
            "how": "hook (taken by an earlier attempt that did not finish)",
        }
    return None


def _deliver(app: App, caller: scope.Caller, child: Agent, text: str) -> delivery.Receipt:
    if caller.agent_id is not None:  # a person's own client is not limited
        wake_within_limits(app, child)
    sent = send.send(app, child.name, text, timeout=SEND_TIMEOUT)
    receipt: delivery.Receipt = {"name": child.name, "delivered": sent.delivered, "how": sent.how}
    if sent.failure is not None:
        receipt["turn_failed"] = sent.failure  # it took the message; its turn failed at once
    if sent.delivered and not traits.of(child.provider).hooks:  # with hooks: send did it
        _asked(app, child)
    parent = _caller_agent(app, caller)
    if parent is not None:
        app.store.log(parent, "child-sent", child=child.name, delivered=sent.delivered)
    return receipt


def wake_within_limits(app: App, child: Agent) -> None:
    """Wake a stopped or hibernated child (a message or a notice for it): that counts against
    the limits as a creation does, checked and done under the same lock (a stop, a create and a
    message racing for the last free place must not all pass)."""
    if child.intent == INTENT_RUNNING:
        return  # it already counts
    with locks.hold(app.paths.locks, "orchestration.create"):
        found = members(app.store.agents())
        target = next((m for m in found if m.id == child.id), None)
        if target is None:
            raise RoostError(f"{child.name} was removed meanwhile")
        scope.check_wake(target, found, limits(app.settings))
        if not target.live:
            lifecycle.wake(app, child.name, hold=False)  # send watches it get ready


def _asked(app: App, child: Agent) -> None:
    """The parent gave a child whose CLI has no hooks a turn: it is working now, whatever a
    look saw before (its screen may not show the turn yet), so the end of this turn is a change
    (working -> idle) that notifies the parent. (With hooks: send.turn_begun.)"""
    from roost.store import status as listing

    at = app.store.now_iso()
    with app.store.write() as c:
        listing.record_status(c, child.id, child.name, "working", "parent", at)


# ---- wait, read, list --------------------------------------------------------------------
def wait(
    app: App, caller: scope.Caller, names: Sequence[str] | None = None, timeout: float = 300.0
) -> dict[str, object]:
    """Wait until each named child (default: every direct child) is idle, waiting, exited,
    stopped or failed, or the timeout passes. Each child's status and last reply."""
    from roost.hosts import children as hostchildren

    timeout = max(0.0, min(timeout, MAX_WAIT))
    if names:
        far = [r[1] for n in names if (r := _remote(app, caller, n, False)) is not None]
        targets = [
            _target(app, caller, n, write=False, self_allowed=False) for n in names if ":" not in n
        ]
    else:
        far = hostchildren.of_parent(app, caller.agent_id)  # and its children on hosts
        targets = [
            a
            for a in app.store.agents()
            if caller.agent_id is not None and a.orchestration_parent == caller.agent_id
        ]
        if not targets and not far:
            return {"timed_out": False, "children": []}
    deadline = app.clock.monotonic() + timeout
    while True:
        found = {o.agent.id: o for o in observe.refresh(app)}
        states = {a.id: (found[a.id].status if a.id in found else "removed") for a in targets}
        done = all(s in SETTLED or s == "removed" or not found[i].alive for i, s in states.items())
        there = hostchildren.statuses(app, far) if far else {}
        done = done and all(r.get("status") in (*SETTLED, "removed") for r in there.values())
        if done or app.clock.monotonic() >= deadline:
            break
        app.clock.sleep(0.3)
    settled_far = [c for c in far if there[(c.host, c.name)].get("status") in SETTLED]
    if caller.agent_id is not None:
        from roost.ops import notify

        notify.seen_by_parent(
            app,
            caller.agent_id,
            [a.id for a in targets if states[a.id] in SETTLED] + [c.remote_id for c in settled_far],
        )
    return {
        "timed_out": not done,
        "children": [
            {"name": a.name, "status": states[a.id], "last_reply": _bounded(answers.last(app, a))}
            for a in targets
        ]
        + [hostchildren.waited(app, c, there[(c.host, c.name)], _bounded) for c in far],
    }


def read(
    app: App, caller: scope.Caller, name: str, messages: int = 10, max_chars: int = MAX_REPLY
) -> replies.Read:
    """The child's last `messages` messages from its CLI's own record (claude's transcript,
    codex's rollout, gemini's chat file, aider's chat history); the tail of its screen only
    when its CLI keeps none (a `command`), said so in `note`. A hibernated child is not woken."""
    messages = max(1, min(messages, 100))
    max_chars = max(200, min(max_chars, 20_000))
    remote = _remote(app, caller, name, write=False)
    if remote is not None:  # a child on a host: its roost reads it
        from roost.hosts import children as hostchildren

        host, far = remote
        return hostchildren.read(app, host, far, messages, max_chars)
    child = _target(app, caller, name, write=False, self_allowed=True)
    found = recorded_messages(app, child)
    if found is None:
        return _screen_instead(app, child, max_chars)
    if not found:
        return {"name": child.name, "source": "none", "note": f"{child.name}: {NOTHING_RECORDED}"}
    fitted = replies.fit(found[-messages:], max_chars)
    return {"name": child.name, "source": "transcript", "messages": fitted}


NOTHING_RECORDED = "its CLI's record of its conversation holds no message yet"
NO_RECORD = "its CLI keeps no record of its conversation"


def recorded_messages(app: App, agent: Agent) -> list[dict[str, str]] | None:
    """The agent's messages as its CLI's own record holds them, oldest first, each {role:
    user | assistant, text}; None when its CLI keeps no record roost can read."""
    current = app.store.get_by_id(agent.id) or agent  # its session id may be known by now
    found = provider_of(agent.provider).messages(current, app.environ, app.paths.home)
    if found is None:
        return None
    return [
        {"role": "user" if role == "user" else "assistant", "text": text.strip()}
        for role, text in found
        if text.strip()
    ]


def _screen_instead(app: App, child: Agent, max_chars: int) -> replies.Read:
    """For a CLI that keeps no record: the tail of its live screen, or nothing (never woken)."""
    view = lifecycle.find_view(app, child.name)
    if view.pane is not None and not view.pane.dead:
        screen = app.tmux.capture(view.pane.pane_id, 200).rstrip()
        return {
            "name": child.name,
            "source": "screen",
            "note": f"{child.name}: {NO_RECORD}; the tail of its screen instead",
            "screen": _bounded(screen, max_chars) or "",
        }
    return {
        "name": child.name,
        "source": "none",
        "note": f"{child.name} is not running and {NO_RECORD}",
    }


def tree(app: App, caller: scope.Caller) -> list[dict[str, object]]:
    """The caller's subtree (everything, for a person's client) with statuses, parents first."""
    found = {o.agent.id: o for o in observe.refresh(app)}
    agents = app.store.agents()
    seen = scope.visible(caller, members(agents))
    names = {a.id: a.name for a in agents}
    by_id = {a.id: a for a in agents}
    rows: list[dict[str, object]] = []
    for m in seen:
        agent = by_id[m.id]
        o = found.get(m.id)
        rows.append(
            {
                "name": agent.name,
                "provider": agent.provider,
                "parent": names.get(agent.orchestration_parent or ""),
                "status": o.status if o else None,
                "state": o.state if o else None,
                "you": m.id == caller.agent_id,
            }
        )
    # and the children on hosts, as their hosts list them
    from roost.hosts import children as hostchildren

    return rows + hostchildren.rows_of(app, caller, names, members(agents))


# ---- stop, park, remove ------------------------------------------------------------------
def stop(app: App, caller: scope.Caller, name: str) -> dict[str, object]:
    remote = _remote(app, caller, name)
    if remote is not None:  # a child on a host: its roost stops it
        from roost.hosts import children as hostchildren

        return hostchildren.stop(app, *remote)
    child = _target(app, caller, name, write=True)
    pids = lifecycle.kill(app, child.name)
    return {"name": child.name, "stopped": True, "pids": pids}


def park(app: App, caller: scope.Caller, name: str) -> dict[str, object]:
    from roost.hosts import children as hostchildren
    from roost.ops import workspace

    remote = _remote(app, caller, name)
    if remote is not None:  # a child on a host: off its person's screen there
        return hostchildren.park(app, *remote)
    child = _target(app, caller, name, write=True)
    workspace.park(app, child.name)
    return {"name": child.name, "parked": True}


def remove(app: App, caller: scope.Caller, name: str, confirm: bool) -> dict[str, object]:
    remote = _remote(app, caller, name)
    if remote is not None and confirm:  # a child on a host: its roost removes it
        from roost.hosts import children as hostchildren

        return hostchildren.remove(app, *remote)
    child = _target(app, caller, name, write=True) if remote is None else None
    if not confirm:
        raise RoostError(
            f"removing {child.name if child else name} forgets it for good (its record and "
            "files); call again with confirm=true if that is what you want"
        )
    assert child is not None
    lifecycle.rm(app, child.name)
    return {"name": child.name, "removed": True}


# ---- review: a child's change, comments on it, and sending them ------------------------------
def read_diff(
    app: App, caller: scope.Caller, name: str, file: str | None, stat_only: bool, max_chars: int
) -> dict[str, object]:
    """The change in an agent's checkout (itself or one of its subtree) against the commit it
    branched from, as `roost diff` shows it: its files with their counts, and (unless
    `stat_only`) the patch, at most `max_chars` characters of it (the rest named)."""
    from roost.review import operations as review
    from roost.review import rules as diffs

    max_chars = max(200, min(max_chars, 50_000))
    agent = _target(app, caller, name, write=False, self_allowed=True)
    target = review.target(app, agent.name)
    found = review.summary(app, target, file)
    result: dict[str, object] = {
        "name": agent.name,
        "base": found.base,
        "against": found.against,
        "branch": found.branch,
        "files": [diffs.file_json(f, hunks=False) for f in found.files],
    }
    if stat_only:
        return result
    patch: list[str] = []
    used = 0
    cut = False
    for f in review.files(app, target, diffs.Budget(), file):
        for line in diffs.render_file(f, agent.name):
            if used + len(line) > max_chars:
                cut = True
                break
            patch.append(line)
            used += len(line)
        if cut:
            break
    result["patch"] = "".join(patch)
    if cut:
        result["note"] = f"cut at {max_chars} characters: ask for one file with `file`"
    return result


def comment_on(
    app: App, caller: scope.Caller, name: str, file: str, line: int, end_line: int | None, text: str
) -> dict[str, object]:
    """A review comment on lines of a child's change, kept until sent (send_review)."""
    from roost.review import operations as review
    from roost.review import rules as diffs

    child = _target(app, caller, name, write=True)
    made = review.comment(app, child.name, file, line, end_line or line, text)
    seen = next(s for s in review.comments(app, child.name) if s.comment.id == made.id)
    return diffs.comment_json(seen)


def send_review(app: App, caller: scope.Caller, name: str) -> dict[str, object]:
    """Send a child its open review comments as one acknowledged message."""
    from roost.review import operations as review

    child = _target(app, caller, name, write=True)
    sent = review.send(app, child.name)
    return {
        "name": child.name,
        "delivered": sent.delivered,
        "how": sent.how,
        "comments_sent": len(sent.ids) if sent.delivered else 0,
        "comments_left": sent.left if sent.delivered else sent.left + len(sent.ids),
    }


# ---- recall: what agents said, found -----------------------------------------------------------
MAX_HITS = 50


def search_conversations(
    app: App,
    caller: scope.Caller,
    query: str,
    agent: str | None,
    role: str | None,
    since: str | None,
    limit: int,
) -> dict[str, object]:
    """The messages of recorded conversations that match `query` (roost search), best first:
    an agent searches its own subtree's (every agent's when `[recall] agents_see = "all"`), a
    person's own client every agent's. Each hit names the agent, its turn and a snippet."""
    from roost.recall import operations as recall
    from roost.recall import rules as recall_rules

    limit = max(1, min(limit, MAX_HITS))
    ids = None
    if caller.agent_id is not None and app.settings.recall.agents_see == "subtree":
        ids = tuple(m.id for m in scope.visible(caller, members(app.store.agents())))
    try:
        after = recall_rules.moment(since, app.clock.now()) if since else None
    except ValueError as exc:
        raise RoostError(f"search: {exc}") from None
    filters = recall.Filters(agent=agent, role=role, since=after, agent_ids=ids)
    hits = recall.fresh_search(app, query, filters, limit)
    return {
        "query": query,
        "scope": "subtree" if ids is not None else "all",
        "hits": [h.as_json() for h in hits],
    }


def merge_child(
    app: App, caller: scope.Caller, name: str, mode: str, files: Sequence[str]
) -> dict[str, object]:
    """Take a child's committed work (roost merge) into the caller's own worktree: its branch
    moves and its files follow, with every refusal of `roost merge` (the child mid-turn, the
    worktree dirty, a predicted conflict...). Into the person's main checkout only for a
    caller the person allowed to write (`roost mcp --allow-write`)."""
    from roost.merge import operations as merging
    from roost.store import worktrees as wtdb

    child = _target(app, caller, name, write=True)
    own = wtdb.of_agent(app.store.conn, caller.agent_id) if caller.agent_id else None
    if own is None and not caller.allow_write:
        raise RoostError(
            "you have no worktree of your own to merge into; into the person's main checkout "
            "only when they allow it (roost mcp --allow-write)"
        )
    done = merging.merge(
        app, child.name, mode, files, into_checkout=own.path if own is not None else None
    )
    p = done.plan
    return {
        "name": child.name,
        "merged": True,
        "into": p.target,
        "checkout": p.checkout,
        "mode": p.mode,
        "commit": p.result,
        "was": p.before,
        "commits": p.commits,
        "uncommitted_left": p.uncommitted,
        "told": [t.name for t in done.told],
    }
