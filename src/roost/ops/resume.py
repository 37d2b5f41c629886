"""Resume at a usage limit's reset (issue 23, part 2), opt-in: the schedule is kept in the store
(store/resumes.py) as soon as a limit is recorded (`ON_STATUS`, a reaction in the status
pipeline's transaction: ops/root.py), and made by `run_due`: the roost service's `resume`
component every CHECK seconds, and `roost restore` after its starts (a resume due while nothing
ran is made at the next chance, once: a resume is claimed in one transaction before it is sent).

Each resume goes through `roost send`'s own path (ops/send.py, `resuming=True`): the wake, the
wait for a ready prompt, the draft check (never typed on top of a draft), the confirmation. A
person's delivered send cancels the agent's resume (`note_send`), and so does a turn that went
on without roost (someone typed). At most one resume per account per pass, the others of that
account pushed `gap` seconds apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from roost.core import resuming
from roost.core.model import INTENT_STOPPED, Agent
from roost.core.settings import Settings
from roost.core.status import Status
from roost.limits.rules import Limit
from roost.ops.context import App, OnStatus
from roost.ops.service import Component, Stop, in_passes
from roost.store import resumes as stored

if TYPE_CHECKING:
    from roost.core.observation import Observation
    from roost.store.db import Connection

# Where each provider keeps its login: agents of one provider and one config folder share it.
CONFIG_DIRS = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "gemini": "GEMINI_CLI_HOME"}
CHECK = 5.0  # seconds between two passes of the service's component
SEND_TIMEOUT = 120.0  # seconds a resume's send may take (a wake included)
Jitter = Callable[[float], float]  # the most seconds -> seconds to add


def _uniform(most: float) -> float:
    """A random delay in [0, most]: spreading, not secrets (random loads only when needed)."""
    if most <= 0:
        return 0.0
    import random

    return random.uniform(0.0, most)


def account(app: App, provider: str) -> str:
    """Provider and config folder: the agents roost starts share its environment, so this is
    one account per provider unless roost runs under another config folder."""
    variable = CONFIG_DIRS.get(provider)
    folder = app.environ.get(variable, "") if variable else ""
    return f"{provider}:{folder or 'default'}"


def policy_of(agent: Agent, policies: Mapping[tuple[str, str], str], settings: Settings) -> str:
    own = policies.get((stored.AGENT, agent.id))
    tab = policies.get((stored.TAB, agent.tab_id)) if agent.tab_id else None
    return resuming.effective(own, tab, settings.limits.on_limit)


def set_policy(app: App, name: str, policy: str, tab: bool = False) -> None:
    """`roost policy NAME --on-limit resume|off|default` (of tab NAME with `tab`)."""
    from roost.core.errors import RoostError
    from roost.store import workspace as wsdb

    if policy not in (*resuming.ON_LIMIT, "default"):
        raise RoostError("--on-limit must be resume, off or default", code=2)
    if tab:
        found = wsdb.find_tab(app.store.conn, name)
        if found is None:
            raise RoostError(f"no tab named {name}", code=1)
        scope, target = stored.TAB, found.id
    else:
        scope, target = stored.AGENT, app.store.require(name).id
    with app.store.write() as c:
        stored.set_policy(c, scope, target, None if policy == "default" else policy)
    _apply_policies(app, [a for a in app.store.agents() if target in (a.id, a.tab_id)])


def _apply_policies(app: App, agents: Sequence[Agent]) -> None:
    """After a policy changed: an agent limited now is scheduled when it is to resume, and its
    resume cancelled when not."""
    from roost.limits import rules as limits
    from roost.store import limits as limit_rows

    now = app.clock.now().timestamp()
    held = {
        name: limit
        for name, _provider, limit, seen_at in limit_rows.seen(app.store.conn)
        if limits.current(limit, seen_at, now)
    }
    with app.store.write() as c:
        policies = stored.policies(c)
        planned = {r.agent_id for r in stored.scheduled(c)}
        for agent in agents:
            if policy_of(agent, policies, app.settings) != resuming.RESUME:
                stored.drop(c, [agent.id])
            elif agent.name in held and agent.id not in planned:
                schedule(app, c, agent, held[agent.name], now)


# ---- scheduling, inside observe.record's transaction ---------------------------------------
def _recorded(
    app: App, c: Connection, changed: Sequence[Observation], at: str, _read: None
) -> None:
    """The status changes just recorded: a turn that ended closes its prompt; a turn that went
    on without roost's resume cancels the waiting resume; a new limit schedules one (when the
    agent's policy says resume)."""
    now = app.clock.now().timestamp()
    stored.close_prompts(
        c, [o.agent.id for o in changed if o.status in (Status.IDLE, Status.ERROR)]
    )
    stored.drop(c, [o.agent.id for o in changed if o.status == Status.WORKING], resuming.WAITING)
    limited = [o for o in changed if o.status == Status.LIMITED and o.limit is not None]
    if not limited:
        return
    policies = stored.policies(c)
    for o in limited:
        if policy_of(o.agent, policies, app.settings) == resuming.RESUME:
            assert o.limit is not None
            schedule(app, c, o.agent, o.limit, now)


ON_STATUS = OnStatus("resume", _recorded)


def schedule(
    app: App, c: Connection, agent: Agent, limit: Limit, now: float, jitter: Jitter | None = None
) -> float:
    """Plan the agent's resume for `limit` (seen `now`): a limit seen again after a resume counts
    one more try (the backoff of an unknown reset). Returns its due time."""
    before = {r.agent_id: r for r in stored.scheduled(c)}
    old = before.get(agent.id)
    tries = (old.tries + 1 if old.state == resuming.SENT else old.tries) if old else 0
    prompt = old.prompt if old else stored.open_prompt(c, agent.id)
    key = account(app, agent.provider)
    wanted = resuming.base_due(limit.resets_at, now, tries, now)
    wanted += (jitter or _uniform)(app.settings.limits.jitter)
    others = [r.due_at for r in before.values() if r.account == key and r.agent_id != agent.id]
    due = resuming.staggered(wanted, others, app.settings.limits.gap)
    stored.put(c, agent.id, key, due, resuming.WAITING, tries, prompt, now)
    return due


