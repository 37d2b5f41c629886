"""Remote hosts over OpenSSH, the pure part: the ssh argv roost builds, the remote command line
(every word quoted for the remote shell), `HOST:AGENT` targets, and what a host's record allows.

No I/O here: system/ssh.py runs what these functions build (docs/HOSTS.md says why each
option is there).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from roost.core.errors import RoostError
from roost.core.names import name_problem
from roost.core.settings import CONNECT_TIMEOUT

CHECK_TIMEOUT = 2.0  # seconds: `ssh -O check` asks a local socket; longer means a stale master
PERSIST = 60  # seconds an idle master stays up (warm for the next command, gone soon after)
SSH_DEFAULT = ("ssh",)
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def ssh_command(configured: str | None) -> list[str]:
    """The ssh program and its own options, as git reads GIT_SSH_COMMAND: split like a shell
    would (quotes kept), never run through one.

    >>> ssh_command(None), ssh_command("ssh -F '/tmp/my config'")
    (['ssh'], ['ssh', '-F', '/tmp/my config'])
    """
    if configured is None or not configured.strip():
        return list(SSH_DEFAULT)
    try:
        words = shlex.split(configured)
    except ValueError as exc:
        raise RoostError(f"the ssh command {configured!r} cannot be split: {exc}", code=2) from None
    return words


def control_path(folder: str, *identity: str) -> str:
    """The master's socket: a short hashed name in roost's private folder (a unix socket path
    is limited to about 107 bytes; a DEST or a home can be long). The identity (roost's home,
    the ssh command, the host's name and DEST) keeps two homes or two configs apart.

    >>> control_path("/tmp/roost-0", "h", "me@x")[len("/tmp/roost-0/"):].__len__()
    16
    """
    digest = hashlib.sha256("\0".join(identity).encode()).hexdigest()[:16]
    return f"{folder}/{digest}"


def options(control: str, *, batch: bool, connect_timeout: float = CONNECT_TIMEOUT) -> list[str]:
    """The `-o` options of every call (docs/HOSTS.md): one multiplexed connection kept warm for
    a minute, keepalives that notice a dead peer in 45 s, host keys checked and never
    accepted silently, and no prompt where no person can answer (batch)."""
    found = {
        "ControlMaster": "auto",
        "ControlPath": control,
        "ControlPersist": str(PERSIST),
        "ServerAliveInterval": "15",
        "ServerAliveCountMax": "3",
        "StrictHostKeyChecking": "yes",
        "ConnectTimeout": str(max(1, round(connect_timeout))),
    }
    if batch:
        found["BatchMode"] = "yes"
    return [word for key, value in found.items() for word in ("-o", f"{key}={value}")]


def remote_line(roost: str, env: Mapping[str, str], args: Iterable[str]) -> str:
    """The one string ssh hands the remote shell: `env K=V … /abs/roost ARGS`, every word quoted
    (a message or a name reaches the remote roost as the very same argv word).

    >>> remote_line("/opt/roost", {"ROOST_HOME": "/r h"}, ["send", "a", "$(rm -rf ~); x"])
    "env 'ROOST_HOME=/r h' /opt/roost send a '$(rm -rf ~); x'"
    """
    words = [*(["env", *(f"{k}={v}" for k, v in env.items())] if env else []), roost, *args]
    return shlex.join(words)


def argv(
    ssh: Sequence[str],
    opts: Sequence[str],
    dest: str,
    line: str | None = None,
    *,
    tty: bool = False,
    control: str | None = None,
) -> list[str]:
    """One ssh call: `ssh OPTS -T|-tt [-O control] -- DEST [LINE]`: `--` ends ssh's options
    before DEST, so neither DEST nor the line is ever read as one (host_problem refuses a DEST
    starting with '-' anyway).

    >>> argv(["ssh"], ["-o", "BatchMode=yes"], "me@h", "roost ls")
    ['ssh', '-o', 'BatchMode=yes', '-T', '--', 'me@h', 'roost ls']
    """
    found = [*ssh, *opts, *(["-tt"] if tty else ["-T"])]
    if control is not None:
        found += ["-O", control]
    found += ["--", dest]
    if line is not None:
        found.append(line)
    return found


_PLAIN_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
SERVICE_SOCKET_TAIL = "/run/service.sock"  # system/servicesock: run/service.sock in ROOST_HOME


def forward_spec(local: str, remote: str) -> str | None:
    """`-L`'s word for a master to listen on socket `local` and carry each connection to the
    roost service socket `remote` on the host (OpenSSH's streamlocal forwarding); None unless
    both are absolute paths of letters, digits and `._/-` only, short enough for a socket
    address, and `remote` is a service socket. ssh expands `${VAR}` and `%` tokens in these
    paths and splits them at ':': a host's answer naming `/tmp/${API_KEY}` would have ssh send
    this machine's secret there.

    >>> forward_spec("/tmp/r/ab.svc", "/srv/roost/run/service.sock")
    '/tmp/r/ab.svc:/srv/roost/run/service.sock'
    >>> [forward_spec("/tmp/r/ab.svc", bad) for bad in ("/a:b/run/service.sock",
    ...     "/tmp/${API_KEY}/run/service.sock", "/h/%u/run/service.sock", "/tmp/other.sock")]
    [None, None, None, None]
    """
    if not (_forwardable(local) and is_service_socket(remote)):
        return None
    return f"{local}:{remote}"


def is_service_socket(remote: str) -> bool:
    """Whether a host's answer names a roost service socket ssh would forward as written."""
    return _forwardable(remote) and remote.endswith(SERVICE_SOCKET_TAIL)


def _forwardable(path: str) -> bool:
    return bool(_PLAIN_PATH.fullmatch(path)) and len(path.encode()) <= 100


def host_problem(name: str, dest: str, roost: str, env: Mapping[str, str]) -> str | None:
    """Why a host cannot be stored as given, or None.

    >>> host_problem("build", "-oProxyCommand=x", "roost", {})
    "the destination '-oProxyCommand=x' cannot start with '-'"
    >>> host_problem("build", "me@b", "bin/roost", {})[:53]
    "the remote roost 'bin/roost' must be an absolute path"
    """
    problem = name_problem(name)
    if problem:
        return f"invalid host name: {problem}"
    if not dest or dest.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in dest):
        what = "cannot start with '-'" if dest.startswith("-") else "has no spaces or controls"
        return f"the destination {dest!r} {what}"
    if roost != "roost" and not roost.startswith("/"):
        return (
            f"the remote roost {roost!r} must be an absolute path "
            "(a non-login shell's PATH lacks ~/.local/bin)"
        )
    for key, value in env.items():
        if not _ENV_KEY.fullmatch(key) or "\0" in value or "\n" in value:
            return f"--env {key}=…: a name of letters, digits and '_', a value of one line"
    return None


def parse_env(pairs: Iterable[str]) -> dict[str, str]:
    """`K=V` words (host add --env) as a mapping.

    >>> parse_env(["ROOST_HOME=/srv/r", "A=b=c"])
    {'ROOST_HOME': '/srv/r', 'A': 'b=c'}
    """
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise RoostError(f"--env {pair!r}: give it as NAME=VALUE", code=2)
        found[key] = value
    return found


def split_target(word: str) -> tuple[str, str] | None:
    """`HOST:AGENT` as (host, agent), or None for a plain name. Unambiguous: no agent name may
    hold ':' (core/names.py), so a colon always names a host.

    >>> split_target("build:api-fix"), split_target("api-fix"), split_target("a:b:c")
    (('build', 'api-fix'), None, None)
    """
    host, sep, agent = word.partition(":")
    if not sep or name_problem(host) or name_problem(agent):
        return None
    return host, agent


def compatible(local: str, remote: str) -> bool:
    """Whether a remote roost speaks this one's JSON: the same major and minor version.

    >>> compatible("0.1.0", "0.1.7"), compatible("0.1.0", "0.2.0"), compatible("0.1", "junk")
    (True, False, False)
    """
    return local.split(".")[:2] == remote.split(".")[:2]


def version_of(text: str) -> str | None:
    """The version in `roost --version`'s line ("roost, version 0.1.0").

    >>> version_of("roost, version 0.1.0\\n"), version_of("bash: roost: not found")
    ('0.1.0', None)
    """
    found = re.search(r"roost, version (\S+)", text)
    return found.group(1) if found else None


def ssh_reason(stderr: str) -> str:
    """ssh's own reason for a failed call: its last non-empty line that is not a warning banner
    (`@@@@`), e.g. "Host key verification failed.".

    >>> ssh_reason("@@@@@\\nWARNING: ...\\nHost key verification failed.\\n")
    'Host key verification failed.'
    """
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and "@@@" not in ln]
    return lines[-1] if lines else "no reason given"
