"""`roost doctor`: tmux, socket, store integrity, drift between store and tmux, and each agent
CLI's installed version next to the one roost's knowledge of it was verified against."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from roost.core.errors import RoostError
from roost.core.present import command, counted
from roost.core.settings import Settings
from roost.system import untrusted
from roost.tmux.protocol import TmuxClient
from roost.usage.rules import MAX_TOKENS

VERSION_TIMEOUT = 10.0  # seconds for `<cli> --version` (a Node CLI takes ~1 s to start)
VERSION_BYTES = 64 << 10  # of each stream of `<cli> --version` kept: a version is one line
VERSION = re.compile(r"\d+(?:\.\d+)+")
DEFAULT_PROVIDER = "claude"  # ops.lifecycle.spawn's, when --provider is not given
INSTALL_HINT = (
    "install an agent CLI: npm install -g @anthropic-ai/claude-code (or "
    "@openai/codex, @google/gemini-cli), or pipx install aider-chat"
)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    advice: str = ""
    warning: bool = False  # worth knowing, not a problem: the report stays ok


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def add(
        self, name: str, ok: bool, detail: str, advice: str = "", warning: bool = False
    ) -> None:
        self.checks.append(Check(name, ok, detail, advice, warning))

    def text(self) -> str:
        lines = []
        for c in self.checks:
            mark = "BAD" if not c.ok else "WARN" if c.warning else "ok"
            lines.append(f"{mark:<4} {c.name}: {c.detail}")
            if c.advice:
                lines.append(f"     fix: {c.advice}")
        lines.append(
            "all good" if self.ok else f"{sum(not c.ok for c in self.checks)} problem(s) found"
        )
        return "\n".join(lines) + "\n"

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def run() -> Report:
    """Every check: roost's own set-up, then the agent CLIs (whichever state the store is in)."""
    report, settings, in_use = _setup_checks()
    provider_checks(report, settings, os.environ, in_use)
    return report