def note_send(app: App, name: str, text: str, began: float) -> None:
    """A send of a person's (or an agent's), begun at `began`, was delivered: it supersedes the
    agent's resume planned before it, and its text is the prompt a limit may cut (unless its
    turn already ended: a quick turn recorded before this)."""
    from roost.core.observation import epoch

    agent = app.store.require(name)
    since = epoch(agent.status_since) or 0.0
    ended = agent.status in (Status.IDLE, Status.ERROR) and since >= began
    with app.store.write() as c:
        stored.supersede(c, agent.id, text, began)
        if not ended:
            stored.note_prompt(c, agent.id, text, began)


# ---- making the resumes that are due -------------------------------------------------------
def run_due(app: App, jitter: Jitter | None = None) -> list[str]:
    """Make the resumes that are due, at most one per account; the names told to go on."""
    from roost.ops import observe

    now = app.clock.now().timestamp()
    due = [r for r in stored.scheduled(app.store.conn) if r.due_at <= now]
    if not due:
        return []
    seen = {o.agent.id: o for o in observe.refresh(app)}  # the status, re-checked first
    gap = app.settings.limits.gap
    told: list[str] = []
    accounts: set[str] = set()
    for r in due:
        found = seen.get(r.agent_id)
        if r.account in accounts:  # one per account per pass: the next one `gap` later
            with app.store.write() as c:
                stored.put(
                    c, r.agent_id, r.account, now + gap, r.state, r.tries, r.prompt, r.planned_at
                )
            continue
        if found is None or found.agent.intent == INTENT_STOPPED:
            with app.store.write() as c:  # removed, or stopped by the person: nothing to do
                stored.drop(c, [r.agent_id])
            continue
        if r.state == resuming.SENT:
            _check_sent(app, r, found, now, jitter)
            continue
        if _resume(app, r, found, now, jitter):
            told.append(r.name)
            accounts.add(r.account)
    return told


def _check_sent(
    app: App, r: stored.Resume, found: Observation, now: float, jitter: Jitter | None
) -> None:
    """A resume made earlier: limited again (its reset unknown or later), plan the next try;
    else it is done."""
    with app.store.write() as c:
        if found.status == Status.LIMITED and found.limit is not None:
            schedule(app, c, found.agent, found.limit, now, jitter)
        else:
            stored.drop(c, [r.agent_id], resuming.SENT)


def _resume(
    app: App, r: stored.Resume, found: Observation, now: float, jitter: Jitter | None
) -> bool:
    """Tell the agent to go on; whether the text was delivered."""
    from roost.ops import send

    limit = found.limit if found.status == Status.LIMITED else None
    if limit is not None and limit.resets_at is not None and limit.resets_at > now:
        with app.store.write() as c:  # limited again, with a later reset: wait for that one
            schedule(app, c, found.agent, limit, now, jitter)
        return False
    if found.status == Status.WORKING:  # a turn goes on that roost did not send: the person's
        with app.store.write() as c:
            stored.drop(c, [r.agent_id])
        return False
    check_at = now + resuming.backoff(r.tries)  # when to look whether it went on
    with app.store.write() as c:
        if not stored.claim(c, r.agent_id, r.state, check_at, now):
            return False  # another pass (the service, a restore) made it
    text = resuming.what_to_say(r.prompt)
    try:
        sent = send.send(app, r.name, text, timeout=SEND_TIMEOUT, resuming=True)
    except Exception as exc:  # noqa: BLE001 - one agent's failure must not stop the others
        sent = send.Sent(False, str(exc) or type(exc).__name__)
    agent = found.agent
    if sent.delivered:
        app.store.log(agent, "resumed", prompt=bool(r.prompt), tries=r.tries)
        return True
    retry = now + (resuming.DRAFT_RETRY if sent.draft else resuming.backoff(r.tries))
    with app.store.write() as c:
        stored.put(
            c, r.agent_id, r.account, retry, resuming.WAITING, r.tries, r.prompt, r.planned_at
        )
    app.store.log(agent, "resume_postponed", reason=sent.how)
    return False


# ---- `roost limits`: what will happen ------------------------------------------------------
def outlooks(app: App) -> dict[str, tuple[str, float | None]]:
    """{agent name: (what happens at its reset, due time or None)} for every agent."""
    from roost.core import present
    from roost.system.clock import local_zone

    now = app.clock.now().timestamp()
    zone = local_zone(app.environ)
    policies = stored.policies(app.store.conn)
    planned = {r.name: r for r in stored.scheduled(app.store.conn)}
    found: dict[str, tuple[str, float | None]] = {}
    for agent in app.store.agents():
        policy = policy_of(agent, policies, app.settings)
        r = planned.get(agent.name)
        due = r.due_at if r is not None else None
        said = present.reset_time(due, now, zone) if due is not None else None
        found[agent.name] = (
            resuming.outlook(policy, due, r.state if r else None, now, said),
            due if policy == resuming.RESUME else None,
        )
    return found


# ---- the service's component ---------------------------------------------------------------
def _component_start(app: App) -> Stop:
    """A worker thread makes a pass every CHECK seconds (service.in_passes)."""
    return in_passes(app, "resume", run_due, CHECK, wait=SEND_TIMEOUT)


COMPONENT = Component(name="resume", start=_component_start)
