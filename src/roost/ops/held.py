"""Texts held while an agent asks the person something (issue 34): nothing roost types on its
own goes into a question. A spawn's first prompt is stored here before the agent starts
(intent before effect); `first_prompt` watches the start and delivers it when the CLI is at
its input, or leaves it held when the CLI asks something first (a folder's trust, aider's
.gitignore question, an API key) or is not up in time. `deliver` gives an agent its held
texts, oldest first, each through `ops/send` (confirmed, never into a draft or a question):
`roost answer` calls it once the question is gone, and the roost service's `held` component
at each of the agent's returns to idle, so a held text goes in once, whoever gets there first
(a lock per agent, and each row marked delivered once)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from roost.core import status as rules
from roost.core.errors import RoostError, StartFailed
from roost.core.model import Agent
from roost.core.observation import Observation
from roost.core.status import Status
from roost.ops import observe
from roost.ops.context import App
from roost.ops.service import Component
from roost.providers import mcpwire, traits
from roost.store import events
from roost.store import held as rows
from roost.store.events import StatusChange
from roost.system import locks

TOOLS_WAIT = 20.0  # seconds a first prompt waits for the CLI to list roost's MCP tools
SEND_TIMEOUT = 60.0  # seconds one held text's send may take
# Seconds a spawn's claim on its first prompt outlasts the CLI's start window: the wait for
# the tools and the send itself (the claim is released when the spawn stops watching).
CLAIM_MARGIN = TOOLS_WAIT + SEND_TIMEOUT


@dataclass(frozen=True, slots=True)
class FirstPrompt:
    """What became of a spawn's first prompt."""

    delivered: bool  # the CLI took it (confirmed)
    question: str | None = None  # held: the agent asks the person this first
    how: str | None = None  # what confirmed it, or why it is still held


def hold(
    app: App,
    agent: Agent,
    text: str,
    origin: str,
    *,
    after_tools: bool = False,
    claim_for: float | None = None,
) -> int:
    """Keep `text` for the agent (before its start, for a first prompt). `after_tools`: it
    goes in once the CLI has listed roost's MCP tools; `claim_for`: seconds during which only
    the caller (a spawn watching its start) delivers it."""
    until = None
    if claim_for is not None:
        until = (app.clock.now() + timedelta(seconds=claim_for)).isoformat()
    with app.store.write() as c:
        held_id = rows.hold(
            c,
            agent.id,
            text,
            origin,
            app.store.now_iso(),
            after_tools=after_tools,
            claimed_until=until,
        )
        events.append(
            c, agent.id, agent.name, app.store.now_iso(), "input-held",
            {"origin": origin, "chars": len(text)},
        )  # fmt: skip
    return held_id


def pending(app: App, agent: Agent) -> list[rows.Held]:
    return rows.pending(app.store.conn, agent.id)


def _look(app: App, agent: Agent) -> Observation | None:
    return next((o for o in observe.refresh(app) if o.agent.id == agent.id), None)


def first_prompt(app: App, agent: Agent) -> FirstPrompt:
    """Watch a start whose first prompt is held and claimed by this spawn (`hold` before the
    start): deliver it once the CLI is idle at its input; leave it held when the CLI asks a
    question first, or is not up within its start window, for whoever finds it at its input
    next (`roost answer`, the service). A start that dies raises StartFailed; the prompt stays
    held (a wake's start delivers it)."""
    window = rules.start_window(traits.of(agent.provider).start_time)
    deadline = app.clock.monotonic() + window
    try:
        while True:
            found = _look(app, agent)
            if found is None or not found.alive:
                died = app.store.get_by_id(agent.id)
                reason = died.last_error if died is not None and died.last_error else "it exited"
                raise StartFailed(f"{agent.name}: its start failed: {reason}")
            if found.status == Status.WAITING:
                asked = found.status_reason or "a question on its screen"
                return FirstPrompt(False, question=asked, how="held")
            if found.status == Status.IDLE:
                told = deliver(app, agent, claimant=True)
                if told is not None and (told.delivered or told.question):
                    return FirstPrompt(told.delivered, how=told.how, question=told.question)
            if app.clock.monotonic() >= deadline:
                return FirstPrompt(False, how="not at its input yet: held until it is")
            app.clock.sleep(0.2)
    finally:
        with app.store.write() as c:
            rows.release(c, agent.id)