def _setup_checks() -> tuple[Report, Settings, set[str] | None]:
    """tmux, socket, home, config, store, drift, workspace; the config read and the providers
    the stored agents use (None when the store could not be read)."""
    from roost.core import workspace as ws
    from roost.core.reconcile import drift
    from roost.ops.context import make_tmux
    from roost.providers.traits import PATTERNS_VERSION
    from roost.store import workspace as wsdb
    from roost.store.db import Store
    from roost.store.schema import SCHEMA_VERSION
    from roost.system import config as cfg
    from roost.tmux.client import MIN_VERSION, TmuxError, to_pane

    report = Report()
    paths = cfg.paths()
    config_error: RoostError | None = None
    try:
        settings = cfg.load_config(paths)
    except RoostError as exc:  # still check the rest, with the default tmux
        config_error, settings = exc, Settings()
    tmux = make_tmux(paths, settings, os.environ)

    try:
        version = tmux.version()
        good = version >= MIN_VERSION
        report.add(
            "tmux",
            good,
            f"version {version[0]}.{version[1]}",
            "" if good else f"install tmux {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer",
        )
    except TmuxError as exc:
        report.add(
            "tmux", False, str(exc), "install tmux (apt-get install tmux / brew install tmux)"
        )
        return report, settings, None

    socket = tmux.socket_path()
    rows = tmux.list_pane_rows()
    panes = [to_pane(r) for r in rows]
    report.add("socket", True, f"{socket} ({'server running' if panes else 'no server running'})")
    sock_dir = os.path.dirname(socket)
    if os.path.isdir(sock_dir):
        mode = stat.S_IMODE(os.stat(sock_dir).st_mode)
        private = not mode & 0o077
        report.add(
            "socket directory",
            private,
            f"{sock_dir} mode {mode:o}",
            ""
            if private
            else command("chmod", "700", sock_dir, note="tmux refuses shared socket dirs"),
        )

    try:
        cfg.ensure_private_tree(paths)
        report.add("roost home", True, f"{paths.home} (only you can write to it or rename it)")
    except RoostError as exc:
        report.add("roost home", False, str(exc), "as it says; roost refuses to run until then")
        return report, settings, None
    _user_tmux_conf(report, tmux)
    if config_error is None:
        report.add(
            "config",
            True,
            f"{paths.config_file}"
            if paths.config_file.exists()
            else f"{paths.config_file} (none: defaults)",
        )
    else:
        report.add(
            "config", False, str(config_error), f"edit {paths.config_file} (see README: Config)"
        )

    try:
        store = Store.open(paths.db)
    except RoostError as exc:
        advice = (
            command("mv", str(paths.db), f"{paths.db}.aside", note="or restore a backup")
            if getattr(exc, "damaged", False)
            else "as it says; the database itself is not damaged"
        )
        report.add("store", False, str(exc), advice)
        return report, settings, None
    result = store.integrity()
    report.add(
        "store",
        result == "ok",
        f"{paths.db} schema {SCHEMA_VERSION}, integrity {result}",
        ""
        if result == "ok"
        else "stop roost, back up the database, then "
        + command("sqlite3", str(paths.db), ".recover"),
    )
    agents = store.agents()
    findings = drift(
        agents, panes, tmux.socket, {a.cwd for a in agents if not os.path.isdir(a.cwd)}
    )
    running = len({p.agent_id for p in panes if p.agent_id and not p.dead})
    report.add(
        "drift",
        not findings,
        f"{counted(len(agents), 'agent')} in the store, {running} running in tmux, "
        f"{counted(len(findings), 'disagreement')}",
    )
    for f in findings:
        report.add(f.subject, False, f.problem, f.advice)
    names = {a.id: a.name for a in agents}
    _views(report, tmux)
    _orphans(report, str(paths.home), os.path.realpath(socket), rows, names)
    _service(report, paths, store, tmux, settings, agents, panes)
    broken = ws.problems(wsdb.load(store.conn))
    report.add(
        "workspace",
        not broken,
        f"{len(broken)} fault(s) in the tabs' layouts; status patterns v{PATTERNS_VERSION}",
        ""
        if not broken
        else "roost export > ws.json to keep a copy, then park or place the agents named below",
    )
    for problem in broken:
        for agent_id, name in names.items():
            problem = problem.replace(agent_id, name)
        report.add("workspace", False, problem)
    _worktrees(report, store, names)
    _approvals(report, agents)
    if result == "ok":
        _skipped_lines(report, paths, store, tmux, settings, agents)
    store.close()
    return report, settings, {a.provider for a in agents}


def _service(
    report: Report,
    paths: Any,
    store: Any,
    tmux: Any,
    settings: Settings,
    agents: list[Any],
    panes: list[Any],
) -> None:
    """The roost service, and the shared MCP endpoint each running agent was launched with
    (issue 36): an address given to an agent that nobody serves has cut its roost tools."""
    from roost.core.service import FAILED
    from roost.ops import service
    from roost.ops.context import App
    from roost.ops.root import ON_STATUS
    from roost.store import service as rows

    app = App(paths, store, tmux, dict(os.environ), settings, on_status=ON_STATUS)
    status = service.status(app, probe=True)
    live = {p.agent_id for p in panes if p.agent_id and not p.dead}
    running = sum(a.id in live for a in agents)
    if status.running:
        failed = [p.name for p in status.parts if p.state == FAILED]
        report.add(
            "service",
            not failed,
            f"running (pid {status.pid}, since {status.since}): {', '.join(status.serves) or '-'}"
            + (f"; failed: {', '.join(failed)} (roost service status says why)" if failed else ""),
            ""
            if not failed
            else "as roost service status says, then: roost service stop; roost service start",
        )
    else:
        chosen = not rows.wanted(store.conn) or os.environ.get(service.NO_AUTOSTART) == "0"
        report.add(
            "service",
            not running or chosen,
            f"not running ({status.note})"
            + (
                f": {counted(running, 'running agent')} without it (no shared MCP endpoint, "
                "alerts, budgets or resumes at a limit's reset)"
                if running
                else "; roost service start starts it"
                if chosen
                else "; the next agent's launch starts it"
            ),
            command("roost", "service", "start") if running else "",
            warning=bool(running) and chosen,
        )
    _endpoints(report, app, status)


