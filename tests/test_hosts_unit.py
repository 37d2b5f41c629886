"""Remote hosts' decisions without ssh: which words name a host, what a host may be, the ssh
argv (every remote word quoted), refusals that change nothing."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from roost.cli.remote import remote_args
from roost.hosts import rules as sshargs

from conftest import Env


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["send", "build:api", "hi"], ("build", ["send", "api", "hi"])),
        (["send", "api", "build:api"], None),  # a message with a colon is a message
        (["send", "--timeout", "5", "b:a", "x:y"], ("b", ["send", "--timeout", "5", "a", "x:y"])),
        (["attach", "build:api"], ("build", ["attach", "api"])),
        (["spawn", "b:new", "--cwd", "/w"], ("b", ["spawn", "new", "--cwd", "/w"])),
        (["--host", "b", "ls", "--json"], ("b", ["ls", "--json"])),
        (["--host=b", "restore"], ("b", ["restore"])),
        (["ls", "--json"], None),
        (["tab", "new", "a:b"], None),  # not an agent's name
        (["send", "a:b:c", "x"], None),  # no valid HOST:AGENT: refused locally as a bad name
    ],
)
def test_which_words_name_a_host(args: list[str], expected: object) -> None:
    assert remote_args(args) == expected


def test_the_remote_line_is_one_argv_word_per_word_whatever_it_holds() -> None:
    words = ["send", "api", "$(id); `id` 'q' \"d\" \\ \n next", "--", "-x"]
    line = sshargs.remote_line("/opt/r o/roost", {"ROOST_HOME": "/h $x"}, words)
    assert shlex.split(line) == ["env", "ROOST_HOME=/h $x", "/opt/r o/roost", *words]


def test_every_call_checks_host_keys_and_ends_options_before_the_destination() -> None:
    opts = sshargs.options("/tmp/roost-ssh-0/abc", batch=True, connect_timeout=5)
    argv = sshargs.argv(["ssh", "-F", "/c"], opts, "me@h", "roost ls")
    assert "StrictHostKeyChecking=yes" in argv and "BatchMode=yes" in argv
    assert "ConnectTimeout=5" in argv and "ControlPersist=60" in argv
    assert argv[-3:] == ["--", "me@h", "roost ls"]
    interactive = sshargs.options("/tmp/x", batch=False)
    assert "BatchMode=yes" not in interactive  # a person may answer a passphrase prompt


def test_control_paths_are_short_and_apart_per_home_config_and_host() -> None:
    one = sshargs.control_path("/tmp/roost-ssh-0", "/home/a/" + "x" * 300, "ssh", "h", "d")
    assert len(one) < 40
    assert one != sshargs.control_path("/tmp/roost-ssh-0", "/home/b", "ssh", "h", "d")
    assert one != sshargs.control_path("/tmp/roost-ssh-0", "/home/a", "ssh -F c", "h", "d")


@pytest.mark.parametrize(
    ("add", "words"),
    [
        (["bad.name", "me@h"], "invalid host name"),
        (["--", "h", "-oProxyCommand=touch /tmp/x"], "cannot start with '-'"),
        (["h", "me@h", "--roost", "bin/roost"], "must be an absolute path"),
        (["h", "me@h", "--env", "NOPE"], "give it as NAME=VALUE"),
        (["h", "me@h", "--env", "A B=1"], "--env A B="),
    ],
)
def test_a_bad_host_is_one_line_and_nothing_stored(world: Env, add: list[str], words: str) -> None:
    refused = world.roost_inprocess("host", "add", *add)
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("roost: ") and words in line, line
    assert world.roost_inprocess("host", "ls", "--json").stdout.strip() == "[]"


def test_a_host_name_is_taken_once_and_rm_forgets_it(world: Env) -> None:
    assert world.roost_inprocess("host", "add", "b", "me@b").returncode == 0
    again = world.roost_inprocess("host", "add", "b", "other@b")
    assert again.returncode == 2 and "a host named 'b' exists" in again.stderr
    listed = world.roost_inprocess("host", "ls", "--json").stdout
    assert '"dest": "me@b"' in listed
    assert world.roost_inprocess("host", "rm", "b").returncode == 0
    gone = world.roost_inprocess("host", "rm", "b")
    assert gone.returncode == 2 and "no host named 'b'" in gone.stderr


def test_the_ssh_command_is_read_like_git_ssh_command() -> None:
    from types import SimpleNamespace

    from roost.core.settings import parse
    from roost.hosts.operations import ssh_program

    def program(environ: dict[str, str], settings: dict[str, Any]) -> list[str]:
        reach = SimpleNamespace(environ=environ, settings=parse(settings))
        return ssh_program(reach)  # type: ignore[arg-type]

    configured: dict[str, Any] = {"ssh": {"command": "ssh -F '/my dir/config'"}}
    assert program({}, {}) == ["ssh"]
    assert program({}, configured) == ["ssh", "-F", "/my dir/config"]
    assert program({"ROOST_SSH_COMMAND": "/opt/ssh -v"}, configured) == ["/opt/ssh", "-v"]


def test_a_wrong_ssh_setting_is_one_line_naming_it(world: Env) -> None:
    world.home.mkdir(parents=True, exist_ok=True)
    (world.home / "config.toml").write_text("[ssh]\ntimeout = -1\n")
    refused = world.roost_inprocess("host", "ls")
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "line 2: ssh.timeout must be a number of seconds above 0, not -1" in line, line


def test_ls_all_refuses_what_it_cannot_show(world: Env) -> None:
    refused = world.roost_inprocess("ls", "--all", "--tree")
    assert refused.returncode == 2
    assert "--all lists every host's agents, without --tree or --git" in refused.stderr
    mixed = world.roost_inprocess("watch", "--all")
    assert mixed.returncode == 2 and "--all goes with --json" in mixed.stderr


def test_what_a_host_said_of_its_service_is_kept_for_that_host_only(tmp_path: Path) -> None:
    """`_hostls`'s reader is kept owner-only beside the master, read back only for the same
    DEST, roost and environment, and anything but two strings is not kept (a host's answer is
    input like any other)."""
    from roost.hosts import operations as hosts
    from roost.system.ssh import Link

    link = Link("b", ("ssh",), "me@b", str(tmp_path / "abc"))
    host = hosts.Host("b", "me@b", "/opt/roost", {"ROOST_HOME": "/r"})
    said = {"socket": "/r/run/service.sock", "ident": "roost\x1f/tmp"}
    hosts._remember(link, host, {**said, "extra": "dropped"})
    assert hosts._reader(link, host) == said
    assert os.stat(link.reader_file).st_mode & 0o777 == 0o600
    for other in (
        hosts.Host("b", "me@c", "/opt/roost", {"ROOST_HOME": "/r"}),
        hosts.Host("b", "me@b", "/usr/bin/roost", {"ROOST_HOME": "/r"}),
        hosts.Host("b", "me@b", "/opt/roost", {"ROOST_HOME": "/s"}),
    ):
        assert hosts._reader(link, other) is None
    for hostile in ({"socket": 5, "ident": "x"}, ["/r"], None, {"socket": "/r"}):
        hosts._remember(link, host, hostile)
        assert hosts._reader(link, host) is None and not os.path.exists(link.reader_file)


def test_a_host_s_service_answer_is_bounded_in_time_and_size() -> None:
    """A host's service is read through a forward (hosts/operations.py): one that trickles,
    floods or says junk costs at most the time limit and is never taken as an answer."""
    import socket
    import threading
    import time

    from roost.system import servicesock

    def answered(said: bytes, pause: float = 0.0, timeout: float = 1.0) -> object:
        mine, theirs = socket.socketpair()

        def serve() -> None:
            pieces = [said[i : i + 1] for i in range(len(said))] if pause else [said]
            try:
                theirs.recv(4096)  # the request line
                for piece in pieces:
                    theirs.sendall(piece)
                    time.sleep(pause)
            except OSError:
                pass  # the reader gave up and closed: as it should
            finally:
                theirs.close()

        threading.Thread(target=serve, daemon=True).start()
        return servicesock.ls_on(mine, True, "ident", timeout)

    assert answered(b"ok 2\n[]") == b"[]"
    assert answered(b"no\n") is None
    assert answered(b"ok 5\n[]") is None  # cut short
    assert answered(b"ok 2\n[]junk") is None  # more than it said
    assert answered(b"ok %d\n" % (servicesock.MAX_ANSWER + 1)) is None  # a flood, said
    assert answered(b"x" * 100) is None  # a head line that never ends
    began = time.monotonic()
    assert answered(b"ok 9\n[1,2,3,4]", pause=0.2, timeout=0.5) is None  # a trickle
    assert time.monotonic() - began < 0.5 + 0.4  # the limit, not the trickle's 3 s


@pytest.mark.parametrize(
    "socket_path",
    [
        pytest.param("/tmp/${API_KEY}/run/service.sock", id="a-variable"),
        pytest.param("/h/%u/run/service.sock", id="a-percent-token"),
        pytest.param("/h/a:b/run/service.sock", id="a-colon"),
        pytest.param("/h/~/run/service.sock", id="a-tilde"),
        pytest.param("/tmp/any.sock", id="not-a-service-socket"),
    ],
)
def test_a_reader_ssh_would_expand_or_split_is_never_kept(tmp_path: Path, socket_path: str) -> None:
    """ssh expands ${VAR} and % tokens in forwarded socket paths: a host naming
    /tmp/${API_KEY}/run/service.sock would get this machine's secret as a path."""
    from roost.hosts import operations as hosts
    from roost.system.ssh import Link

    link = Link("b", ("ssh",), "me@b", str(tmp_path / "abc"))
    host = hosts.Host("b", "me@b", "/opt/roost", {})
    hosts._remember(link, host, {"socket": socket_path, "ident": "i"})
    assert hosts._reader(link, host) is None