def _await_tools(app: App, agent: Agent) -> None:
    """Until the agent's CLI has listed roost's tools on the shared endpoint (this launch's
    token, mcp/http.py marks it), at most TOOLS_WAIT s: then its text goes anyway."""
    launch = app.store.launch(agent.id)
    deadline = app.clock.monotonic() + TOOLS_WAIT
    while launch and app.clock.monotonic() < deadline:
        if mcpwire.listed(str(app.paths.home), agent.id) == launch[0]:
            return
        app.clock.sleep(0.05)


@dataclass(frozen=True, slots=True)
class Told:
    delivered: bool  # every held text went in
    how: str | None = None
    question: str | None = None  # what it asks now, when that stopped the delivery


def deliver(app: App, agent: Agent, claimant: bool = False) -> Told | None:
    """Give the agent its held texts, oldest first, while it is idle; None when it has none.
    Each goes through ops/send (its readiness check, draft refusal and confirmation); one that
    is not delivered stays held, and so do those after it. Texts a spawn claimed are its own
    to deliver while its claim lasts (`claimant`: this is that spawn)."""
    from roost.ops import send

    with locks.hold(app.paths.locks, f"{agent.name}.held", timeout=SEND_TIMEOUT * 2):
        waiting = pending(app, agent)
        if not waiting:
            return None
        now = app.store.now_iso()
        if not claimant and any(h.claimed_until and h.claimed_until > now for h in waiting):
            return Told(False, "its spawn is delivering it")
        how = None
        for item in waiting:
            if item.after_tools:
                _await_tools(app, agent)
            found = _look(app, agent)
            if found is None or not found.alive or found.status != Status.IDLE:
                asked = found.status_reason if found and found.status == Status.WAITING else None
                return Told(False, "not at its input", asked)
            try:
                sent = send.send(app, agent.name, item.text, timeout=SEND_TIMEOUT)
            except RoostError as exc:
                sent = None
                how = str(exc)
            if sent is None or not sent.delivered:  # held still: the next idle tries again
                return Told(False, sent.how if sent is not None else how)
            how = sent.how
            with app.store.write() as c:
                if rows.delivered(c, item.id, app.store.now_iso(), sent.how):
                    events.append(
                        c,
                        agent.id,
                        agent.name,
                        app.store.now_iso(),
                        "input-delivered",
                        {"origin": item.origin, "chars": len(item.text), "confirmed_by": how},
                    )
        return Told(True, how)


def deliver_ready(app: App, agent_ids: set[str] | None = None) -> list[str]:
    """Deliver to every agent with held texts that is idle now (or to those of `agent_ids`);
    the names of those that took them."""
    with app.store.write() as c:
        owners = list(dict.fromkeys(h.agent_id for h in rows.pending(c)))
    told = []
    for agent_id in owners:
        if agent_ids is not None and agent_id not in agent_ids:
            continue
        agent = app.store.get_by_id(agent_id)
        if agent is None:
            continue
        result = deliver(app, agent)
        if result is not None and result.delivered:
            told.append(agent.name)
    return told


# ---- the service's component: at each return to idle ------------------------------------
class _Due:
    """Agents whose held texts may go in now, for the component's thread."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.cond = threading.Condition()
        self.stopping = False

    def add(self, ids: set[str]) -> None:
        with self.cond:
            self.ids |= ids
            self.cond.notify()

    def take(self) -> set[str] | None:
        with self.cond:
            while not self.ids and not self.stopping:
                self.cond.wait()
            if self.stopping:
                return None
            taken, self.ids = self.ids, set()
            return taken

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify()


_due = _Due()


def _on_status(app: App, changes: Sequence[StatusChange]) -> None:
    """An agent back at its input (its status idle) may take what is held for it; the sends
    run on the component's own thread, so the service's other components are not held up."""
    idle = {c.agent_id for c in changes if c.status == Status.IDLE}
    if idle:
        _due.add(idle)


def _start(app: App) -> Callable[[], None]:
    """The deliveries run in a thread of their own (service.in_thread); its first pass
    delivers what was held while no service ran."""
    from roost.ops.service import in_thread, say

    _due.stopping = False

    def work(mine: App) -> None:
        due: set[str] | None = None  # the first pass: every agent
        while True:
            try:
                deliver_ready(mine, due)
            except Exception as exc:  # noqa: BLE001 - the next idle tries again
                say(f"held: a delivery failed: {type(exc).__name__}: {exc}")
            due = _due.take()
            if due is None:
                return

    return in_thread(app, "held", work, _due.stop)


COMPONENT = Component(name="held", start=_start, on_status=_on_status)