def _endpoints(report: Report, app: Any, status: Any) -> None:
    """Each address running agents were given: served by the service now, or their tools cut."""
    from roost.core.service import FAILED
    from roost.ops import mcpendpoint

    failure = next((p.error for p in status.parts if p.name == "mcp" and p.state == FAILED), None)
    for url, names in sorted(mcpendpoint.wired(app).items()):
        if status.running and url == status.endpoint:
            report.add("mcp endpoint", True, f"{url}, serving {', '.join(names)}")
            continue
        why = (
            f"the service failed to serve it: {failure}"
            if status.running and failure
            else f"the service serves {status.endpoint}"
            if status.running and status.endpoint
            else "the service does not serve it"
            if status.running
            else "the service is not running"
        )
        report.add(
            "mcp endpoint",
            False,
            f"{url} was given to {', '.join(names)}, and nobody serves it ({why}): "
            "their roost tools are cut",
            command("roost", "service", "start")
            if not status.running
            else "as it says"
            if failure
            else f"relaunch them with the new address: roost hibernate {names[0]}; "
            f"roost wake {names[0]} (and each other one)",
        )


def _worktrees(report: Report, store: Any, names: Mapping[str, str]) -> None:
    """Each worktree agent's branch and path, as git has them now (issue 22)."""
    import os

    from roost.store import worktrees as wtdb
    from roost.system import git

    for agent_id, row in wtdb.by_agent(store.conn).items():
        name = names.get(agent_id, agent_id)
        if not os.path.isdir(row.path):
            report.add(
                f"worktree {name}",
                False,
                f"{row.path} is gone (branch {row.branch})",
                f"roost worktree recreate {name}",
            )
            continue
        try:
            listed = git.worktrees(git.repo_of(row.repo)).get(os.path.realpath(row.path))
        except RoostError as exc:
            report.add(f"worktree {name}", False, str(exc))
            continue
        held = listed is not None and listed.branch == row.branch
        report.add(
            f"worktree {name}",
            held,
            f"{row.branch} at {row.path}"
            if held
            else f"{row.path} no longer has {row.branch} checked out in {row.repo}",
        )


def _approvals(report: Report, agents: list[Any]) -> None:
    """Each agent that never starts until the person approves what an import kept aside
    (issue 35): worth knowing, not a fault of the set-up."""
    for agent in agents:
        if agent.needs_approval:
            report.add(
                f"approval {agent.name}",
                True,
                "needs approval: an import kept its arguments aside, and it never starts "
                "until you approve them",
                command("roost", "approve", agent.name),
                warning=True,
            )


SKIPPED_WORDS = {  # why a line of a CLI's file was left out (usage/rules.py), in doctor's words
    "too_long": f"too long (over {untrusted.LINE_LIMIT >> 20} MiB)",
    "malformed": "not a JSON object",
    "out_of_range": (
        f"with a token count out of range (below 0 or over 10^{len(str(MAX_TOKENS)) - 1}: "
        "counted as 0)"
    ),
}


