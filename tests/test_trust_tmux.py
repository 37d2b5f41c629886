"""Issue 9, the tmux side of trust, on a real tmux: user strings reach tmux literally (items 1),
the tmux server holds no caller's secrets while restarts and keeper wakes get the agent's own
environment (11), and every tmux call gives up with one clear line (12)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from roost.core.service import SESSION as SERVICE_SESSION
from roost.tmux.protocol import TmuxError

from conftest import Env

pytestmark = pytest.mark.tmux

LOGGED = {"FAKE_AGENT_LOG_ENV": "MYKEY,FOO,OTHER"}  # fake_agent logs these variables at start


def marker_dir(world: Env, marker: Path) -> Path:
    """A directory whose name would run `touch MARKER` if tmux expanded it as a format (the
    slashes of the marker's path make it a few nested directories, as an unpacked archive can)."""
    path = world.tmp / f"w#(touch {marker})"
    path.mkdir(parents=True)
    return path


def assert_never_appears(world: Env, marker: Path) -> None:
    """tmux would run a #() job where it expands a format, in the background, from its event
    loop. A canary run through that loop now (`run-shell` returns once its command is done)
    shows the server has worked through what came before; only then is the marker's absence
    a proof (with no server left, nothing runs). (`display-message -p '#(...)'` is no canary:
    tmux 3.3a runs no job for it.)"""
    canary = world.tmp / f"canary-{marker.name}"
    proc = subprocess.run(
        ["tmux", "-L", world.socket, "run-shell", f"touch {canary}"],
        capture_output=True,
        text=True,
        env=world.env,
        check=False,
    )
    if proc.returncode == 0:
        assert canary.exists(), "tmux's canary job did not run"
    else:
        assert "no server running" in proc.stderr, proc.stderr
    assert not marker.exists(), f"tmux ran a command hidden in a path: {marker} exists"


def keeper_pid(world: Env, session: str) -> int:
    return int(
        next(p for p in world.panes() if p["session"] == session and p["keeper"] == "1")["pid"]
    )


def crash(world: Env, name: str) -> None:
    pane = next(p for p in world.panes() if p["window"] == name and p["roost_id"])
    world.wait_screen(pane["pane_id"], "❯")
    world.type(pane["pane_id"], "crash 3")


def restarted(world: Env, count: int) -> dict[str, Any]:
    """The `count`th start, once the supervisor made it. tmux 3.3a now and then misses a dying
    pane's SIGCHLD; any roost command that lists panes nudges it, as a user's `roost ls` would."""
    world.wait_for(
        lambda: world.ls() and len(world.starts()) >= count,
        timeout=20,
        what=f"{count} agent starts",
    )
    return world.starts()[count - 1]


def start_env(start: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in start["env"].items() if k in ("MYKEY", "FOO", "OTHER")}


# ---- item 1: user strings reach tmux literally ----------------------------------------------
def test_a_directory_named_like_a_tmux_format_is_used_literally(world: Env) -> None:
    marker = world.tmp / "PWNED"
    odd = marker_dir(world, marker)
    other = world.tmp / "x#{pane_id}%H"
    other.mkdir()
    for name, cwd in (("alpha", odd), ("beta", other)):
        world.roost("spawn", name, "--cwd", str(cwd))
    world.last_start(2)
    starts = world.starts()
    assert {s["cwd"] for s in starts} == {str(odd), str(other)}
    listed = world.ls()
    assert (listed["alpha"]["cwd"], listed["beta"]["cwd"]) == (str(odd), str(other))
    # the home sessions start in the directory itself (new windows opened there go there)
    listed_paths = world.tmux("list-sessions", "-F", "#{session_name}\t#{session_path}")
    paths = [p for p in listed_paths.splitlines() if not p.startswith(SERVICE_SESSION + "\t")]
    assert sorted(paths) == [f"alpha\t{odd}", f"beta\t{other}"]
    for name in ("alpha", "beta"):
        world.roost("kill", name)
        world.roost("wake", name)
    world.last_start(4)
    woken = world.starts()[2:]
    assert sorted(s["cwd"] for s in woken) == sorted([str(odd), str(other)])
    assert world.ls()["alpha"]["cwd"] == str(odd)
    assert_never_appears(world, marker)


def test_an_imported_cwd_or_home_with_a_tmux_format_runs_nothing(world: Env) -> None:
    marker = world.tmp / "PWNED"
    odd = marker_dir(world, marker)
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    exported = json.loads(world.roost("export").stdout)
    world.roost("rm", "alpha")
    for agent in exported["agents"]:
        agent["cwd"] = str(odd)
        agent["home"] = f"h#(touch {marker})"
    doc = world.tmp / "ws.json"
    doc.write_text(json.dumps(exported))
    fresh = {"ROOST_HOME": str(world.tmp / "other-home")}
    if world.roost("import", str(doc), env=fresh, check=False).returncode == 0:
        world.roost("wake", "alpha", env=fresh, check=False)  # a home name may be refused here
    assert_never_appears(world, marker)
    # the cwd alone (a valid home): woken in exactly that directory
    for agent in exported["agents"]:
        agent["home"] = "alpha"
    doc.write_text(json.dumps(exported))
    third = {"ROOST_HOME": str(world.tmp / "third-home")}
    world.roost("import", str(doc), env=third)
    # claude refuses the imported session id (its transcript lives under the first cwd) and
    # exits at once, which wake now reports; where it was started is what this test is about
    world.roost("wake", "alpha", env=third, check=False)
    assert world.last_start(2)["cwd"] == str(odd)
    assert_never_appears(world, marker)


def test_wake_starts_in_the_checked_directory_not_the_raw_stored_one(world: Env) -> None:
    """A stored cwd that only resolves through realpath (here: through a missing folder and
    `..`) is checked as that real path, and the agent is started in it."""
    import sqlite3

    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    world.roost("kill", "alpha")
    raw = str(world.tmp / "gone" / ".." / "work")
    exported = json.loads(world.roost("export").stdout)
    exported["agents"][0]["cwd"] = raw
    doc = world.tmp / "ws.json"
    doc.write_text(json.dumps(exported))
    fresh = {"ROOST_HOME": str(world.tmp / "other-home")}
    refused = world.roost("import", str(doc), env=fresh, check=False)
    assert refused.returncode == 2 and "normalized" in refused.stderr, refused.stderr
    # a store written by an older roost (or by hand) may still hold one: wake checks it too
    with sqlite3.connect(world.home / "roost.db") as db:
        db.execute("UPDATE agents SET cwd = ? WHERE name = 'alpha'", (raw,))
    world.roost("wake", "alpha")
    assert world.last_start(2)["cwd"] == str(world.tmp / "work")


def test_every_string_the_client_gives_tmux_arrives_as_written(world: Env) -> None:
    """tmux 3.3a expands formats in session and window names, `-c`, run-shell and status-left;
    the client escapes each, and what it does not escape (-e values) tmux takes as it is."""
    import shlex

    from roost.tmux.client import Tmux

    marker = world.tmp / "PWNED"
    odd = f"#(touch {marker})#{{pane_id}}%H"
    cwd = marker_dir(world, marker)
    hooks = world.tmp / f"q'\"$HOME\\{odd}"  # the supervisor's own path, quoted for sh
    hooks.mkdir(parents=True)
    supervisor = hooks / "supervise"
    supervisor.write_text(f'#!/bin/sh\necho "$1" >> {shlex.quote(str(world.tmp / "died"))}\n')
    supervisor.chmod(0o755)
    tmux = Tmux(world.socket, environ=world.env, supervisor=shlex.quote(str(supervisor)))
    session, _keeper = tmux.new_home(f"h{odd}", str(cwd), ["sleep", "60"], {"V": odd})
    window, pane, _pid = tmux.new_window(
        session, f"w{odd}", str(cwd), ["sh", "-c", "exit 3"], "id-1"
    )
    died = world.tmp / "died"

    def hook_line() -> bool:
        # tmux 3.3a now and then loses the exit of a process that ends at once (a loaded run
        # found the pane's `sh` an unreaped zombie and no hook after 60 s; 3 in 240 starts
        # beside a CPU hog): roost's looks nudge the server then (tmux/client.py reap_missed),
        # and so does this wait's. The hook's line, not the file: it exists before its writer
        # has written.
        tmux.list_panes()
        return died.exists() and died.read_text().endswith("\n")

    world.wait_for(hook_line, 60, what="the pane-died hook's line")
    assert died.read_text() == f"{pane}\n"
    tmux.respawn(pane, window, str(cwd), ["sleep", "60"])
    listed = world.tmux(
        "list-panes",
        "-a",
        "-F",
        "#{session_name}|#{session_path}|#{window_name}|#{pane_start_path}",
    )
    assert listed.splitlines() == [f"h{odd}|{cwd}|home|{cwd}", f"h{odd}|{cwd}|w{odd}|{cwd}"]
    assert world.tmux("show-environment", "-t", session, "V") == f"V={odd}\n"
    view = tmux.view_client()
    try:
        view.open_view("v", f"title {odd}", 80, 24, ["sleep", "60"])
        shown = view.run("display-message", "-p", "-t", "=v:", "#{T:status-left}")
        assert shown == f"title {odd}\n"
    finally:
        view.run("kill-server")
    assert_never_appears(world, marker)


def test_a_project_holding_a_roost_package_never_runs_as_roost(world: Env) -> None:
    """`python -m roost...` started by tmux in a project's directory would import that project's
    `roost/` first: the launcher, the supervisor and the keeper's wakes must not."""
    marker = world.tmp / "PWNED"
    project = world.tmp / "project"
    (project / "roost").mkdir(parents=True)
    (project / "roost" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    world.roost("spawn", "alpha", "--cwd", str(project), "--restart", "on-failure")
    crash(world, "alpha")
    restarted(world, 2)  # by the supervisor
    world.roost("kill", "alpha")
    world.wait_screen("alpha:0", "stopped (last exit")
    world.tmux("send-keys", "-t", "alpha:0", "Enter")  # the keeper wakes it
    assert world.last_start(3)["cwd"] == str(project)
    assert not marker.exists()


# ---- item 11: the server's environment -----------------------------------------------------
def test_the_tmux_server_and_keepers_hold_no_callers_secrets(world: Env) -> None:
    world.roost(
        "spawn",
        "first",
        "--cwd",
        str(world.tmp / "work"),
        env={**LOGGED, "MYKEY": "secret", "FOO": "a"},
    )
    assert start_env(world.last_start(1)) == {"MYKEY": "secret", "FOO": "a"}
    server = world.tmux("show-environment", "-g")
    names = {line.split("=")[0] for line in server.splitlines()}
    assert not names & {"MYKEY", "FOO", "FAKE_AGENT_LOG"} and "secret" not in server
    keeper = psutil.Process(keeper_pid(world, "first")).environ()
    assert not set(keeper) & {"MYKEY", "FOO"} and "secret" not in keeper.values()
    assert keeper["ROOST_HOME"] == str(world.home)  # what the keeper needs is there
    # the start's environment is kept owner-only for restarts, never in the database
    agent_id = world.ls()["first"]["id"]
    saved = world.home / "agents" / agent_id / "env.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["MYKEY"] == "secret"
    for path in [world.home / "roost.db", *world.home.glob("roost.db-*")]:
        assert b"secret" not in path.read_bytes()


def test_a_supervised_restart_gets_the_agents_own_environment(world: Env) -> None:
    world.roost(
        "spawn",
        "first",
        "--cwd",
        str(world.tmp / "work"),
        env={**LOGGED, "MYKEY": "secret", "FOO": "a"},
    )  # this caller starts the server
    world.roost(
        "spawn",
        "crashy",
        "--cwd",
        str(world.tmp / "work"),
        "--restart",
        "on-failure",
        env={**LOGGED, "MYKEY": "mine", "FOO": "b"},
    )
    world.roost(
        "spawn",
        "plain",
        "--cwd",
        str(world.tmp / "work"),
        "--restart",
        "on-failure",
        env={**LOGGED, "OTHER": "b"},
    )
    assert start_env(world.last_start(3)) == {"OTHER": "b"}
    crash(world, "crashy")
    again = restarted(world, 4)
    assert again["argv"][0] == "--resume" and again["env"]["ROOST_AGENT_NAME"] == "crashy"
    assert start_env(again) == {"MYKEY": "mine", "FOO": "b"}
    crash(world, "plain")
    assert start_env(restarted(world, 5)) == {"OTHER": "b"}  # no MYKEY from anyone else


def test_a_keeper_wake_gets_the_agents_own_environment(world: Env) -> None:
    world.roost(
        "spawn",
        "first",
        "--cwd",
        str(world.tmp / "work"),
        env={**LOGGED, "MYKEY": "secret", "FOO": "a"},
    )
    world.roost(
        "spawn",
        "second",
        "--cwd",
        str(world.tmp / "work"),
        "--home",
        "first",
        env={**LOGGED, "OTHER": "b"},
    )
    world.last_start(2)
    world.roost("kill", "first")
    world.roost("kill", "second")
    world.wait_for(
        lambda: world.screen("first:0").count("stopped (last exit") == 2,
        what="the keeper to show both stopped",
    )
    world.tmux("send-keys", "-t", "first:0", "Enter")
    world.last_start(4)
    woken = {s["env"]["ROOST_AGENT_NAME"]: start_env(s) for s in world.starts()[2:]}
    assert woken == {"first": {"MYKEY": "secret", "FOO": "a"}, "second": {"OTHER": "b"}}
    assert all("ROOST_IN_KEEPER" not in s["env"] for s in world.starts())


# ---- item 12: tmux that does not answer ----------------------------------------------------
def hanging_tmux(world: Env, tag: str) -> Path:
    """A tmux stand-in that never answers (through a child, as a stuck client would)."""
    script = world.tmp / "tmux-hangs"
    script.write_text(f"#!/bin/sh\nsleep {tag}\n")
    script.chmod(0o755)
    (world.home / "config.toml").write_text(f'[tmux]\nbin = "{script}"\n')
    return script


def sleepers(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if proc.info["cmdline"] == ["sleep", tag]:
            found.append(proc)
    return found


@pytest.mark.parametrize(
    "args", [("spawn", "beta", "--cwd", "."), ("capture", "alpha"), ("kill", "alpha")]
)
def test_a_tmux_that_does_not_answer_fails_the_command_within_the_timeout(
    world: Env, args: tuple[str, ...]
) -> None:
    world.roost("spawn", "alpha", "--cwd", str(world.tmp / "work"))
    which = ("spawn", "capture", "kill").index(args[0]) + 1  # a tag of its own per test
    tag = f"{os.getpid() % 1000 + 600}.{which}"
    hanging_tmux(world, tag)
    began = time.monotonic()
    proc = world.roost(*args, check=False, env={"ROOST_TMUX_TIMEOUT": "1"}, timeout=20)
    took = time.monotonic() - began
    assert proc.returncode == 5, proc.stderr
    assert proc.stderr.startswith("roost: tmux did not answer within 1 s")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert took < 8
    # The stuck client and its children were killed (SIGKILL; on a loaded machine one can
    # take a moment to be scheduled and exit, unlike a sleeper left alive for 600 s)
    _, alive = psutil.wait_procs(sleepers(tag), timeout=10)
    assert alive == []


def test_the_client_gives_up_on_every_path_with_one_clear_error(tmp_path: Path) -> None:
    from roost.core.errors import RoostError
    from roost.tmux.client import Tmux, TmuxTimeout

    script = tmp_path / "tmux-hangs"
    script.write_text("#!/bin/sh\nexec sleep 60\n")
    script.chmod(0o755)
    tmux = Tmux(
        "nobody",
        binary=str(script),
        environ={"PATH": os.environ["PATH"], "ROOST_TMUX_TIMEOUT": "0.2"},
    )
    calls = {
        "version": tmux.version,
        "list_panes": tmux.list_panes,
        "capture_many": lambda: tmux.capture_many(["%1", "%2"], "\x1e"),
        "window_option": lambda: tmux.window_option("@1", "@roost_state"),
        "refresh_keeper": lambda: tmux.refresh_keeper("$1"),
        "open_view": lambda: tmux.open_view("v", "t", 80, 24, ["true"]),
    }
    for name, call in calls.items():
        began = time.monotonic()
        with pytest.raises(TmuxTimeout, match=r"^tmux did not answer within 0.2 s"):
            call()
        assert time.monotonic() - began < 2, name
    with pytest.raises(RoostError, match="ROOST_TMUX_TIMEOUT must be a number of seconds"):
        Tmux("nobody", environ={"ROOST_TMUX_TIMEOUT": "soon"})


def test_what_reaches_tmux_literally_and_what_the_server_may_hold() -> None:
    from roost.tmux.client import _command_string, literal, server_environment

    assert literal("/p/#(touch x)#{pane_id}##") == "/p/##(touch x)##{pane_id}####"
    assert _command_string('a "b" $HOME \\ #(c)') == 'a \\"b\\" \\$HOME \\\\ ##(c)'
    caller = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C.UTF-8",
        "ROOST_HOME": "/r",
        "ANTHROPIC_API_KEY": "sk",
        "AWS_SECRET_ACCESS_KEY": "x",
        "ROOST_CLAUDE_BIN": "/c",
    }
    assert server_environment(caller) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C.UTF-8",
        "ROOST_HOME": "/r",
    }


def test_every_run_shell_of_the_pane_died_hook_is_silent_and_succeeds() -> None:
    """tmux shows a run-shell's output, or "returned N" when it fails, in view-mode in the
    current pane, which with no client attached is some agent's: the hook's poke of the service
    failed whenever no service ran, so killing one agent put another agent's pane in view-mode,
    and a send's Enter went to the view (test_codex_e2e's kill test, without a service)."""
    from roost.core.settings import Settings
    from roost.ops.context import make_tmux
    from roost.system.config import Paths

    tmux = make_tmux(Paths(Path("/home/u/roost")), Settings(), {})
    hook = next(a for a in tmux._server_setup() if "run-shell" in a)
    shells = [part for part in hook.split(" ; ") if part.startswith("run-shell")]
    assert len(shells) == 2
    for part in shells:
        assert part.endswith('>/dev/null 2>&1 || true"'), part


@pytest.mark.tmux
def test_a_new_session_that_meets_a_server_on_its_way_out_is_tried_again(tmp_path: Path) -> None:
    """Right after `tmux kill-server` (or as its last session closes) a server closes new
    connections before reading them, and the client says "server exited unexpectedly": the
    new-session made nothing, and roost tries it again once that server is gone (seen on CI:
    a spawn right after a kill-server failed)."""
    from roost.tmux.client import Tmux

    (tmp_path / "tmux").mkdir()
    count = tmp_path / "calls"
    script = tmp_path / "tmux-dying-once"
    script.write_text(
        "#!/bin/sh\n"
        f'echo x >> "{count}"\n'
        f'if [ "$(wc -l < "{count}")" -le 2 ]; then\n'
        '  echo "server exited unexpectedly" >&2; exit 1\n'
        "fi\n"
        f'exec {shutil.which("tmux")} "$@"\n'
    )
    script.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "TMUX_TMPDIR": str(tmp_path / "tmux")}
    tmux = Tmux(f"rt-dying-{os.getpid()}", binary=str(script), environ=env)
    try:
        tmux.run("new-session", "-d", "-s", "home", "sleep", "60")
        assert count.read_text().count("x") == 3
        assert "home" in tmux.run("list-sessions", "-F", "#{session_name}")
        subprocess.run([str(script), "-L", tmux.socket, "kill-server"], env=env, check=False)
        # a spawn's home: roost's server settings, then the new-session, in one command list
        count.write_text("")
        tmux.new_home("made", str(tmp_path), ["sleep", "60"], {})
        assert count.read_text().count("x") == 3
        assert "made" in tmux.run("list-sessions", "-F", "#{session_name}")
    finally:
        subprocess.run([str(script), "-L", tmux.socket, "kill-server"], env=env, check=False)
    # other commands are not tried again: only a new-session is known to have done nothing
    count.write_text("")
    with pytest.raises(TmuxError, match="server exited unexpectedly"):
        tmux.run("kill-session", "-t", "home")
    assert count.read_text().count("x") == 1
