"""Agent homes: spawn, wake, kill, rm, attach, capture. The imperative shell over store and tmux.

Order of work in every operation: take the agent's file lock, read the store, ask tmux (one
`list-panes -a`), act on tmux, then write the store in a short BEGIN IMMEDIATE transaction.
No transaction is ever open across a tmux call.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from roost.core import lineage, orphans, present
from roost.core import status as status_rules
from roost.core import workspace as ws
from roost.core.clock import iso
from roost.core.errors import HeldStopped, NeedsPerson, RoostError, StartFailed
from roost.core.model import (
    INTENT_HIBERNATED,
    INTENT_RUNNING,
    INTENT_STOPPED,
    Agent,
)
from roost.core.names import check_name
from roost.core.observation import Observation
from roost.core.pane import Pane
from roost.core.present import command, shell_word
from roost.core.prompts import prompt_problem
from roost.core.reconcile import agent_panes, view
from roost.core.status import Status
from roost.ops import held, mcpendpoint, observe
from roost.ops.context import IN_KEEPER, IN_SUPERVISOR, App, started_by_tmux
from roost.ops.learn import apply_hook_log, learn_session_ids
from roost.providers import base as prov
from roost.providers import hooks, mcpwire
from roost.store import agents as agent_rows
from roost.store import held as held_rows
from roost.store import hostchildren, intents
from roost.store import workspace as wsdb
from roost.store import worktrees as wtdb
from roost.store.db import Connection, NameTaken
from roost.system import handover, locks, procs
from roost.tmux.client import HISTORY_LIMIT, DuplicateSession, TmuxError, to_pane
from roost.worktrees import operations as worktrees

KEEPER = Path(__file__).parent.parent / "keeper.sh"  # a path live tmux servers still run
UTF8 = "C.UTF-8"
# The CLIs seen to send a command-line prompt before their MCP servers connect (Claude Code
# 2.1.332: docs/PROVIDERS.md): on the shared endpoint their first prompt is typed once they
# have listed roost's tools. Codex and Gemini keep theirs on the command line (not checked).
HOLDS_FIRST_PROMPT = ("claude",)
SETTLED = 2.0  # seconds a start's status holds still before roost takes it as what it shows

NOT_PASSED_ON = (
    "TMUX",
    "TMUX_PANE",
    IN_KEEPER,
    IN_SUPERVISOR,  # to an agent
    lineage.TOKEN_ENV,
)


# ---- pure helpers ------------------------------------------------------------------------
def agent_environment(
    caller: dict[str, str], agent: Agent, roost_home: Path, socket: str, token: str
) -> dict[str, str]:
    """The caller's environment (API keys included) plus roost's tags and this launch's token
    (core/lineage.py), in a UTF-8 locale."""
    env = {k: v for k, v in caller.items() if k not in NOT_PASSED_ON}
    env.update(
        ROOST_AGENT_ID=agent.id,
        ROOST_AGENT_NAME=agent.name,
        ROOST_HOME=str(roost_home),
        ROOST_TMUX_SOCKET=socket,
    )
    env[lineage.TOKEN_ENV] = token
    # Agent TUIs draw with Unicode; a C/POSIX locale garbles them. Fix only what is not UTF-8.
    if not _is_utf8(env.get("LANG", "")):
        env["LANG"] = UTF8
    for key in ("LC_ALL", "LC_CTYPE"):
        if env.get(key) and not _is_utf8(env[key]):
            env[key] = UTF8
    return env


def _is_utf8(locale_name: str) -> bool:
    return locale_name.replace("-", "").lower().endswith("utf8")


def roost_command() -> list[str]:
    """How a keeper calls roost back: this interpreter, this package. `-P`: never import from
    the working directory (a project holding a `roost/` folder must not run as roost)."""
    return [sys.executable, "-P", "-m", "roost"]


@dataclass(frozen=True, slots=True)
class WakeResult:
    agent: Agent
    started: bool  # False: it was already running
    pid: int | None
    # A spawn's first prompt: "delivered" (the CLI took it), "held" (roost holds it until the
    # agent is at its input: ops/held.py), "on-argv" (on its command line: its CLI holds it)
    prompt: str | None = None
    question: str | None = None  # what the agent asks the person first, when it does
    # Its CLI was started to bring back its conversation (provider_session_id, when its CLI
    # has ids), not a new one, and it is no program without any (restore's report says so)
    resumed: bool = False


# ---- reading -----------------------------------------------------------------------------
def find_view(app: App, name: str) -> Observation:
    agent = app.store.require(name)
    return view(agent, agent_panes(app.tmux.list_panes()).get(agent.id))


# ---- spawn and wake ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Place:
    """Where a new agent goes in the workspace, and whom it is linked to."""

    tab: str | None = None  # default: the tab "main"
    split: str | None = None  # right, below (or the old v, h); None: where it stays balanced
    detached: bool = False  # parked: running now, hibernated at the next restore
    parent: str | None = None  # linked parent (a name)
    orchestrated_by: str | None = None  # orchestration parent (a name)


def spawn(
    app: App,
    name: str,
    provider: str | None = None,
    cwd: str | None = None,
    home: str | None = None,
    dangerous: bool | None = None,
    prompt: str | None = None,
    args: tuple[str, ...] = (),
    place: Place = Place(),
    restart: str = "never",
    mcp: bool = True,
    worktree: worktrees.Ask | None = None,
    first_args: Callable[[Agent], list[str]] | None = None,
) -> WakeResult:
    """`first_args`: words after the executable for this first start only (a fork's resume of
    the original's conversation), given the stored agent."""
    check_name(name)
    if prompt is not None and (problem := prompt_problem(prompt)):
        raise RoostError(f"invalid prompt: {problem}", code=2)
    if restart not in ("never", "on-failure"):
        raise RoostError("--restart must be never or on-failure", code=2)
    if home is not None:
        check_name(home, "home name")
    if place.tab is not None:
        check_name(place.tab, "tab name")
    direction = split_direction(place.split)
    impl = prov.get(provider or "claude")
    if dangerous is None:  # the workspace's mode (`roost reload --dangerous` sets it)
        dangerous = wsdb.get_setting(app.store.conn, "dangerous") == "1"
    workdir = _check_cwd(cwd or os.getcwd())
    parent = app.store.require(place.parent) if place.parent else None
    orchestrator = app.store.require(place.orchestrated_by) if place.orchestrated_by else None
    agent = Agent(
        id=str(uuid.uuid4()),
        name=name,
        provider=impl.name,
        cwd=workdir,
        home=home or name,
        args=tuple(args),
        dangerous=dangerous,
        provider_session_id=impl.new_session_id(),
        created_at=app.store.now_iso(),
        intent=INTENT_RUNNING,
        last_active_at=app.store.now_iso(),
        linked_parent=parent.id if parent else None,
        orchestration_parent=orchestrator.id if orchestrator else None,
        orchestration_root=(orchestrator.orchestration_root or orchestrator.id)
        if orchestrator
        else None,
        restart_policy=restart,
        mcp=mcp,
    )

    tree: wtdb.Row | None = None

    def put_in_workspace(c: Connection) -> None:
        if tree is not None:
            wtdb.insert(c, tree)
        if place.detached:
            tab = wsdb.find_tab(c, place.tab or wsdb.DEFAULT_TAB)
            if place.tab and tab is None:
                tab = wsdb.create_tab(c, place.tab)
            wsdb.park(c, agent.id, project_tab=tab)
        else:
            wsdb.add_tile(
                c, agent.id, wsdb.ensure_tab(c, place.tab or wsdb.DEFAULT_TAB), direction=direction
            )

    with locks.hold(app.paths.locks, name):
        existing = app.store.get(name)
        if existing is not None:
            return _spawn_existing(app, existing, provider, cwd, home, args)
        exe = impl.executable(agent, app.settings, app.environ)  # fail before storing anything
        app.tmux.require_version()
        # A server that does not answer (stopped, hung) fails the spawn here, within the time
        # limit, before a record exists: it would otherwise be left `failed`, never started.
        app.tmux.list_panes()
        if worktree is not None:  # made before the record: a crash between is adopted later
            tree = worktrees.prepare(app, agent, worktree, workdir)
            agent = agent.replace(cwd=tree.path)
        try:
            app.store.insert(agent, then=put_in_workspace)
        except NameTaken:  # created by a roost that does not take locks (an import, say)
            raise RoostError(f"agent {name!r} already exists") from None
        app.store.log(
            agent,
            "spawned",
            provider=agent.provider,
            cwd=agent.cwd,
            placement="detached" if place.detached else "tile",
            **({"orchestrated_by": orchestrator.name} if orchestrator else {}),
        )
        endpoint = _prepare_mcp(app, agent)
        # On the shared endpoint a first prompt is typed once the CLI has roost's tools:
        # given on its command line, the CLI sends it before its MCP servers connect.
        hold = bool(endpoint) and agent.provider in HOLDS_FIRST_PROMPT
        on_argv = prompt if prompt and not hold and impl.prompt_argv(prompt) is not None else None
        if prompt and on_argv is None:  # held before the start: never typed into a question
            watch = status_rules.start_window(impl.traits.start_time) + held.CLAIM_MARGIN
            held.hold(app, agent, prompt, held_rows.PROMPT, after_tools=hold, claim_for=watch)
        argv = impl.start_argv(agent, exe, on_argv, app.paths.home)
        with _failure_recorded(app, agent):
            if first_args is not None:
                argv[1:1] = first_args(agent)
            result = _launch(app, agent, argv)
    _check_held(app, result)
    if prompt and on_argv is None:
        told = held.first_prompt(app, result.agent)
        fate = "delivered" if told.delivered else "held"
        return dataclasses.replace(result, prompt=fate, question=told.question)
    if prompt:  # on its command line: the CLI keeps it through its own questions
        return dataclasses.replace(result, prompt="on-argv", question=_asks(app, result.agent))
    return result


def _asks(app: App, agent: Agent) -> str | None:
    """What the agent asks the person first (its question's words), if it does: looked at
    until it waits, or has shown the same other status for SETTLED s (a CLI draws its input
    and its busy footer before its start-up question, Codex 0.169 for one), at most its
    start window."""
    deadline = app.clock.monotonic() + status_rules.start_window(
        prov.get(agent.provider).traits.start_time
    )
    last, since = None, app.clock.monotonic()
    while True:
        found = next((o for o in observe.refresh(app) if o.agent.id == agent.id), None)
        if found is None or not found.alive:
            return None
        if found.status == Status.WAITING:
            return found.status_reason or "a question on its screen"
        now = app.clock.monotonic()
        if found.status != last:
            last, since = found.status, now
        elif last not in ("starting", None) and now - since >= SETTLED:
            return None
        if now >= deadline:
            return None
        app.clock.sleep(0.2)


def split_direction(split: str | None) -> str | None:
    """A --split word as the stored letter (None: where the layout stays balanced)."""
    try:
        return ws.direction_of(split)
    except ws.LayoutError as exc:
        raise RoostError(str(exc), code=2) from None


def _spawn_existing(
    app: App,
    agent: Agent,
    provider: str | None,
    cwd: str | None,
    home: str | None,
    args: tuple[str, ...],
) -> WakeResult:
    current = view(agent, agent_panes(app.tmux.list_panes()).get(agent.id))
    if current.state == "running":
        raise RoostError(
            f"agent {agent.name!r} already exists and is running (roost attach {agent.name})"
        )
    clashes = [
        what
        for what, given, have in (
            ("provider", provider, agent.provider),
            ("home", home, agent.home),
            ("cwd", cwd and os.path.realpath(cwd), agent.cwd),
            ("arguments", args or None, agent.args),
        )
        if given is not None and given != have
    ]
    if clashes:
        raise RoostError(
            f"agent {agent.name!r} already exists with another {clashes[0]}; "
            f"`roost wake {agent.name}` wakes it as it was, `roost rm {agent.name}` "
            "forgets it"
        )
    return _wake_locked(app, agent, fresh=False)


def wake(
    app: App,
    name: str,
    fresh: bool = False,
    hold: bool = True,
    session: str | None = None,
    hold_for: float | None = None,
    unless_stopped: bool = False,
) -> WakeResult:
    """Start the agent unless it runs; `session` (an id of its history) resumes that
    conversation. `hold`: watch the start (ops.holding) and fail with the CLI's last words when
    it dies at once, for at most `hold_for` seconds (default: the whole hold window); a restore
    watches its starts together instead. `unless_stopped`: a wake for roost's own reasons (a
    notice): HeldStopped when its person stopped it, decided under the agent's lock, so a
    `roost kill` that ends while the notice was on its way is never undone."""
    check_name(name)
    if session is not None and fresh:
        raise RoostError(
            "--session and --fresh exclude each other: --session resumes an "
            "earlier conversation, --fresh starts a new one",
            code=2,
        )
    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        if unless_stopped and agent.intent == INTENT_STOPPED:
            raise HeldStopped(f"{name}: stopped by its person")
        worktrees.check_present(app, agent)  # never started elsewhere than its worktree
        if session is not None:
            agent = _choose_session(app, agent, session)
        result = _wake_locked(app, agent, fresh)
    if hold:
        _check_held(app, result, hold_for)
    return result


def _check_held(app: App, result: WakeResult, hold_for: float | None = None) -> None:
    """A start that died at once is a failed start: its reason (recorded as `last_error` by
    ops.holding) as an error."""
    if not result.started:
        return
    from roost.ops import holding

    reason = (
        holding.held(app, result.agent)
        if hold_for is None
        else holding.held(app, result.agent, hold_for)
    )
    if reason is not None:
        raise StartFailed(
            f"{result.agent.name}: {reason} (roost capture {result.agent.name} shows its screen)"
        )


def _choose_session(app: App, agent: Agent, session: str) -> Agent:
    """`wake --session ID`: make an earlier id of the agent's own lineage its current one, once
    it is known to be stopped and that conversation resumable; else nothing changes."""
    if session not in app.store.session_history(agent.id):
        raise RoostError(
            f"{session} is not in {agent.name}'s session history (roost ls --json lists it)", code=2
        )
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    if pane is not None and not pane.dead:
        raise RoostError(
            f"{agent.name} is running; stop it first (roost kill {agent.name}), "
            f"then roost wake {agent.name} --session {session}",
            code=2,
        )
    apply_hook_log(app, agent)  # its own last events first: they must not undo the choice
    agent = app.store.require(agent.name)
    if session == agent.provider_session_id:
        return agent
    impl = prov.get(agent.provider)
    chosen = agent.replace(
        provider_session_id=session, transcript_path=None, conversation_seen=True
    )
    impl.resume_argv(
        chosen, impl.executable(chosen, app.settings, app.environ), app.environ, app.paths.home
    )  # a conversation that is gone: refused before any change
    app.store.set_provider_session_id(
        agent.id, session, "chosen", transcript_path=None, conversation_seen=True
    )
    app.store.log(
        agent, "session", session_id=session, previous=agent.provider_session_id, reason="chosen"
    )
    return app.store.require(agent.name)


def _wake_locked(app: App, agent: Agent, fresh: bool) -> WakeResult:
    _refuse_unapproved(agent)  # every start comes here: wake, attach, restore, spawn, a notice
    rows = app.tmux.list_pane_rows()
    panes = [to_pane(r) for r in rows]
    pane = agent_panes(panes).get(agent.id)
    if pane is not None and not pane.dead:
        return WakeResult(agent, started=False, pid=pane.pid)
    with _failure_recorded(app, agent):
        app = _with_start_environment(app, agent)
    _stop_leftovers(app, agent, rows)
    learn_session_ids(app, [agent], panes)
    apply_hook_log(app, agent)
    agent = app.store.require(agent.name)
    with _failure_recorded(app, agent):
        impl = prov.get(agent.provider)
        workdir = _check_cwd(agent.cwd)
        exe = impl.executable(agent, app.settings, app.environ)
        app.tmux.require_version()
        if fresh:
            agent = _fresh_session(app, agent, impl)
        agent = agent.replace(cwd=workdir)  # start where we looked, not elsewhere
        _prepare_mcp(app, agent)
        argv, resumed = _start_or_resume(app, agent, impl, exe, fresh)
        return dataclasses.replace(_launch(app, agent, argv), resumed=resumed)


def _start_or_resume(
    app: App, agent: Agent, impl: prov.Provider, exe: str, fresh: bool
) -> tuple[list[str], bool]:
    """(argv, whether it resumes the conversation). A new conversation only when asked (--fresh)
    or when there is none: the provider decides from its own files (claude: the recorded
    session's transcript exists -> --resume, else nothing to resume: a start under that id, its
    conversation still empty), never roost's launch counter alone, which a spawn cut off between
    its window and its record leaves at 0 although the conversation exists."""
    if fresh:
        return impl.start_argv(agent, exe, None, app.paths.home), False
    try:
        argv = impl.resume_argv(agent, exe, app.environ, app.paths.home)
    except prov.NotResumable as refused:
        if agent.launches == 0 and not agent.conversation_seen:
            return impl.start_argv(agent, exe, None, app.paths.home), False  # nothing to lose yet
        if agent.conversation_seen:
            raise
        unclaimed = _unclaimed_conversations(app, agent, impl)
        if unclaimed is None:
            raise
        if unclaimed:
            raise prov.NotResumable(
                f"{refused} (conversations of its CLI in its cwd since its "
                f"last start that no agent owns, maybe its own: "
                f"{', '.join(unclaimed[:3])})",
                code=refused.code,
            ) from None
        # A CLI that chooses its own id and was never messaged: it wrote no conversation, so
        # there is none to lose. Starting fresh is the only start there is; the log says why.
        app.store.log(
            agent,
            "fresh-start",
            reason="no conversation yet: its CLI recorded none since its last start",
        )
        return impl.start_argv(agent, exe, None, app.paths.home), False
    if argv is None:  # the provider's word: no conversation to bring back (a program's, or empty)
        return impl.start_argv(agent, exe, None, app.paths.home), False
    return argv, True


def _unclaimed_conversations(app: App, agent: Agent, impl: prov.Provider) -> list[str] | None:
    """The provider's conversations that may be the agent's own (None: it cannot tell)."""
    launch = app.store.launch(agent.id)
    since = launch[1] if launch is not None else 0.0  # no launch time: any of its cwd's
    return impl.unclaimed_conversations(agent, app.environ, since, app.store.known_session_ids())


def stop_leftovers(app: App, name: str) -> None:
    """Stop what a sleeping agent (no live pane) left running: processes deaf to the hangup of
    a tmux server that died. Under its lock, with a fresh look at tmux, so a wake that started
    it meanwhile is never mistaken for a leftover."""
    with locks.hold(app.paths.locks, name):
        agent = app.store.get(name)
        if agent is None:
            return
        rows = app.tmux.list_pane_rows()
        pane = agent_panes([to_pane(r) for r in rows]).get(agent.id)
        if pane is None or pane.dead:
            _stop_leftovers(app, agent, rows)


def _stop_leftovers(app: App, agent: Agent, rows: list[dict[str, str]]) -> None:
    """Before the agent starts: stop its processes that outlived their pane (core.orphans), so
    two never run one conversation. Its process under another live tmux server of this roost
    home (a second socket) is no leftover: refuse rather than start a twin."""
    found = app.procs.tagged(str(app.paths.home), agent.id)
    if not found:
        return
    socket = os.path.realpath(app.tmux.socket_path())
    server, live = orphans.this_server(rows)
    leftovers = []
    for proc, facts in found:
        verdict = orphans.whose(facts, socket, server, live)
        if verdict == "elsewhere":
            other = os.path.basename(facts.socket_path)
            raise RoostError(
                f"{agent.name} already runs under another tmux server of this "
                f"roost home (socket {other}, pid {facts.pid}); stop it there "
                f"first: ROOST_TMUX_SOCKET={shell_word(other)} roost kill "
                f"{agent.name}"
            )
        if verdict == "orphan":
            leftovers.append(proc)
    if not leftovers:
        return
    survivors = app.procs.kill_tree(leftovers)
    app.store.log(agent, "orphans-stopped", pids=sorted(p.pid for p in leftovers))
    if survivors:
        raise RoostError(
            f"{agent.name}: leftover processes {survivors} survived SIGKILL; "
            "not starting it beside them"
        )


def _prepare_mcp(app: App, agent: Agent) -> str | None:
    """Give this launch roost's MCP tools (the file its provider wires): the shared endpoint
    (ops/mcpendpoint.py), the service started and waited for if need be (issue 36: every agent
    is launched against the service); its own `roost mcp` only when no service serves this home
    (stopped by the user, ROOST_SERVICE_AUTOSTART=0, no real tmux, a start that failed); none
    when config.toml's `[mcp] enabled = false` or the agent's record (`roost spawn --no-mcp`)
    says so."""
    home = str(app.paths.home)
    if app.settings.mcp.enabled and agent.mcp:
        url = _endpoint(app)
        mcpwire.write(home, agent.id, url)
    else:
        url = None
        mcpwire.remove(home, agent.id)
    _mark_in_tree(app, agent)
    return url


def _mark_in_tree(app: App, agent: Agent) -> None:
    """hook.sh (which reads no database) starts `roost _notify` only beside an `in-tree` marker:
    a copy of the store's orchestration links, so it is written again at every launch (an
    import, which writes no markers, or a lost folder loses nothing). Both ends of a link tell
    roost when a turn ends."""
    home = str(app.paths.home)
    if agent.orchestration_parent:
        mcpwire.mark_in_tree(home, agent.orchestration_parent)
    if (
        agent.orchestration_parent
        or agent_rows.orchestrates(app.store.conn, agent.id)
        or hostchildren.has_children(app.store.conn, agent.id)  # children on hosts count too
    ):
        mcpwire.mark_in_tree(home, agent.id)


def _endpoint(app: App, timeout: float = 20.0) -> str | None:
    """The shared MCP endpoint's URL, the service started for it if need be (ops/service.py)
    and waited for while it offers one; None when it does not serve. Only the running
    service's own endpoint counts: one that is stopping still has its listener for a moment."""
    from roost.ops import service

    status = service.ensure_running(app, timeout=service.LAUNCH_WAIT)
    deadline = app.clock.monotonic() + timeout
    while status.offers("mcp"):
        url = status.endpoint
        if url is not None and mcpendpoint.server(app.paths.home) == status.pid:
            return url
        if app.clock.monotonic() >= deadline:
            break
        app.clock.sleep(0.1)
        status = service.status(app)  # a component that failed meanwhile ends the wait
    service.launched_without(app, status)  # said once a command
    return None


def _with_start_environment(app: App, agent: Agent) -> App:
    """A keeper's or the supervisor's wake works in the environment of the agent's last start
    (its API keys, its PATH, its provider settings); a wake typed by the user in the user's."""
    if not started_by_tmux(app.environ):
        return app
    saved = handover.recall_environment(app.paths.agent_dir(agent.id))
    if saved is None:
        return app  # never started by this version of roost: the waker's own (minimal) one
    markers = {k: v for k, v in app.environ.items() if k in (IN_KEEPER, IN_SUPERVISOR)}
    return dataclasses.replace(app, environ={**saved, **markers})


def _fresh_session(app: App, agent: Agent, impl: prov.Provider) -> Agent:
    """`wake --fresh`: a new conversation, asked for by the user; the old ids stay as lineage."""
    app.store.new_conversation(agent.id, impl.new_session_id())
    return app.store.require(agent.name)


@contextmanager
def _failure_recorded(app: App, agent: Agent) -> Iterator[None]:
    """A start that fails leaves the agent `failed` with the reason; its intent is unchanged."""
    try:
        yield
    except RoostError as exc:
        app.store.update(agent.id, last_error=str(exc))
        raise


def _launch(app: App, agent: Agent, argv: list[str]) -> WakeResult:
    """Run `argv` as the agent in its recorded home, creating the home if it is gone. The home's
    lock is held from finding (or creating) the home until the agent's window is in it, so an
    `rm` or `hibernate` of its last other agent cannot destroy it in between (_release)."""
    with locks.hold(app.paths.locks, locks.home_key(agent.home)):
        panes = app.tmux.list_panes()
        session_id = _ensure_home(app, agent.home, agent.cwd, panes)
        if not started_by_tmux(app.environ):  # what a restart or a keeper wake will start it with
            handover.remember_environment(
                app.paths.agent_dir(agent.id),
                {k: v for k, v in app.environ.items() if k not in NOT_PASSED_ON},
            )
        token = uuid.uuid4().hex  # its hooks' proof that an event is this launch's
        spec = _write_spec(app, agent, argv, token)
        launcher = [sys.executable, "-P", "-m", "roost.launch", str(spec)]
        launched_at = app.clock.now().timestamp()
        app.store.begin_launch(agent.id, token, launched_at)
        if prov.get(agent.provider).traits.hooks:  # events before this launch say nothing of it
            hooks.mark_launch(str(app.paths.home), agent.id, launched_at, token)
        old = agent_panes(panes).get(agent.id)
        redraw = None if app.environ.get(IN_KEEPER) else session_id
        # the status as it stands before the process runs: what the monitor records once it
        # sees the new pane (it may, before this launch returns) is newer, and stands
        before = app.store.require(agent.name)
        was = {k: getattr(before, k) for k in ("status", "status_source", "status_since")}
        # the last error is history once a new process runs; cleared before it does, so an
        # error recorded of this process (it died at once) stands
        app.store.update(agent.id, last_error=None)
        try:
            if old is not None and old.session_id == session_id:
                pid = app.tmux.respawn(old.pane_id, old.window_id, agent.cwd, launcher, redraw)
            else:
                if old is not None:  # a stray window elsewhere: the agent belongs in its home
                    app.tmux.kill_window(old.window_id)
                _window, _pane, pid = app.tmux.new_window(
                    session_id, agent.name, agent.cwd, launcher, agent.id, redraw
                )
        except BaseException:
            handover.discard(spec)  # no launcher will read it: the secrets go now
            raise
    now = app.store.now_iso()
    app.store.update_logged(
        agent,
        "started",
        {"pid": pid, "launch": agent.launches + 1, "resume": agent.launches > 0},
        # a new process: what the last one did is history (its start's idle is an edge the
        # log shows, never mistaken for the end of a turn: budgets/operations.py)
        unless_changed=(
            was,
            {"status": Status.STARTING, "status_source": "process", "status_since": now},
        ),
        intent=INTENT_RUNNING,
        started_at=now,
        launches=agent.launches + 1,
        last_active_at=now,
        last_exit=old.dead_status if old is not None and old.dead else agent.last_exit,
    )
    return WakeResult(app.store.require(agent.name), started=True, pid=pid)


def _ensure_home(app: App, home: str, cwd: str, panes: list[Pane]) -> str:
    """The id of the home session, created with its keeper if missing. Idempotent and race-safe:
    when another roost creates it first, tmux says "duplicate session" and we verify theirs."""
    for _attempt in range(50):
        session = next((p for p in panes if p.session_name == home), None)
        if session is not None:
            if not session.is_home:
                raise RoostError(
                    f"tmux session {home!r} on roost's server was not made by roost; "
                    "rename or kill it ("
                    + command("tmux", "-L", app.tmux.socket, "kill-session", "-t", f"={home}")
                    + ")"
                )
            return session.session_id
        keeper_env = {"ROOST_HOME": str(app.paths.home), "ROOST_TMUX_SOCKET": app.tmux.socket}
        if app.environ.get("TMUX_TMPDIR"):
            keeper_env["TMUX_TMPDIR"] = app.environ["TMUX_TMPDIR"]
        try:
            session_id, _keeper = app.tmux.new_home(
                home, cwd, ["sh", str(KEEPER), home, *roost_command()], keeper_env
            )
            return session_id
        except DuplicateSession:
            app.clock.sleep(0.02)  # the winner tags the session in the same command; look again
            panes = app.tmux.list_panes()
    raise RoostError(f"could not create or find home {home!r}")


def _write_spec(app: App, agent: Agent, argv: list[str], token: str) -> Path:
    """Hand argv and environment to roost.launch through a private, self-deleting file."""
    env = agent_environment(app.environ, agent, app.paths.home, app.tmux.socket, token)
    env.update(prov.get(agent.provider).launch_environment(agent, env, app.paths.home))
    env.update(worktrees.launch_environment(app, agent))
    return handover.write(app.paths.run, agent.id, {"argv": argv, "cwd": agent.cwd, "env": env})


def _refresh_keeper(app: App, session_id: str) -> None:
    # Run from a keeper (Enter pressed there), a redraw would hang up that keeper mid-wake.
    if not app.environ.get(IN_KEEPER):
        app.tmux.refresh_keeper(session_id)


def _check_cwd(cwd: str) -> str:
    path = os.path.realpath(os.path.expanduser(cwd))
    if not os.path.isdir(path):
        raise RoostError(f"working directory {cwd!r} does not exist", code=2)
    return path


# ---- kill and rm -------------------------------------------------------------------------
def handed_over(app: App, name: str, args: list[str]) -> bool:
    """When this command runs inside agent NAME's own process tree (the agent runs roost on
    itself), start `roost ARGS` outside that tree and say so (True): run here, the stop would
    spare this command's ancestors (the agent) or end this command half-way."""
    agent = app.store.require(name)
    if not _caller_inside(app, agent, agent_panes(app.tmux.list_panes()).get(agent.id)):
        return False
    # Untagged: the agent's kill must not take its own stopper with it.
    env = {k: v for k, v in app.environ.items() if k != procs.TAG}
    app.procs.run_outside([*roost_command(), *args], env)
    return True


def _caller_inside(app: App, agent: Agent, pane: Pane | None) -> bool:
    root = pane.pid if pane is not None and not pane.dead else None
    return app.procs.runs_inside(root, agent.id, str(app.paths.home))


def _refuse_inside(app: App, agent: Agent, pane: Pane | None, verb: str) -> None:
    """A stop asked from inside the agent itself (its MCP server, a script it runs) and not
    handed over: refuse before anything changes."""
    if _caller_inside(app, agent, pane):
        raise RoostError(
            f"cannot {verb} {agent.name} from inside its own processes (this "
            f"command runs in it): run roost {verb} {agent.name} from elsewhere"
        )


def kill(app: App, name: str) -> list[int]:
    """Stop the agent's whole process tree; keep its home and record. Returns the pids stopped."""
    check_name(name)
    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        panes = app.tmux.list_panes()
        pane = agent_panes(panes).get(agent.id)
        _refuse_inside(app, agent, pane, "kill")
        # Before its process stops: a CLI's session id may be known only from what it has open.
        learn_session_ids(app, [agent], panes)
        with _stopping(app, agent, pane, INTENT_STOPPED, "kill") as signal:
            if pane is not None:
                # Tell the keeper first: the pane's death redraws it, and it should say "stopped".
                app.tmux.set_window_option(pane.window_id, "@roost_state", "stopped")
            stopped = _stop_processes(app, agent, pane, signal)
        app.store.log(agent, "killed", pids=stopped)
        exit_status = _wait_dead(app, agent.id) if pane is not None else None
        if pane is not None:
            _refresh_keeper(app, pane.session_id)  # tmux's pane-died hook misses SIGKILLed panes
        app.store.update(
            agent.id,
            intent=INTENT_STOPPED,
            last_exit=exit_status if exit_status is not None else agent.last_exit,
        )
        return stopped


# Longer than a stop takes from its intent to its end: its processes' TERM and KILL (5 s) and a
# wait for its home's lock (up to 120 s). Past it, an unfinished stop (its process killed) is void.
STOP_DEADLINE = 150.0  # seconds


@dataclass
class _Signal:
    """Whether a stop's signal may have ended any of the agent's processes: from then on an
    exit of its launch may be that stop's, whatever fails after."""

    out: bool = False


@contextmanager
def _stopping(
    app: App, agent: Agent, pane: Pane | None, intent: str, why: str
) -> Iterator[_Signal]:
    """Intent before effect: a stop of a live agent is recorded (store/intents.py, with a
    `stopping` event) before its signal, so whoever sees the exit first (the status pipeline,
    the pane-died hook, the alerts) takes it for this stop, not for a crash. A stop that fails
    before its signal went out (`_Signal`, which _stop_processes sets) drops it: a later exit
    of this launch is the agent's own again. One that fails after (a Ctrl-C in the TERM->KILL
    wait, a busy home lock, a survivor other than the process it ended) keeps it until its
    deadline: the exit it caused is still its own, not a crash to restart or page."""
    signal = _Signal()
    if pane is None or pane.dead:
        yield signal  # nothing runs in its pane: no exit to come that this stop would cause
        return
    now = app.clock.now()
    until = iso(now + timedelta(seconds=STOP_DEADLINE))
    with app.store.write() as c:
        intents.begin(c, agent.id, agent.name, intent, why, agent.launches, iso(now), until)
    try:
        yield signal
    except BaseException as exc:
        if not signal.out:
            with app.store.write() as c:
                error = str(exc) or type(exc).__name__
                intents.drop(c, agent.id, agent.name, c.now_iso(), error)
        raise


def _stop_processes(app: App, agent: Agent, pane: Pane | None, signal: _Signal) -> list[int]:
    tree = app.procs.snapshot(
        pane.pid if pane is not None and not pane.dead else None, agent.id, str(app.paths.home)
    )
    pids = sorted(p.pid for p in tree)
    signal.out = bool(pids)  # from here a TERM may be out: an interrupt in the wait keeps it so
    survivors = app.procs.kill_tree(tree)
    # Every one survived SIGKILL: no signal took, any exit to come is the agent's own.
    signal.out = not set(pids) <= set(survivors)
    if survivors:
        raise RoostError(f"{agent.name}: processes {survivors} survived SIGKILL")
    return pids


def _wait_dead(app: App, agent_id: str, timeout: float = 3.0) -> int | None:
    deadline = app.clock.monotonic() + timeout
    while True:
        pane = agent_panes(app.tmux.list_panes()).get(agent_id)
        if pane is None or pane.dead or app.clock.monotonic() > deadline:
            return pane.dead_status if pane is not None else None
        app.clock.sleep(0.05)


def rm(app: App, name: str, keep_worktree: bool = False) -> list[str]:
    """Forget the agent: stop it, remove its window (and its home when nobody else lives there),
    its record and the files roost kept for it. Links to it become null; its pin goes.
    A worktree agent's worktree goes too, only when git says nothing would be lost (checked
    before anything changes, and again at the moment of removal); returns what that did."""
    check_name(name)
    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        pane = agent_panes(app.tmux.list_panes()).get(agent.id)
        _refuse_inside(app, agent, pane, "rm")
        tree = worktrees.row_of(app, agent)
        if tree is not None and not keep_worktree:
            root = pane.pid if pane and not pane.dead else None
            own = app.procs.snapshot(root, agent.id, str(app.paths.home))
            worktrees.check(app, agent, tree, frozenset(p.pid for p in own))
        return _forget(app, agent, keep_worktree)


def rm_if_idle(app: App, agent: Agent) -> bool:
    """`roost gc`'s removal: only if the record is still there and the agent does not run,
    checked under its lock (it may have been woken since gc listed it). True if removed."""
    with locks.hold(app.paths.locks, agent.name):
        current = app.store.get_by_id(agent.id)
        pane = agent_panes(app.tmux.list_panes()).get(agent.id)
        if current is None or (pane is not None and not pane.dead):
            return False
        try:
            _forget(app, current)
        except RoostError:
            return False  # its worktree holds work: the agent stays, stopped
        return True


def _forget(app: App, agent: Agent, keep_worktree: bool = False) -> list[str]:
    _release(app, agent, INTENT_STOPPED, "rm")
    done: list[str] = []
    tree = worktrees.row_of(app, agent)
    if tree is not None and keep_worktree:
        with app.store.write() as c:
            wtdb.detach(c, agent.id)
        done.append(f"kept worktree {tree.path} (branch {tree.branch})")
    elif tree is not None:
        try:
            done = worktrees.remove(app, tree, agent.name, agent.id)
        except RoostError as exc:  # something changed since the check: the agent stays
            app.store.update(agent.id, intent=INTENT_STOPPED)
            raise RoostError(f"{exc} ({agent.name} is stopped, not removed)") from None
    app.store.log(agent, "removed")
    with app.store.write() as c:
        wtdb.release_port(c, agent.id)
    app.store.delete(agent.id)
    import shutil  # only rm needs it

    shutil.rmtree(app.paths.agent_dir(agent.id), ignore_errors=True)
    return done


def hibernate(app: App, name: str, only_running: bool = False, why: str = "hibernate") -> list[int]:
    """Stop the process now and release the home; keep everything else. Wake brings it back.
    `only_running`: for roost's own reasons (a budget, max_live: `why`), decided under the
    agent's lock on what is recorded now, not on what a look before it saw: one that another
    pass or the person parked or stopped meanwhile is left alone (RoostError)."""
    check_name(name)
    with locks.hold(app.paths.locks, name):
        agent = app.store.require(name)
        if only_running and agent.intent != INTENT_RUNNING:
            raise RoostError(f"{name} is no longer running; left as it is", code=1)
        _refuse_inside(app, agent, agent_panes(app.tmux.list_panes()).get(agent.id), "hibernate")
        learn_session_ids(app, [agent])
        stopped = _release(app, agent, INTENT_HIBERNATED, why)
        app.store.update(agent.id, intent=INTENT_HIBERNATED)
        app.store.log(agent, "hibernated", pids=stopped)
        return stopped


def _release(app: App, agent: Agent, intent: str, why: str) -> list[int]:
    """Stop the agent's processes and remove its window; then its home too, if nothing but the
    keeper is left in it (no other agent, no window the user opened). Decided under the home's
    lock, which a spawn into that home holds until its window is in (_launch). `intent` and
    `why`: what the stop leaves and who asked (_stopping)."""
    pane = agent_panes(app.tmux.list_panes()).get(agent.id)
    with _stopping(app, agent, pane, intent, why) as signal:
        if pane is not None:
            app.tmux.set_window_option(pane.window_id, "@roost_state", "stopped")
        stopped = _stop_processes(app, agent, pane, signal)
        if pane is not None:
            with locks.hold(app.paths.locks, locks.home_key(pane.session_name)):
                _close_window(app, pane)
    return stopped


def _close_window(app: App, pane: Pane) -> None:
    try:
        app.tmux.kill_window(pane.window_id)
    except TmuxError:
        pass  # gone meanwhile: that is what we wanted
    left = [p for p in app.tmux.list_panes() if p.session_id == pane.session_id]
    if not left:
        return
    try:
        if left[0].is_home and all(p.is_keeper for p in left):
            app.tmux.kill_session(pane.session_id)
        else:
            _refresh_keeper(app, pane.session_id)
    except TmuxError:
        pass


# ---- attach and capture ------------------------------------------------------------------
MAX_CAPTURE = HISTORY_LIMIT  # what a pane keeps


def capture(app: App, name: str, lines: int) -> str:
    if not 1 <= lines <= MAX_CAPTURE:
        raise RoostError(f"--lines must be between 1 and {MAX_CAPTURE}", code=2)
    current = find_view(app, name)
    if current.pane is None:
        raise RoostError(present.no_screen(name, current.state, current.agent.intent))
    return app.tmux.capture(current.pane.pane_id, lines)


def _refuse_unapproved(agent: Agent) -> None:
    if agent.needs_approval:
        why = (
            "needs approval: an import kept its arguments aside; see them and approve them "
            f"with roost approve {agent.name}"
        )
        raise NeedsPerson(f"{agent.name} {why}", code=2, why=why)


def attach_plan(
    app: App, name: str, notes: list[str] | None = None, terminal: bool = True
) -> list[str]:
    """Wake the agent if needed, select its window, and return the argv that attaches to it.
    A buried agent woken this way is a tile again (back in its old tab), or parked when that
    tab is gone: never buried and running at once. `notes` gets a line saying so. `terminal`:
    whether the caller's input is a terminal, which tmux's attach needs (a switch of the
    client from inside roost's server does not): without one nothing is woken."""
    agent = app.store.require(name)
    inside = _inside_roost_server(app)
    if inside and not _caller_shown(app):
        # switch-client would fail with tmux's bare "no current client"
        raise RoostError(
            f"no terminal shows this pane (no tmux client is attached to its "
            f"session), so there is none to switch to {name}: run roost attach "
            f"{name} in a terminal"
        )
    _refuse_unapproved(agent)  # what keeps it from starting comes first, terminal or not
    if not inside and not terminal:  # tmux would say "open terminal failed" after the wake
        raise RoostError(present.needs_terminal(name), code=2)
    if agent.placement == ws.BURIED:
        with app.store.write() as c:
            tab = wsdb.unbury(c, agent.id)
        if notes is not None:
            notes.append(
                f"{name} was buried; it is a tile of {tab.name} again"
                if tab
                else f"{name} was buried and its tab is gone; it is parked now "
                f"(roost place {name} --tab TAB puts it on screen)"
            )
    result = wake(app, name)
    pane = agent_panes(app.tmux.list_panes()).get(result.agent.id)
    if pane is None:
        raise RoostError(f"{name} has no window to attach to")
    app.tmux.select_window(pane.window_id)
    if _inside_roost_server(app):
        return app.tmux.switch_argv(pane.session_id)
    return app.tmux.attach_argv(pane.session_id)


def _inside_roost_server(app: App) -> bool:
    tmux_env = app.environ.get("TMUX", "")
    return bool(tmux_env) and tmux_env.split(",")[0] == app.tmux.socket_path()


def _caller_shown(app: App) -> bool:
    """Whether a tmux client shows the session of the pane this command runs in (unknown: yes,
    and tmux answers)."""
    pane = next(
        (p for p in app.tmux.list_panes() if p.pane_id == app.environ.get("TMUX_PANE")), None
    )
    if pane is None:
        return True
    return any(attached for session, attached in app.tmux.views() if session == pane.session_name)
