"""Issue 35 part 1: a CLI's files are read like network input (system/untrusted.py). Each
reader of a transcript refuses a FIFO, a device and a socket without blocking, follows no
symlink out of its CLI's folder when told which it is, reads a bounded amount, and one
agent's bad file never stops the others' usage and budgets."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from test_usage_cli import DATA, transcript

from roost.system import untrusted
from roost.usage.rules import MAX_TOKENS

from conftest import Env


def test_a_regular_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    assert untrusted.read(path) == b'{"a": 1}\n{"b": 2}\n'
    assert untrusted.read(path, limit=4) == b'{"a"'
    assert untrusted.tail(path, limit=10) == b'{"b": 2}\n'  # from a line's start


@pytest.mark.timeout(20)  # a FIFO with no writer would hold a plain open for good
def test_a_fifo_a_device_a_socket_and_a_folder_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    sock_path = tmp_path / "s.jsonl"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        for path in (fifo, zero, tmp_path):
            with pytest.raises(untrusted.NotARegularFile):
                untrusted.read(path)
        for path in (fifo, zero, sock_path, tmp_path):  # a socket: the open itself fails
            with pytest.raises(OSError):  # what every reader already takes as "nothing yet"
                untrusted.tail(path)


def test_a_symlink_out_of_the_clis_folder_is_refused(tmp_path: Path) -> None:
    cli = tmp_path / "cli"
    cli.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not the CLI's\n")
    (cli / "t.jsonl").symlink_to(secret)
    (cli / "ok.jsonl").write_text("{}\n")
    with pytest.raises(untrusted.OutsideFolder):
        untrusted.read(cli / "t.jsonl", within=[str(cli)])
    assert untrusted.read(cli / "ok.jsonl", within=[str(cli)]) == b"{}\n"


def test_a_line_over_the_limit_is_left_out() -> None:
    data = b"short\n" + b"x" * (untrusted.LINE_LIMIT + 1) + b"\nlast\n"
    assert list(untrusted.lines(data)) == ["short", "last"]
    assert untrusted.too_long(data) == 1


@pytest.fixture
def two(world: Env) -> Env:
    for name in ("bad", "good"):
        world.roost("spawn", name, "--cwd", str(world.tmp / "work"))
    for name in ("bad", "good"):
        world.wait_status(name, "idle")
    return world


def _huge_line() -> str:
    return json.dumps(
        {
            "type": "assistant",
            "timestamp": "2026-11-01T10:00:00Z",
            "message": {
                "id": "msg_huge",
                "model": "claude-sonnet-4-5-20250929",
                "usage": {"input_tokens": 10**30, "output_tokens": MAX_TOKENS + 1},
            },
        }
    )


def test_a_transcript_with_absurd_numbers_spoils_nothing_for_the_others(two: Env) -> None:
    """A line with input_tokens of 10**30 made `roost usage` die with an OverflowError and the
    service's budgets fail for every agent."""
    with transcript(two, "bad").open("a") as fh:
        fh.write(_huge_line() + "\n")
    with transcript(two, "good").open("a") as fh:
        fh.write((DATA / "claude.jsonl").read_text())
    shown = two.roost("usage", "--json")
    report = json.loads(shown.stdout)
    totals = {r["who"]: 0 for r in report["rows"]}
    for r in report["rows"]:
        totals[r["who"]] += r["total"]
    assert totals.get("good") == 13 + 49 + 100 + 2100 + 2
    assert totals.get("bad", 0) == 0  # the absurd numbers count as nothing
    assert two.ls()["good"]["usage"]["total"] == 13 + 49 + 100 + 2100 + 2


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_transcript_that_is_no_file_never_hangs_a_reader(two: Env, kind: str) -> None:
    """A transcript that is a FIFO made `usage` and `read` hang; one that is a symlink to
    /dev/zero made `read` die of MemoryError at 2.6 GB."""
    two.roost("send", "bad", "hello")  # a turn: its transcript path is known
    path = transcript(two, "bad")
    two.wait_for(path.exists, 30, "bad's transcript")
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with transcript(two, "good").open("a") as fh:
        fh.write((DATA / "claude.jsonl").read_text())
    usage = two.roost("usage", "good", "--json", timeout=60)
    assert usage.returncode == 0
    read = two.roost("read", "bad", "--json", check=False, timeout=60)
    assert read.returncode == 0, read.stderr
    said = json.loads(read.stdout)
    assert said["source"] in ("screen", "none") or said.get("messages") == []
    assert two.ls()["good"]["usage"]["total"] > 0


def test_a_line_nested_past_pythons_stack_is_one_line_left_out(tmp_path: Path) -> None:
    """A JSON line 200,000 brackets deep (1/20 of the line limit) raised RecursionError in
    every reader that parsed it: doctor, fork, read and MCP's read died on it."""
    from roost.providers import claude, codex
    from roost.usage import rules as usage

    deep = "[" * 200_000 + "]" * 200_000
    good = (DATA / "claude.jsonl").read_text()
    path = tmp_path / "t.jsonl"
    path.write_text(deep + "\n" + good)
    assert len(list(untrusted.entries(path.read_bytes()))) == len(good.splitlines())
    assert claude.transcript_messages(path) == claude.transcript_messages(DATA / "claude.jsonl")
    found, state = usage.read("claude", [deep, *good.splitlines()], {})
    assert found and state[usage.SKIPPED] == {usage.MALFORMED: 1}
    assert usage.fork_point("claude", [deep, *good.splitlines()])
    rollout = tmp_path / "r.jsonl"
    rollout.write_text(deep + "\n")
    assert codex.rollout_messages(rollout) == []


def test_an_agents_mcp_file_that_is_a_fifo_blocks_nobody(tmp_path: Path) -> None:
    """The launch's mcp.json sits in the agent's folder, which its process may write: doctor
    and the endpoint's start read it, never blocked by a FIFO planted there."""
    from roost.providers import mcpwire

    path = Path(mcpwire.config_path(str(tmp_path), "a1"))
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert mcpwire.entry(str(tmp_path), "a1") == mcpwire.server_entry(str(tmp_path), "a1")


@pytest.mark.timeout(30)
def test_the_listed_marker_and_codexs_own_config_as_fifos_block_nobody(tmp_path: Path) -> None:
    """The mcp-listed marker sits in the agent's folder too (the held component reads it at
    every pass: a FIFO there stalled every held prompt), and Codex's config.toml is another
    program's file (read at each codex launch)."""
    from roost.providers import codex, hooks, mcpwire

    marker = Path(hooks.agent_dir(str(tmp_path), "a1")) / mcpwire.LISTED
    marker.parent.mkdir(parents=True)
    os.mkfifo(marker)
    assert mcpwire.listed(str(tmp_path), "a1") is None
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    os.mkfifo(codex_home / "config.toml")
    assert codex.user_notify({"CODEX_HOME": str(codex_home)}) is None
    (codex_home / "config.toml").unlink()
    (codex_home / "config.toml").write_text('notify = ["my-notifier", "--flag"]\n')
    assert codex.user_notify({"CODEX_HOME": str(codex_home)}) == ["my-notifier", "--flag"]
