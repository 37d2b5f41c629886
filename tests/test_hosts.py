"""Remote hosts over real OpenSSH (docs/HOSTS.md): tests/sshd.py starts Debian's sshd on
127.0.0.1 per host, each host with its own roost world; the local roost reaches them with the
test's own ssh config (ROOST_SSH_COMMAND)."""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sshd import ROOST, Fleet, keygen, terminal

from conftest import Env


def test_a_host_is_added_checked_and_listed(fleet: Fleet) -> None:
    h1 = fleet.add("h1")
    listed = json.loads(fleet.local.roost("host", "ls", "--json").stdout)
    assert [(h["name"], h["dest"]) for h in listed] == [("h1", "h1")]
    checked = fleet.local.roost("host", "check", "h1", "--json", check=False)
    report = json.loads(checked.stdout)
    assert report["reachable"] and report["compatible"], report
    assert report["version"] == h1.roost("--version").stdout.split()[-1]
    assert "doctor" in report, report

    # the same machine, a wrong path to its roost: said so, with what to do
    fleet.local.roost("host", "add", "wrong", "h1", "--roost", "/nowhere/roost")
    missing = fleet.local.roost("host", "check", "wrong", check=False)
    assert missing.returncode == 1
    assert missing.stdout.startswith("wrong: reachable; no roost at /nowhere/roost ("), missing
    assert "use --roost PATH" in missing.stdout


def test_ls_all_s_fast_path_says_what_the_full_cli_says(fleet: Fleet) -> None:
    """`roost ls --all` (entry.py → cli/fastall.py: hosts asked first, no Click) and the full
    CLI's (hosts/commands.py: the App's checks, then the same cli/fastall.ls_all) print the same
    rows and lines, with the service answering here or not; the entry's path never loads Click
    or the TUI."""
    h1 = fleet.add("h1")
    fleet.local.roost("spawn", "here", "--provider", "command", "--", "sleep", "300")
    fleet.local.roost("spawn", "h1:there", "--provider", "command", "--", "sleep", "300")

    def all_idle(world: Env) -> bool:
        return all(a["status"] == "idle" for a in world.ls().values())

    for world in (fleet.local, h1.world):
        world.wait_for(functools.partial(all_idle, world), 30)
    for service in ("stop", "start"):
        fleet.local.roost("service", service)
        for args in (("ls", "--all", "--json"), ("ls", "--all"), ("ls", "--json", "--all")):
            fast = fleet.local.roost(*args)
            full = fleet.local.roost_inprocess(*args)  # cli/main.py, never the fast path
            assert (fast.returncode, fast.stderr) == (full.returncode, full.stderr) == (0, "")
            if "--json" in args:
                assert json.loads(fast.stdout) == json.loads(full.stdout)
                assert {(r["host"], r["name"]) for r in json.loads(fast.stdout)} == {
                    (None, "here"),
                    ("h1", "there"),
                }
            else:
                assert fast.stdout == full.stdout
        timed = fleet.local.roost_importtime("ls", "--all")
        assert timed.returncode == 0, timed.stderr
        loaded = {line.split("|")[-1].strip() for line in timed.stderr.splitlines()}
        assert "there" in timed.stdout and "roost.hosts.operations" in loaded, timed.stdout
        assert not loaded & {"click", "textual", "roost.cli.main", "roost.hosts.commands"}, service