def _skipped_lines(
    report: Report, paths: Any, store: Any, tmux: Any, settings: Settings, agents: list[Any]
) -> None:
    """Each agent whose CLI's files (transcript, rollout, chat file) held lines roost left out
    (issue 35): worth knowing (another program wrote them), not a fault of the set-up. What the
    files gained since the last look is read first (usage/operations.py catch_up: at most 64 MiB an
    agent, nothing when the service keeps up), so the counts are the files'; they are stored
    with the usage they were read with, each line counted once."""
    from roost.ops.context import App
    from roost.ops.root import ON_STATUS
    from roost.store import usage as rows
    from roost.usage import operations as usage

    try:
        usage.catch_up(
            App(paths, store, tmux, dict(os.environ), settings, on_status=ON_STATUS), agents
        )
    except (OSError, RoostError, ValueError):  # the store says a failure of its own as one
        pass  # the counts stored so far are still worth saying
    names = {a.id: a.name for a in agents}
    for agent_id, counts in sorted(rows.skipped_lines(store.conn).items()):
        if agent_id not in names:
            continue
        said = ", ".join(f"{n} {SKIPPED_WORDS[why]}" for why, n in sorted(counts.items()))
        report.add(
            f"records {names[agent_id]}",
            True,
            f"{counted(sum(counts.values()), 'line')} of its CLI's files left out "
            f"(usage, replies and read skip them): {said}",
            warning=True,
        )


def _user_tmux_conf(report: Report, tmux: Any) -> None:
    """The user's own tmux.conf: a warning (agents start without it), said only when there is
    one."""
    path = tmux.user_config
    if not path or not os.path.lexists(path):
        return
    problems = tmux.user_config_problems()
    if not problems:
        report.add("tmux.conf", True, f"{path} (sourced after roost's settings)")
        return
    report.add(
        "tmux.conf",
        True,
        "; ".join(problems[:3]),
        command(
            "tmux",
            "-L",
            tmux.socket,
            "source-file",
            path,
            note="shows what tmux says; fix those lines",
        ),
        warning=True,
    )


def _views(report: Report, tmux: TmuxClient) -> None:
    """A view server (`roost open`) with views nobody looks at: left by an open that failed or
    was killed, or by a detach. Their panes are clients attached to agents' homes. Said only
    when a view server runs."""
    view = tmux.view_client()
    sessions = view.views()
    if not sessions:
        return
    idle = [name for name, clients in sessions if clients == 0]
    if not idle:
        report.add("view server", True, f"{view.socket}: {counted(len(sessions), 'view')} open")
        return
    report.add(
        "view server",
        False,
        f"{view.socket} holds {counted(len(idle), 'view')} nobody looks at "
        f"({', '.join(idle)}); each pane is a tmux client attached to an agent's home",
        command(
            "tmux",
            "-L",
            view.socket,
            "kill-server",
            note="the agents keep running; `roost open TAB` makes a fresh view",
        ),
    )


def _orphans(
    report: Report, roost_home: str, socket: str, rows: list[dict[str, str]], names: dict[str, str]
) -> None:
    """Agent processes of this roost home that outlived their pane (core.orphans): nohup or
    setsid children, agents deaf to the hangup of a tmux server that died."""
    from roost.core import orphans
    from roost.system import procs

    server, live = orphans.this_server(rows)
    by_agent = orphans.left_behind(
        (facts for _proc, facts in procs.tagged(roost_home)), socket, server, live
    )
    report.add(
        "orphans",
        not by_agent,
        f"{sum(map(len, by_agent.values()))} agent process(es) outlived their tmux pane",
    )
    for agent_id, pids in sorted(by_agent.items()):
        name = names.get(agent_id)
        advice = (
            command("roost", "kill", name, note=f"or roost wake {name}, which stops them first")
            if name
            else command("kill", *map(str, sorted(pids)), note="its agent is gone")
        )
        report.add(
            name or agent_id,
            False,
            f"{orphans.describe(sorted(pids))} outlived its tmux pane",
            advice,
        )


