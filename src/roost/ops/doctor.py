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

VERSION_TIMEOUT = 10.0  # seconds for `<cli> --version` (a Node CLI takes ~1 s to start)
VERSION = re.compile(r"\d+(?:\.\d+)+")


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

    def add(self, name: str, ok: bool, detail: str, advice: str = "",
            warning: bool = False) -> None:
        self.checks.append(Check(name, ok, detail, advice, warning))

    def text(self) -> str:
        lines = []
        for c in self.checks:
            mark = "BAD" if not c.ok else "WARN" if c.warning else "ok"
            lines.append(f"{mark:<4} {c.name}: {c.detail}")
            if c.advice:
                lines.append(f"     fix: {c.advice}")
        lines.append("all good" if self.ok else
                     f"{sum(not c.ok for c in self.checks)} problem(s) found")
        return "\n".join(lines) + "\n"

    def as_json(self) -> dict:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def run() -> Report:
    """Every check: roost's own set-up, then the agent CLIs (whichever state the store is in)."""
    report, settings, in_use = _setup_checks()
    provider_checks(report, settings, os.environ, in_use)
    return report


def _setup_checks() -> tuple[Report, dict[str, Any], set[str] | None]:
    """tmux, socket, home, config, store, drift, workspace; the config read and the providers
    the stored agents use (None when the store could not be read)."""
    from roost.system import config as cfg
    from roost.core import workspace as ws
    from roost.store import workspace as wsdb
    from roost.core.reconcile import drift
    from roost.providers.traits import PATTERNS_VERSION
    from roost.store.db import SCHEMA_VERSION, Store
    from roost.ops.context import make_tmux
    from roost.tmux.client import MIN_VERSION, TmuxError

    report = Report()
    paths = cfg.paths()
    try:
        settings = cfg.load_config(paths)
    except RoostError as exc:  # still check the rest, with the default tmux
        report.add("config", False, str(exc), f"fix or move aside {paths.config_file}")
        settings = {}
    tmux = make_tmux(paths, settings, os.environ)

    try:
        version = tmux.version()
        good = version >= MIN_VERSION
        report.add("tmux", good, f"version {version[0]}.{version[1]}",
                   "" if good else f"install tmux {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer")
    except TmuxError as exc:
        report.add("tmux", False, str(exc), "install tmux (apt-get install tmux / brew install tmux)")
        return report, settings, None

    socket = tmux.socket_path()
    panes = tmux.list_panes()
    report.add("socket", True, f"{socket} ({'server running' if panes else 'no server running'})")
    sock_dir = os.path.dirname(socket)
    if os.path.isdir(sock_dir):
        mode = stat.S_IMODE(os.stat(sock_dir).st_mode)
        private = not mode & 0o077
        report.add("socket directory", private, f"{sock_dir} mode {mode:o}",
                   "" if private else f"chmod 700 {sock_dir} (tmux refuses shared socket dirs)")

    try:
        cfg.ensure_private_tree(paths)
        report.add("roost home", True, f"{paths.home} (only you can write to it)")
    except RoostError as exc:
        report.add("roost home", False, str(exc), "as it says; roost refuses to run until then")
        return report, settings, None
    try:
        cfg.load_config(paths)
        report.add("config", True, f"{paths.config_file}" if paths.config_file.exists() else
                   f"{paths.config_file} (none: defaults)")
    except RoostError as exc:
        report.add("config", False, str(exc), f"edit {paths.config_file} (see README: Config)")

    try:
        store = Store.open(paths.db)
    except RoostError as exc:
        report.add("store", False, str(exc), f"move {paths.db} aside, or restore a backup")
        return report, settings, None
    result = store.integrity()
    report.add("store", result == "ok",
               f"{paths.db} schema {SCHEMA_VERSION}, integrity {result}",
               "" if result == "ok" else f"stop roost, back up {paths.db}, then `sqlite3 "
               f"{paths.db} .recover`")
    agents = store.agents()
    findings = drift(agents, panes, tmux.socket)
    report.add("drift", not findings,
               f"{len(agents)} agents in the store, {len(panes)} panes in tmux, "
               f"{len(findings)} disagreement(s)")
    for f in findings:
        report.add(f.subject, False, f.problem, f.advice)
    broken = ws.problems(wsdb.load(store.conn))
    names = {a.id: a.name for a in agents}
    report.add("workspace", not broken, f"{len(broken)} inconsistency(ies) between tabs and "
               f"placements; status patterns v{PATTERNS_VERSION}",
               "" if not broken else "roost export > ws.json to keep a copy, then park or place "
               "the agents named below")
    for problem in broken:
        for agent_id, name in names.items():
            problem = problem.replace(agent_id, name)
        report.add("workspace", False, problem)
    store.close()
    return report, settings, {a.provider for a in agents}


def provider_checks(report: Report, settings: Mapping[str, Any], environ: Mapping[str, str],
                    in_use: set[str] | None) -> None:
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
        versions = dict(zip(found, pool.map(
            lambda exe: installed_version(exe, environ) if exe else None,
            [exe for _, _, exe in found.values()]), strict=True))
    for name, (verified, wanted, exe) in found.items():
        provider = base.get(name)
        if exe is None:
            used = in_use is not None and name in in_use
            hint = f"install it, or set {provider.env_var} or providers.{name}.bin in config.toml"
            report.add(name, not used, f"not installed ({wanted!r} not found)"
                       + (": agents of it exist" if used else ""), hint if used else "")
            continue
        version = versions[name]
        if version is None or version.startswith("?"):
            report.add(name, True, f"{exe} did not tell its version"
                       + (f" ({version[1:]})" if version else "")
                       + f"; roost's knowledge of {name} was verified with {verified}",
                       warning=True)
        elif version == verified:
            report.add(name, True, f"{version} ({exe}), the version roost was verified with")
        else:
            report.add(name, True, f"{version} ({exe}) is untested: roost's knowledge of {name} "
                       f"(its screens, files, hooks) was verified with {verified}",
                       f"nothing, if its agents behave; else install {verified} (and report "
                       "what differs)",
                       warning=True)


def installed_version(exe: str, environ: Mapping[str, str]) -> str:
    """The first dotted number `exe --version` prints; "?<why>" when it tells none."""
    import subprocess

    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, env=dict(environ),
                              timeout=VERSION_TIMEOUT, check=False, start_new_session=True)
    except subprocess.TimeoutExpired:
        return f"?no answer within {VERSION_TIMEOUT:g} s"
    except OSError as exc:
        return f"?{exc.strerror or exc}"
    match = VERSION.search(proc.stdout) or VERSION.search(proc.stderr)
    if proc.returncode != 0 or match is None:
        return f"?exit {proc.returncode}"
    return match.group(0)