def test_ls_all_reads_a_host_s_service_through_the_master_with_no_roost_run_there(
    fleet: Fleet,
) -> None:
    """Once a host said where its service listens (`_hostls`), `ls --all` reads that socket
    through the warm master's forward (hosts/operations.py): the host's current agents, and no roost
    process started there. A stale answer (another ident), a master that died with its forward,
    and a stopped service each fall back to the host's roost and nothing is missed."""
    h1 = fleet.add("h1")
    h1.roost("spawn", "one", "--provider", "command", "--", "sleep", "300")
    h1.roost("service", "start")
    log = h1.world.tmp / "roost-runs.log"
    counted = h1.world.tmp / "counted-roost"
    counted.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(log))}\nexec {ROOST} "$@"\n')
    counted.chmod(0o755)
    fleet.local.roost("host", "rm", "h1")
    fleet.local.roost(*[str(counted) if a == ROOST else a for a in h1.add_args()])

    def listed() -> set[str]:
        rows = json.loads(fleet.local.roost("ls", "--all", "--json").stdout)
        return {r["name"] for r in rows if r["host"] == "h1"}

    def runs() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    both = {"one", "two"}

    seen: list[object] = []

    def served() -> bool:
        """A whole answer read with no roost run there (the service may hand one over: a
        change to record is its roost's to write)."""
        before = len(runs())
        found = listed()
        seen[:] = [found, runs()[before:]]
        return found == both and len(runs()) == before

    assert listed() == {"one"} and runs() == ["_hostls"]
    h1.roost("spawn", "two", "--provider", "command", "--", "sleep", "300")

    def wait_served(what: str) -> None:
        try:
            h1.world.wait_for(served, 60, what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; last seen, and the roost runs it took: {seen}") from None

    wait_served("an ls --all read from h1's service")

    master = control_socket(fleet, "h1")
    reader = Path(f"{master}.reader")
    kept = json.loads(reader.read_text())
    reader.write_text(json.dumps({**kept, "ident": "another build"}))
    asked = len(runs())
    assert listed() == both  # the service said no to another build: its roost answered
    assert runs()[asked:] == ["_hostls"] and json.loads(reader.read_text()) == kept

    check = subprocess.run(
        ["ssh", "-F", str(fleet.ssh_config), "-o", f"ControlPath={master}", "-O", "check", "h1"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    os.kill(int(check.stderr.split("pid=")[1].split(")")[0]), 9)  # the master dies
    [forward] = glob.glob(f"{master}.*.svc")  # its forward's socket stays behind, dead
    wait_served("a new master's forward to the same service")
    with socket.socket(socket.AF_UNIX) as probe:
        probe.connect(forward)  # the same path, listened on again

    h1.roost("service", "stop")
    asked = len(runs())
    assert listed() == both
    assert runs()[asked:] == ["_hostls"] and not reader.exists()

    # a sshd that forwards no socket: each ls --all is its roost's answer, and still whole
    h1.roost("service", "start")
    h1.stop()
    h1.extra_config = ["AllowStreamLocalForwarding no"]
    h1.start(fleet.folder / "authorized_keys")
    asked = len(runs())
    for n in (1, 2):
        assert listed() == both
        assert runs()[asked:] == ["_hostls"] * n


def test_a_remote_command_past_its_time_limit_is_cut(fleet: Fleet) -> None:
    """A command that outlasts `[ssh] timeout` is killed here with everything it started, and
    says so in one line (a stand-in roost that sleeps: `--roost /bin/sleep`)."""
    import psutil

    fleet.add("h1")
    fleet.local.roost("host", "add", "slow", "h1", "--roost", "/bin/sleep")
    fleet.local.roost("--host", "h1", "ls")  # the master is up: only the command is timed
    (fleet.local.home / "config.toml").write_text("[ssh]\ntimeout = 1\n")
    began = time.monotonic()
    cut = fleet.local.roost("--host", "slow", "30", check=False)
    took = time.monotonic() - began
    assert cut.returncode == 8
    assert cut.stderr.strip().splitlines() == [
        "roost: host slow unreachable: no answer within 1 s; the command was cut"
    ]
    assert took < 1 + 10, took  # the limit, and a Python's start on a busy CI
    config = str(fleet.ssh_config)
    clients = [
        p
        for p in psutil.process_iter(["cmdline"])
        if config in " ".join(p.info["cmdline"] or []) and "30" in (p.info["cmdline"] or [])
    ]
    assert clients == []  # its ssh was killed, not left behind


def test_commands_run_on_a_host_with_every_word_as_typed(fleet: Fleet) -> None:
    """spawn, send, ls, capture, kill, wake and restore through `--host` and `HOST:AGENT`: the
    host's roost does each (its own store and tmux say so), and a message full of shell reaches
    its agent as typed, running nothing on the way."""
    h1 = fleet.add("h1")
    local = fleet.local
    work = str(h1.world.tmp / "work")
    spawned = local.roost("--host", "h1", "spawn", "api", "--cwd", work)
    assert "spawned api" in spawned.stdout
    assert h1.world.ls()["api"]["state"] == "running"
    assert local.ls() == {}  # nothing of it here

    trap = h1.world.tmp / "pwned"
    text = f'it\'s $(touch {trap}); `touch {trap}` "q" ; done'
    local.roost("send", "h1:api", text)
    h1.world.wait_screen(h1.world.pane_of("api"), text)
    assert not trap.exists()

    local.roost("send", "h1:api", input="piped along\n")  # no TEXT: stdin goes to the host
    h1.world.wait_screen(h1.world.pane_of("api"), "piped along")

    listed = json.loads(local.roost("--host=h1", "ls", "--json").stdout)
    assert [a["name"] for a in listed] == ["api"]
    assert text in local.roost("capture", "h1:api").stdout
    local.roost("kill", "h1:api")
    assert h1.world.ls()["api"]["state"] == "stopped"
    local.roost("wake", "h1:api")
    assert h1.world.ls()["api"]["state"] == "running"
    h1.world.tmux("kill-server")  # the host rebooted
    assert h1.world.ls()["api"]["state"] != "running"
    local.roost("--host", "h1", "restore")
    assert h1.world.ls()["api"]["state"] == "running"

    unknown = local.roost("send", "nowhere:api", "hi", check=False)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "roost: no host named 'nowhere' (roost host ls; roost host add NAME DEST)"
    ]


def test_attach_to_a_host_agent_shows_its_screen_and_c_q_comes_back(fleet: Fleet) -> None:
    """`roost attach h1:api` in a terminal (a pane of a test tmux): ssh -tt to the host's
    `roost attach api`, the agent's screen shows here; C-q detaches and ends the ssh."""
    h1 = fleet.add("h1")
    local = fleet.local
    local.roost("spawn", "h1:api", "--cwd", str(h1.world.tmp / "work"))
    local.roost("send", "h1:api", "seen from afar")
    on = terminal(local)

    argv = [sys.executable, "-m", "roost", "attach", "h1:api"]
    on("new-session", "-d", "-s", "t", "-x", "120", "-y", "30", "-c", str(local.tmp), *argv)
    try:
        local.wait_for(
            lambda: "seen from afar" in on("capture-pane", "-p", "-t", "t"), what="the screen"
        )
        attached = "#{?client_control_mode,,#{client_session}}"
        assert h1.world.tmux("list-clients", "-F", attached).split() == ["api"]
        on("send-keys", "-t", "t", "C-q")
        local.wait_for(
            lambda: not h1.world.tmux("list-clients", "-F", attached).split(), what="detach"
        )
    finally:
        on("kill-server")


# ---- failure modes: each a clear line within a bounded time, never a hang ------------------
def control_socket(fleet: Fleet, name: str) -> str:
    """Where the local roost keeps host `name`'s ssh master (system/ssh.py's rule)."""
    from roost.hosts.rules import control_path

    home = os.path.realpath(fleet.local.env["ROOST_HOME"])
    program = " ".join(shlex.split(fleet.local.env["ROOST_SSH_COMMAND"]))
    return control_path(f"/tmp/roost-ssh-{os.getuid()}", home, program, name, name)


def test_a_stale_control_socket_that_never_answers_is_replaced(fleet: Fleet) -> None:
    """A master that hangs (its socket accepts, never speaks) hangs every plain `ssh` that
    multiplexes on it: ConnectTimeout does not bound that connect. roost's probe sees it,
    removes the socket and connects afresh, within its own limits."""
    from roost.core.settings import CONNECT_TIMEOUT
    from roost.hosts.rules import CHECK_TIMEOUT

    fleet.add("h1")
    path = control_socket(fleet, "h1")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    hung = socket.socket(socket.AF_UNIX)
    hung.bind(path)
    hung.listen(8)
    try:
        plain = [
            "ssh",
            "-F",
            str(fleet.ssh_config),
            "-o",
            f"ControlPath={path}",
            "-o",
            "ControlMaster=auto",
            "-o",
            "ConnectTimeout=1",
            "-o",
            "BatchMode=yes",
            "h1",
            "true",
        ]
        with pytest.raises(subprocess.TimeoutExpired):  # the trap roost must not fall into
            subprocess.run(plain, capture_output=True, timeout=CHECK_TIMEOUT)
        began = time.monotonic()
        listed = fleet.local.roost("--host", "h1", "ls", "--json")
        took = time.monotonic() - began
    finally:
        hung.close()
    assert json.loads(listed.stdout) == []
    # the probe's limit, the connect's, and two Pythons' starts (here and there) on a busy CI
    assert took < CHECK_TIMEOUT + CONNECT_TIMEOUT + 10, took
    probe = subprocess.run(
        ["ssh", "-F", str(fleet.ssh_config), "-o", f"ControlPath={path}", "-O", "check", "h1"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert probe.returncode == 0, probe.stderr  # a live master of roost's now


def test_a_changed_host_key_is_refused_with_ssh_s_reason(fleet: Fleet) -> None:
    """A host whose key changed (a man in the middle, or a reinstall): refused, with ssh's own
    words, and the known key is kept (never accepted silently)."""
    h1 = fleet.add("h1")
    h1.stop()
    (h1.folder / "host_key").unlink()
    (h1.folder / "host_key.pub").unlink()
    keygen(h1.folder / "host_key")
    h1.start(fleet.folder / "authorized_keys")
    known = fleet.known_hosts.read_text()
    refused = fleet.local.roost("--host", "h1", "ls", "--json", check=False)
    assert refused.returncode == 8
    assert refused.stderr.strip().splitlines() == [
        "roost: host h1 unreachable: Host key verification failed."
    ], refused.stderr
    assert fleet.known_hosts.read_text() == known


def test_a_host_that_never_answers_costs_its_time_limit_and_ls_all_goes_on(fleet: Fleet) -> None:
    """One host live, one whose port accepts and never speaks: `ls --all` lists the live one's
    agents and ours, says the other is unreachable in one line, within the connect limit."""
    h1 = fleet.add("h1")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    try:
        with fleet.ssh_config.open("a") as f:
            f.write(f"\nHost mute\n  HostName 127.0.0.1\n  Port {port}\n  User root\n")
        fleet.local.roost("host", "add", "mute", "mute")
        fleet.local.roost("spawn", "here", "--cwd", str(fleet.local.tmp / "work"))
        fleet.local.roost("spawn", "h1:there", "--cwd", str(h1.world.tmp / "work"))
        # after h1's connection is up: 2 s would be short for its first ssh on a loaded machine
        (fleet.local.home / "config.toml").write_text("[ssh]\nconnect_timeout = 2\n")
        began = time.monotonic()
        shown = fleet.local.roost("ls", "--all", "--json")
        took = time.monotonic() - began
        table = fleet.local.roost("ls", "--all")
    finally:
        silent.close()
    rows = json.loads(shown.stdout)
    assert sorted((r["host"] or "", r.get("name") or "") for r in rows) == [
        ("", "here"),
        ("h1", "there"),
        ("mute", ""),
    ]
    assert next(r for r in rows if r["host"] == "mute")["unreachable"]
    # ssh's own reason (its ConnectTimeout covers the banner) or roost's limit, in one line
    (line,) = shown.stderr.strip().splitlines()
    assert line.startswith("roost: host mute unreachable: "), line
    assert "banner exchange" in line or "no answer within 2 s" in line, line
    # its limit and a second's grace, with two Pythons' starts (here and h1's) on a busy CI
    assert took < 2 + 1 + 10, took
    lines = table.stdout.splitlines()
    assert lines[0].split()[:2] == ["HOST", "NAME"]
    assert {tuple(line.split()[:2]) for line in lines[1:]} == {("local", "here"), ("h1", "there")}


def test_a_host_that_trickles_its_answer_costs_ls_all_its_ls_timeout(fleet: Fleet) -> None:
    """Issue 35, finding 4: a host whose roost writes a byte every half second held `ls --all`
    for the command limit (120 s). Now every host has `[ssh] ls_timeout` (3 s) for its whole
    answer: the live host's agents are listed, the trickler is named late, in one line."""
    h1 = fleet.add("h1")
    trickle = fleet.local.tmp / "trickle"
    trickle.write_text("#!/bin/sh\nwhile :; do printf x; sleep 0.5; done\n")
    trickle.chmod(0o755)
    fleet.local.roost("host", "add", "drip", "h1", "--roost", str(trickle))
    fleet.local.roost("spawn", "h1:there", "--cwd", str(h1.world.tmp / "work"))
    fleet.local.roost("--host", "h1", "ls")  # the master is up: only the answer is timed
    began = time.monotonic()
    shown = fleet.local.roost("ls", "--all", "--json")
    took = time.monotonic() - began
    rows = json.loads(shown.stdout)
    assert [r.get("name") for r in rows if r["host"] == "h1"] == ["there"]
    (line,) = shown.stderr.strip().splitlines()
    assert line == "roost: host drip unreachable: no answer within 3 s ([ssh] ls_timeout)", line
    assert took < 3 + 10, took  # the limit, and Pythons' starts on a busy CI

    (fleet.local.home / "config.toml").write_text("[ssh]\nls_timeout = 1\n")
    table = fleet.local.roost("ls", "--all")
    assert "no answer within 1 s ([ssh] ls_timeout)" in table.stderr
    (fleet.local.home / "config.toml").write_text('[ssh]\nls_timeout = "soon"\n')
    refused = fleet.local.roost("ls", "--all", check=False)
    assert refused.returncode == 2 and "ssh.ls_timeout" in refused.stderr, refused


def test_what_a_host_writes_reaches_a_terminal_as_text(fleet: Fleet) -> None:
    """Issue 35, finding 2: a host's roost that answers with escape sequences (OSC 52 writes
    the clipboard, CSI clears the screen) on stdout and stderr: relayed to a terminal, they are
    shown as text; to a pipe, the bytes go as they are (a script reads them)."""
    from test_terminal_output import in_a_terminal

    fleet.add("h1")
    evil = fleet.local.tmp / "evil"
    evil.write_text(
        "#!/bin/sh\nprintf 'row\\033]52;c;ZXZpbA==\\007\\033[2J\\n'\n"
        "printf 'err\\033]0;owned\\007\\n' >&2\nexit 3\n"
    )
    evil.chmod(0o755)
    fleet.local.roost("host", "add", "evil", "h1", "--roost", str(evil))
    code, got = in_a_terminal(fleet.local, "--host", "evil", "ls")
    assert code == 3
    assert b"\x1b" not in got and b"\x07" not in got, got
    assert b"row\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J" in got and b"err\\x1b]0;owned" in got, got
    piped = fleet.local.roost("--host", "evil", "ls", check=False)
    assert piped.returncode == 3 and "\x1b]52;c;ZXZpbA==\x07" in piped.stdout


def test_the_host_s_sshd_killed_mid_command_is_one_clear_error(fleet: Fleet) -> None:
    """A remote watch streams; the host's sshd dies with every connection: the local roost
    ends at once with one line, and nothing of the command stays running on the host."""
    import psutil

    h1 = fleet.add("h1")
    home = h1.world.env["ROOST_HOME"]
    watch = subprocess.Popen(
        [sys.executable, "-m", "roost", "--host", "h1", "watch", "--json"],
        env=fleet.local.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def remote_watches() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if "watch" in (p.info["cmdline"] or []) and p.environ().get("ROOST_HOME") == home:
                    found.append(p)
        return found

    try:
        fleet.local.wait_for(remote_watches, what="the remote watch")
        h1.stop()
        _out, err = watch.communicate(timeout=20)
    finally:
        watch.kill()
    assert watch.returncode == 8
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roost: host h1 unreachable: "), err
    fleet.local.wait_for(lambda: not remote_watches(), what="the remote watch's end")


def test_watch_all_follows_every_host_and_resumes_after_a_dropped_connection(fleet: Fleet) -> None:
    """`watch --all --json`: the host's events arrive tagged with it; its ssh connection
    dropped (every ssh of the test killed), the watch reconnects with --since its last seq:
    an event made while it was away arrives once, none is missed or doubled."""
    from sshd import kill_masters

    h1 = fleet.add("h1")
    local = fleet.local
    local.roost("spawn", "h1:api", "--cwd", str(h1.world.tmp / "work"))
    watch = subprocess.Popen(
        [sys.executable, "-m", "roost", "watch", "--all", "--json"],
        env=local.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[dict[str, Any]] = []

    def read() -> None:
        assert watch.stdout is not None
        for line in watch.stdout:
            seen.append(json.loads(line))

    threading.Thread(target=read, daemon=True).start()

    def h1_seqs() -> list[int]:
        return [e["seq"] for e in list(seen) if e.get("host") == "h1" and e.get("seq")]

    try:
        local.wait_for(lambda: any(e.get("host") == "h1" for e in seen), what="h1's first look")
        local.roost("kill", "h1:api")
        local.wait_for(h1_seqs, what="h1's events")
        kill_masters(str(fleet.ssh_config))  # the connection drops
        local.roost("wake", "h1:api")  # while the watch is away (it waits a second)
        last = h1.world.roost("events", "--json", "--limit", "1")
        newest = json.loads(last.stdout)[-1]["id"]
        local.wait_for(lambda: newest in h1_seqs(), timeout=30, what="the event made meanwhile")
    finally:
        watch.kill()
        watch.wait()
    seqs = h1_seqs()
    assert len(seqs) == len(set(seqs)), seqs  # none twice
    every = [e["id"] for e in json.loads(h1.world.roost("events", "--json").stdout)]
    # none missed between the first and the last seen (the agent woken goes on making events
    # after the watch was stopped: those are not the watch's to have seen)
    assert [s for s in every if seqs[0] <= s <= max(seqs)] == sorted(seqs)


def test_a_host_s_alert_is_delivered_there_and_shown_here(fleet: Fleet) -> None:
    """`watch --all --json --notify`: an agent on h1 waits for its person; h1's roost decides
    the alert and delivers it through h1's own [notify] channels (a command there), once; the
    watch here only shows it on this terminal, titled with its host, and runs none of this
    machine's channels (issue 36 point 9: alerts are delivered by a service only)."""
    h1 = fleet.add("h1")
    local = fleet.local
    argv_to_file = str(Path(__file__).parent / "bin" / "argv-to-file")
    there, here = h1.world.tmp / "notified.jsonl", local.tmp / "notified.jsonl"

    def notify_config(world: Env, out: Path, terminal: str) -> None:
        command = json.dumps([sys.executable, argv_to_file, str(out)])
        config = f"[notify]\ncommand = {command}\nterminal = {terminal}\n"
        (world.home / "config.toml").write_text(config)

    notify_config(local, here, "true")
    local.roost("spawn", "h1:api", "--cwd", str(h1.world.tmp / "work"))
    notify_config(h1.world, there, "false")
    h1.world.wait_status("api", "idle")
    watch = subprocess.Popen(
        [sys.executable, "-m", "roost", "watch", "--all", "--json", "--notify"],
        env=local.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    said: list[str] = []
    assert watch.stdout is not None and watch.stderr is not None
    threading.Thread(target=lambda: lines.extend(watch.stdout), daemon=True).start()  # type: ignore[arg-type]
    err = watch.stderr.fileno()  # an alert ends in a BEL, not a newline: read as it comes
    chunks = iter(lambda: os.read(err, 4096).decode(errors="replace"), "")
    threading.Thread(target=lambda: said.extend(chunks), daemon=True).start()
    shown = "\x1b]777;notify;roost: api is waiting for you (on h1);Do you want to proceed?\x07"
    try:
        # h1's stream is followed from its end: what h1 records before the watch reaches it is
        # not an edge the watch sees, so the question comes after h1's first look arrived.
        local.wait_for(lambda: any('"h1"' in line for line in list(lines)), 30, "h1's first look")
        local.roost("send", "h1:api", "ask")
        h1.world.wait_status("api", "waiting")
        h1.world.roost("notify", "run", "--once")  # h1's alert, with or without its service
        local.wait_for(lambda: shown in "".join(said), timeout=30, what="the alert shown here")
    finally:
        watch.kill()
        watch.wait()
    sent = [json.loads(line)[-2:] for line in there.read_text().splitlines()]
    assert sent == [["roost: api is waiting for you", "Do you want to proceed?"]]
    assert not here.exists()  # this machine's channels: the watch delivers nothing
    alerts = [e for e in map(json.loads, lines) if e.get("kind") == "alert"]
    assert [(a["host"], a["kind"], a["name"]) for a in alerts] == [("h1", "alert", "api")]


@pytest.mark.service
def test_the_services_stop_ends_the_hosts_ssh_masters(fleet: Fleet) -> None:
    """Issue 36 point 7: nothing roost started outlives it. A master a `ls --all` started
    stayed up for ControlPersist (60 s) after the service stopped; it now ends with it."""
    from roost.system.ssh import mux_answers

    fleet.add("h1")
    fleet.local.start_service()
    fleet.local.roost("ls", "--all")
    master = control_socket(fleet, "h1")
    assert mux_answers(master, 5)
    fleet.local.roost("service", "stop")
    fleet.local.wait_for(lambda: not mux_answers(master, 5), 20, "the master ended")


@pytest.mark.service
def test_a_service_back_from_a_kill_9_ends_the_masters_it_left(fleet: Fleet) -> None:
    """A service killed -9 never stops its components, so its hosts' masters (and the streams
    followed through them) stayed up; the next run, after one that did not end cleanly, ends
    them before anything of it serves."""
    from roost.system.ssh import mux_answers

    fleet.add("h1")
    first = fleet.local.start_service()
    fleet.local.roost("ls", "--all")
    master = control_socket(fleet, "h1")
    assert mux_answers(master, 5)
    os.kill(first["pid"], signal.SIGKILL)  # its pane-died hook starts it again
    fleet.local.wait_for(
        lambda: (
            (s := json.loads(fleet.local.roost("service", "status", "--json").stdout))["running"]
            and s["pid"] != first["pid"]
        ),
        30,
        "the service back",
    )
    fleet.local.wait_for(lambda: not mux_answers(master, 5), 20, "the master ended")
