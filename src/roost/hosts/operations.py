"""Remote hosts (docs/HOSTS.md): the hosts this roost knows, a command run by a host's roost,
and one view of the whole fleet. The remote roost is the authority on its agents; this side
stores only how to reach it (store/hosts.py) and relays what it says."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from roost.core import fleet
from roost.core.errors import RoostError
from roost.core.settings import Settings
from roost.hosts import rules as sshargs
from roost.store import hosts as hostsdb
from roost.system import ssh
from roost.system.ssh import Unreachable

if TYPE_CHECKING:  # the light path (`roost --host`) never imports the App's world
    from roost.core.clock import Clock
    from roost.ops.context import App

Host = hostsdb.Host


@dataclass(frozen=True, slots=True)
class Reach:
    """What reaching a host takes: the caller's environment, config.toml, roost's home."""

    environ: Mapping[str, str]
    settings: Settings
    home: str
    clock: Clock  # the App's (a host's deadline is on its monotonic time)


def reach_of(app: App) -> Reach:
    return Reach(app.environ, app.settings, str(app.paths.home), app.clock)


def reach() -> Reach:
    """A Reach read here, without opening the App (no store, no tmux): `roost --host …` relays
    a command, and `roost ls --all` asks every host, for the price of a config read and one
    SELECT (docs/DECISIONS.md). Who holds an App takes its own (`reach_of`): its environment,
    its settings (the service's are read again live) and its clock."""
    from roost.system import config as cfg

    paths = cfg.paths()
    cfg.check_ancestors(paths.home)  # the trust checks open_app makes: its config runs ssh
    if paths.home.exists():
        cfg.check_private_dir(paths.home)
    from roost.system.clock import SystemClock

    return Reach(os.environ, cfg.load_config(paths), str(paths.home), SystemClock())


def get(reach: Reach, name: str) -> Host:
    """Host `name` (read-only, without the App's store: one SELECT)."""
    found = hostsdb.read(os.path.join(reach.home, "roost.db"), name)
    if not found:
        raise RoostError(f"no host named {name!r} (roost host ls; roost host add NAME DEST)", 2)
    return found[0]


def every(reach: Reach) -> list[Host]:
    """Every host, by name (read-only, without the App's store: one SELECT)."""
    return hostsdb.read(os.path.join(reach.home, "roost.db"))


def ssh_program(reach: Reach) -> list[str]:
    """$ROOST_SSH_COMMAND, else config.toml's [ssh] command, else `ssh` (as GIT_SSH_COMMAND)."""
    configured = reach.environ.get("ROOST_SSH_COMMAND") or reach.settings.ssh.command
    return sshargs.ssh_command(configured)


def limits(reach: Reach) -> tuple[float, float]:
    """(connect, command) time limits in seconds, from [ssh] or the defaults."""
    return reach.settings.ssh.connect_timeout, reach.settings.ssh.timeout


def ls_limit(reach: Reach) -> float:
    """Seconds a host has to say its agents (`[ssh] ls_timeout`): `ls --all`, the TUI and the
    web list the hosts that answered and say which did not, never waiting on the slowest."""
    return reach.settings.ssh.ls_timeout


def link(reach: Reach, host: Host, connect_limit: float | None = None) -> ssh.Link:
    program = ssh_program(reach)
    control = sshargs.control_path(
        ssh.control_folder(), reach.home, " ".join(program), host.name, host.dest
    )
    connect = limits(reach)[0] if connect_limit is None else connect_limit
    return ssh.Link(host.name, tuple(program), host.dest, control, connect)


def line(host: Host, args: list[str]) -> str:
    return sshargs.remote_line(host.roost, host.env, args)


def add(app: App, name: str, dest: str, roost: str, env: dict[str, str]) -> Host:
    problem = sshargs.host_problem(name, dest, roost, env)
    if problem:
        raise RoostError(problem, code=2)
    host = Host(name, dest, roost, env, app.store.now_iso())
    with app.store.write() as c:
        if not hostsdb.insert(c, host):
            raise RoostError(f"a host named {name!r} exists (roost host rm {name} first)", 2)
    return host


def remove(app: App, name: str) -> None:
    reach = reach_of(app)
    host = get(reach, name)
    with app.store.write() as c:
        hostsdb.delete(c, name)
    link(reach, host).forget()  # its master, if one runs


def run(
    reach: Reach,
    host: Host,
    args: list[str],
    *,
    stream: bool = False,
    within: tuple[ssh.Link, float] | None = None,
) -> ssh.Result:
    """`args` run by the host's roost, under the command limit (none for a watch: it streams
    until stopped; keepalives notice a dead peer), or `within` a link and limit of its own."""
    limit: float | None
    if within is not None:
        link_, limit = within
    else:
        link_ = link(reach, host)
        limit = None if args[:1] == ["watch"] else limits(reach)[1]
    found = link_.call(line(host, args), limit, stream=stream)
    if found.too_large:
        raise Unreachable(
            host.name, f"its answer was over {ssh.MAX_OUTPUT >> 20} MiB: cut, not read"
        )
    if found.code is None:
        raise Unreachable(host.name, f"no answer within {limit:g} s; the command was cut")
    if found.code == ssh.SSH_FAILED:  # ssh's own failure (the remote roost never exits 255)
        raise Unreachable(host.name, sshargs.ssh_reason(found.err))
    return found


class DoctorSummary(TypedDict):
    ok: bool
    problems: list[str]
    warnings: list[str]


class CheckReport(TypedDict, total=False):
    """What `host check` found (its --json): always `host`, `dest`, `reachable`; then the
    remote roost's `version` and whether it is `compatible`, and its `doctor`'s summary, or the
    `problem` that stopped the check."""

    host: str
    dest: str
    reachable: bool
    version: str | None
    compatible: bool
    problem: str
    doctor: DoctorSummary


def check(app: App, name: str) -> CheckReport:
    """`host check`: reachable, the remote roost's version (compatible with this one's), and
    its doctor's summary."""
    from importlib.metadata import version

    reach = reach_of(app)
    host = get(reach, name)
    mine = version("roost")
    report: CheckReport = {"host": name, "dest": host.dest, "reachable": False}
    try:
        said = run(reach, host, ["--version"])
    except Unreachable as exc:
        return {**report, "problem": str(exc)}
    theirs = sshargs.version_of(said.out)
    report["reachable"], report["version"], report["compatible"] = True, theirs, bool(theirs)
    if theirs is None:
        problem = sshargs.ssh_reason(said.err or said.out)
        return {**report, "problem": f"no roost at {host.roost} ({problem}); use --roost PATH"}
    if not sshargs.compatible(mine, theirs):
        report["compatible"], report["problem"] = False, f"remote roost {theirs}, this one {mine}"
        return report
    doctor = run(reach, host, ["doctor", "--json"])
    try:
        checks = json.loads(doctor.out)["checks"]
    except (ValueError, KeyError, TypeError):
        return {**report, "problem": f"its doctor said no JSON: {sshargs.ssh_reason(doctor.err)}"}
    report["doctor"] = {
        "ok": all(c["ok"] for c in checks),
        "problems": [f"{c['name']}: {c['detail']}" for c in checks if not c["ok"]],
        "warnings": [f"{c['name']}: {c['detail']}" for c in checks if c["ok"] and c["warning"]],
    }
    return report


def end_masters(reach: Reach) -> None:
    """End every host's ssh master that answers (the service stops: issue 36 point 7); each
    bounded, one host's failure never keeps the others'."""
    for host in every(reach):
        with contextlib.suppress(RoostError, OSError):
            link(reach, host).close()


def ask(reach: Reach, host: Host) -> fleet.HostView:
    """Host's agents (its `roost ls --json`), or why it did not answer: never raises for a
    host that is down, and costs at most its limits.

    Read from the host's roost service through the warm master when the host said where that
    is (no process on the host: docs/HOSTS.md "ls --all"); else its roost answers `_hostls`,
    its rows and where its service listens, kept for the next time.

    The whole answer comes within `ls_limit` (a master's start included: one that takes
    longer is left to the commands that wait for it), or the host did not answer."""
    within = ls_limit(reach)
    deadline = reach.clock.monotonic() + within
    link_ = link(reach, host, min(limits(reach)[0], within))

    def left() -> tuple[ssh.Link, float]:
        return link_, max(0.1, deadline - reach.clock.monotonic())

    try:
        served = _from_service(link_, host, left()[1])
        if served is not None:
            return fleet.HostView(host.name, tuple(served))
        found = run(reach, host, ["_hostls"], within=left())
        if found.code == 2 and "_hostls" in found.err:  # a roost from before _hostls
            found = run(reach, host, ["ls", "--json"], within=left())
    except Unreachable as exc:
        late = reach.clock.monotonic() >= deadline
        reason = f"no answer within {within:g} s ([ssh] ls_timeout)" if late else exc.reason
        return fleet.HostView(host.name, unreachable=reason)
    if found.code != 0:
        return fleet.HostView(host.name, unreachable=sshargs.ssh_reason(found.err))
    try:
        said = json.loads(found.out)
    except (ValueError, RecursionError):
        return fleet.HostView(host.name, unreachable="its roost ls --json said no JSON")
    reader = said.get("reader") if isinstance(said, dict) else None
    rows = said.get("rows") if isinstance(said, dict) else said
    if not isinstance(rows, list):
        return fleet.HostView(host.name, unreachable="its roost ls --json said no list")
    _remember(link_, host, reader)
    return fleet.HostView(host.name, tuple(rows))


def _from_service(link_: ssh.Link, host: Host, limit: float) -> list[dict[str, object]] | None:
    """The host's rows as its service computed them, through the master's forward of its
    socket; None when the host said no service (or this path failed: its roost answers)."""
    from roost.system import servicesock

    reader = _reader(link_, host)
    if reader is None:
        return None
    local = link_.forwarded(reader["socket"])
    sock = servicesock.connect_to(local)
    try:
        if sock is None and link_.forward(reader["socket"]):
            sock = servicesock.connect_to(local)
    except Unreachable:
        raise  # the master cannot start: neither can the call to its roost
    except (RoostError, OSError):  # the forward's lock busy, no ssh: its roost answers
        return None
    body = None if sock is None else servicesock.ls_on(sock, True, reader["ident"], limit)
    try:
        rows = json.loads(body) if body is not None else None
    except (ValueError, RecursionError):  # RecursionError: JSON nested past Python's stack
        rows = None
    if not isinstance(rows, list):
        _remember(link_, host, None)  # stale (a new build, no service): ask its roost again
        return None
    return rows


def _reader(link_: ssh.Link, host: Host) -> dict[str, str] | None:
    """Where the host said its service listens, and the ident its readers send, if said for
    this very host (same DEST, roost and environment)."""
    try:
        with open(link_.reader_file, encoding="utf-8") as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("for") != [host.dest, host.roost, host.env]:
        return None
    return _valid_reader(kept)


def _valid_reader(said: object) -> dict[str, str] | None:
    """A reader as `_hostls` says it: a service socket's path that ssh would forward as
    written (sshargs.forward_spec), and the ident, a string."""
    if not isinstance(said, dict):
        return None
    where, ident = said.get("socket"), said.get("ident")
    if not (isinstance(where, str) and isinstance(ident, str)):
        return None
    return {"socket": where, "ident": ident} if sshargs.is_service_socket(where) else None


def _remember(link_: ssh.Link, host: Host, reader: object) -> None:
    """Keep what the host said about its service (`_hostls`'s reader), or forget it."""
    valid = _valid_reader(reader)
    if valid is None:
        with contextlib.suppress(OSError):
            os.unlink(link_.reader_file)
        return
    kept = {"for": [host.dest, host.roost, host.env], **valid}
    temporary = f"{link_.reader_file}.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8", opener=_private) as f:
            json.dump(kept, f)
        os.replace(temporary, link_.reader_file)  # whole, for a reader at the same moment
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _private(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


def views(reach: Reach, hosts: list[Host]) -> list[fleet.HostView]:
    """Every host's view, asked in parallel (the slowest costs its limits, not their sum)."""
    from concurrent.futures import ThreadPoolExecutor

    if not hosts:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        return list(pool.map(lambda h: ask(reach, h), hosts))


def attach_argv(reach: Reach, host: Host, args: list[str]) -> list[str]:
    """The interactive `ssh -tt` line running `args` (`attach NAME`, `tui`…) by the host's
    roost: `roost attach HOST:AGENT` and the TUI's Enter on a remote agent both run this."""
    link_ = link(reach, host)
    link_.drop_stale()  # a hung master would hang this ssh; ConnectTimeout bounds the rest
    return link_.attach_argv(line(host, args))
