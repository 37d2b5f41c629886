"""Test hosts: Debian's real `sshd` on 127.0.0.1, each with its own roost (ROOST_HOME, tmux
server), reached by the real `ssh` through a config of the test's own (docs/HOSTS.md).

Everything lives in the test's tmp dir: host keys and the client's key generated there,
sshd's own config (`-f`), the client's (`-F`, its known_hosts there too). Nothing of the
machine's ssh set-up is read or changed (sshd needs its privilege separation folder,
/run/sshd, which Debian's package makes at boot: created empty when missing).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from conftest import Env, kill_tagged_processes, make_env

SSHD = "/usr/sbin/sshd"
ROOST = str(Path(sys.executable).parent / "roost")  # the remote roost: this repo's, by path
# What the remote roost gets from its world (make_env's): its home, tmux socket, fake CLIs.
REMOTE_ENV = (
    "ROOST_HOME",
    "ROOST_TMUX_SOCKET",
    "TMUX_TMPDIR",
    "HOME",
    "FAKE_AGENT_LOG",
    "ROOST_CLAUDE_BIN",
    "ROOST_CODEX_BIN",
    "ROOST_GEMINI_BIN",
    "ROOST_AIDER_BIN",
    "LANG",
    "PYTHONDONTWRITEBYTECODE",
    "FAKE_AGENT_PYTHON",
    # as every test world: no service starts by itself (a remote spawn would start h1's, whose
    # monitor attaches to h1's new tmux server while the spawn makes its home)
    "ROOST_SERVICE_AUTOSTART",
    # the same roost as here when the suite runs another checkout's src (PYTHONPATH=…/src):
    # else the host's roost is the venv's, and its service's ident is another build's
    "PYTHONPATH",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "roost-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return (path.parent / f"{path.name}.pub").read_text().strip()


@dataclass
class Host:
    """One remote machine for a test: an sshd, and the roost world behind it."""

    name: str
    port: int
    folder: Path
    world: Env
    proc: subprocess.Popen[bytes] | None = None
    host_key: str = ""
    extra_config: list[str] = field(default_factory=list)  # sshd_config lines a test adds

    def roost(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """The remote roost run directly (not over ssh): what the host itself says."""
        return self.world.roost(*args, check=check)

    def start(self, authorized: Path) -> None:
        """sshd in the foreground (-D), logging to stderr (-e), its own config (-f)."""
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        config = self.folder / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.folder / 'host_key'}",
                    f"PidFile {self.folder / 'sshd.pid'}",
                    f"AuthorizedKeysFile {authorized}",
                    "UsePAM no",
                    "StrictModes no",
                    "PermitRootLogin yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "PrintMotd no",
                    "LogLevel ERROR",
                    *self.extra_config,
                    "",
                ]
            )
        )
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "sshd.log", "ab"),  # noqa: SIM115 - sshd keeps it
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"sshd did not start: {(self.folder / 'sshd.log').read_text()}")

    def stop(self) -> None:
        """sshd and every connection it serves (its session processes are in its group)."""
        if self.proc is not None:
            kill_sshd_tree(self.proc.pid)
            self.proc.wait()
            self.proc = None

    def add_args(self) -> list[str]:
        """`roost host add` for this host."""
        env = [f"--env={k}={self.world.env[k]}" for k in REMOTE_ENV if k in self.world.env]
        return ["host", "add", self.name, self.name, "--roost", ROOST, *env]


def kill_sshd_tree(pid: int) -> None:
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = [parent, *parent.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            continue


@dataclass
class Fleet:
    """The local world and its hosts: one client key, one client config naming each host."""

    local: Env
    folder: Path
    hosts: dict[str, Host] = field(default_factory=dict)

    @property
    def ssh_config(self) -> Path:
        return self.folder / "ssh_config"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"

    def add(self, name: str) -> Host:
        """A new host, started, known to ssh's config and to the local roost."""
        folder = self.folder / name
        folder.mkdir(mode=0o700)
        world_dir = self.local.tmp / f"h-{name}"
        world_dir.mkdir()
        host = Host(name, free_port(), folder, make_env(world_dir))
        host.host_key = keygen(folder / "host_key")
        host.start(self.folder / "authorized_keys")
        self.hosts[name] = host
        self.write_config()
        self.local.roost(*host.add_args())
        return host

    def write_config(self) -> None:
        blocks = []
        for h in self.hosts.values():
            blocks.append(
                "\n".join(
                    [
                        f"Host {h.name}",
                        "  HostName 127.0.0.1",
                        f"  Port {h.port}",
                        "  User root",
                        f"  HostKeyAlias {h.name}",
                        "",
                    ]
                )
            )
        common = [
            "Host *",
            f"  IdentityFile {self.folder / 'id'}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.known_hosts}",
            "  GlobalKnownHostsFile /dev/null",
            "  LogLevel ERROR",
            "",
        ]
        self.ssh_config.write_text("\n".join(blocks) + "\n".join(common))
        known = [f"{h.name} {' '.join(h.host_key.split()[:2])}" for h in self.hosts.values()]
        self.known_hosts.write_text("\n".join(known) + "\n")

    def ssh(self, name: str, *remote: str) -> subprocess.CompletedProcess[str]:
        """Plain ssh to a host with the test's config (no roost in between)."""
        return subprocess.run(
            ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", name, "--", *remote],
            capture_output=True,
            text=True,
            timeout=30,
        )

    def close(self) -> None:
        for h in self.hosts.values():
            h.stop()
            subprocess.run(
                ["tmux", "-L", h.world.socket, "kill-server"],
                capture_output=True,
                env=h.world.env,
            )
            kill_tagged_processes(h.world.env["ROOST_HOME"])
        kill_masters(str(self.ssh_config))
        self.forget_sockets()

    def forget_sockets(self) -> None:
        """The local roost's master sockets and their locks for this test's hosts."""
        import shlex

        from roost.hosts.rules import control_path
        from roost.store.hosts import read

        home = os.path.realpath(self.local.env["ROOST_HOME"])
        program = " ".join(shlex.split(self.local.env["ROOST_SSH_COMMAND"]))
        folder = f"/tmp/roost-ssh-{os.getuid()}"
        for host in read(os.path.join(home, "roost.db")):
            path = control_path(folder, home, program, host.name, host.dest)
            for leftover in (path, f"{path}.lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)


def kill_masters(config: str) -> None:
    """ssh masters (ControlPersist: they outlive the test by a minute) started with this
    test's config."""
    import psutil

    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            if proc.info["name"] == "ssh" and config in " ".join(proc.info["cmdline"] or []):
                proc.kill()
        except (psutil.Error, OSError):
            continue


def make_fleet(local: Env) -> Fleet:
    folder = local.tmp / "ssh"
    folder.mkdir(mode=0o700)
    fleet = Fleet(local, folder)
    (folder / "authorized_keys").write_text(keygen(folder / "id") + "\n")
    fleet.write_config()
    local.env["ROOST_SSH_COMMAND"] = f"ssh -F {fleet.ssh_config}"
    return fleet


def terminal(local: Env) -> Callable[..., str]:
    """A tmux server of its own standing for the person's terminal (an attach runs in it):
    `on(*args)` runs one of its commands and gives its output."""
    socket = f"{local.socket}-term"

    def on(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", socket, "-f", "/dev/null", *args],
            env=local.env,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout

    return on