def provider_checks(
    report: Report, settings: Settings, environ: Mapping[str, str], in_use: set[str] | None
) -> None:
    """One line per agent CLI roost knows: the version installed (`<cli> --version`, run only
    when the executable exists, with a time limit) next to the one its traits were verified
    against. An untested version is a warning; a CLI that is not installed is a problem only
    when agents of it exist (`in_use`; None: unknown, so never)."""
    import shutil
    from concurrent.futures import ThreadPoolExecutor

    from roost.providers import base

    found = {}
    for name, provider in base.registry().items():
        verified = provider.traits.verified
        if not verified:
            continue  # any command: nothing to compare
        wanted = provider.configured_executable(settings, environ)
        exe = shutil.which(wanted, path=environ.get("PATH"))
        found[name] = (verified, wanted, os.path.abspath(exe) if exe else None)
    with ThreadPoolExecutor(max_workers=max(1, len(found))) as pool:
        versions = dict(
            zip(
                found,
                pool.map(
                    lambda exe: installed_version(exe, environ) if exe else None,
                    [exe for _, _, exe in found.values()],
                ),
                strict=True,
            )
        )
    installed = [name for name, (_v, _w, exe) in found.items() if exe]
    for name, (verified, wanted, exe) in found.items():
        provider = base.get(name)
        if exe is None and name == DEFAULT_PROVIDER:
            _default_missing(report, wanted, installed)
            continue
        if exe is None:
            used = in_use is not None and name in in_use
            hint = f"install it, or set {provider.env_var} or providers.{name}.bin in config.toml"
            report.add(
                name,
                not used,
                f"not installed ({wanted!r} not found)" + (": agents of it exist" if used else ""),
                hint if used else "",
            )
            continue
        problem = provider.environment_problem(environ)
        if problem is not None:
            report.add(name, True, problem[0], problem[1], warning=True)
        version = versions[name]
        if version is None or version.startswith("?"):
            report.add(
                name,
                True,
                f"{exe} did not tell its version"
                + (f" ({version[1:]})" if version else "")
                + f"; roost's knowledge of {name} was verified with {verified}",
                warning=True,
            )
        elif version == verified:
            report.add(name, True, f"{version} ({exe}), the version roost was verified with")
        else:
            report.add(
                name,
                True,
                f"{version} ({exe}) is untested: roost's knowledge of {name} "
                f"(its screens, files, hooks) was verified with {verified}",
                f"nothing, if its agents behave; else install {verified} (and report what differs)",
                warning=True,
            )


def _default_missing(report: Report, wanted: str, installed: list[str]) -> None:
    """The default provider's CLI is missing: `roost spawn NAME` (the README's first command)
    fails with exit 6. A problem when no agent CLI is installed at all; a warning naming the
    installed ones otherwise. Either way the `command` provider needs none."""
    detail = (
        f"not installed ({wanted!r} not found), and it is the default provider: "
        "`roost spawn NAME` fails (exit 6)"
    )
    if installed:
        report.add(
            DEFAULT_PROVIDER,
            True,
            detail,
            f"roost spawn NAME --provider {installed[0]} (installed: "
            f"{', '.join(installed)}), or {INSTALL_HINT}",
            warning=True,
        )
        return
    report.add(
        DEFAULT_PROVIDER,
        False,
        detail + "; no agent CLI is installed",
        f"{INSTALL_HINT}; or try roost without one: roost spawn try --provider command -- bash",
    )


def installed_version(exe: str, environ: Mapping[str, str]) -> str:
    """The first dotted number `exe --version` prints; "?<why>" when it tells none. Run as a
    tmux client is (tmux/run.py: no input, a process group of its own, killed at the limit)."""
    from roost.tmux import run

    try:
        code, raw_out, raw_err = run.call(
            [exe, "--version"], environ, VERSION_TIMEOUT, most=VERSION_BYTES
        )
    except run.Silent:
        return f"?no answer within {VERSION_TIMEOUT:g} s"
    except OSError as exc:
        return f"?{exc.strerror or exc}"
    out, err = (raw.decode("utf-8", "replace") for raw in (raw_out, raw_err))
    match = VERSION.search(out) or VERSION.search(err)
    if code != 0 or match is None:
        return f"?exit {code}"
    return match.group(0)
