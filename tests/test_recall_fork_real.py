"""`roost fork NAME@TURN NEW` at a turn before the last (issue 39), on the real pinned Claude
Code 2.1.332 and Codex 0.169.0 against their API stand-ins: the fork's next request carries
turn 1's words and not turn 2's, the fork goes on from the copy roost wrote (its session id in
every line, owner-only), and the original's record is not changed."""

from __future__ import annotations

import hashlib
import json
import stat
from typing import Any

import pytest
from test_real_codex import CodexWorld, codex_bin, cx  # noqa: F401  (fixtures)

from anthropic_stub import running_stub
from conftest import Env
from openai_responses_stub import input_texts
from real_claude import prepare_home, real_world, transcript_path, wait_for
from real_codex import rollout_meta, rollout_of

pytestmark = pytest.mark.tmux


def search(world: Env, *args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(world.roost("search", *args, "--json").stdout)
    return found


@pytest.mark.real_claude
def test_claude_forks_at_an_earlier_turn_with_that_turns_history_only(world: Env) -> None:
    work = world.tmp / "work"
    with running_stub() as stub:
        real_world(world, stub.url)
        prepare_home(world.user_home, [work])
        world.roost("spawn", "cc", "--cwd", str(work))
        world.wait_status("cc", "idle", 60)
        world.roost("send", "cc", "the first word is quokkaberry", "--wait")
        world.roost("send", "cc", "the second word is wombatfig", "--wait")
        sid = world.ls()["cc"]["provider_session_id"]
        path = transcript_path(world.user_home, work, sid)
        world.wait_for(
            lambda: path.exists() and path.read_bytes().count(b'"subtype":"turn_duration"') == 2,
            what="both turns written out",
        )
        world.wait_for(
            lambda: len(search(world, "quokkaberry OR wombatfig", "--role", "user")) == 2,
            what="both turns indexed",
        )
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        (world.tmp / "original.jsonl").write_bytes(path.read_bytes())

        world.roost("fork", "cc@1", "early")
        world.wait_status("early", "idle", 60)
        asked = len(stub.messages("main"))
        world.roost("send", "early", "what came before koalaplum", "--wait")
        world.wait_for(lambda: len(stub.messages("main")) > asked, what="the fork's request")
        body = json.dumps(stub.messages("main")[-1].body)
        assert "koalaplum" in body and "quokkaberry" in body
        assert "wombatfig" not in body
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before

        fork_sid = world.ls()["early"]["provider_session_id"]
        assert fork_sid != sid
        copy = transcript_path(world.user_home, work, fork_sid)
        world.wait_for(lambda: copy.exists() and b"koalaplum" in copy.read_bytes(), what="turn")
        assert b"wombatfig" not in copy.read_bytes()
        # the copy roost wrote, that claude forked: its own id in every line, owner-only
        listing = sorted(p.name for p in path.parent.glob("*.jsonl"))
        made = next(p for p in path.parent.glob("*.jsonl") if p not in (path, copy))
        assert len(listing) == 3, (listing, sid, fork_sid)
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
        lines = [json.loads(x) for x in made.read_bytes().splitlines()]
        assert {x["sessionId"] for x in lines if "sessionId" in x} == {made.stem}
        said = (listing, sid, fork_sid, made.read_text())
        assert b"quokkaberry" in made.read_bytes(), said
        assert b"wombatfig" not in made.read_bytes(), said
        forked = [
            e
            for e in json.loads(world.roost("events", "early", "--json").stdout)
            if e["kind"] == "forked"
        ]
        assert [(e["origin"], e["session"]) for e in forked] == [("cc", made.stem)]
        found = search(world, "quokkaberry OR koalaplum", "--role", "user", "--agent", "early")
        assert sorted(h["ref"] for h in found) == ["early@1", "early@2"]


def sent_for(cx: CodexWorld, text: str) -> list[str]:  # noqa: F811
    """The user texts of the last request whose input holds `text`."""
    turn = [r for r in cx.stub.responses("main") if text in input_texts(r.body)][-1]
    return input_texts(turn.body)


@pytest.mark.real_codex
def test_codex_forks_at_an_earlier_turn_with_that_turns_history_only(cx: CodexWorld) -> None:  # noqa: F811
    cx.spawn("cx")
    cx.reply("cx", "the first word is quokkaberry")
    cx.reply("cx", "the second word is wombatfig")
    sid = cx.ls("cx")["provider_session_id"]
    original = cx.rollout("cx")
    wait_for(
        lambda: len(search(cx.world, "quokkaberry OR wombatfig", "--role", "user")) == 2,
        20,
        "both turns indexed",
    )
    before = hashlib.sha256(original.read_bytes()).hexdigest()

    cx.world.roost("fork", "cx@1", "early")
    cx.wait_status("early", "idle", 60)
    cx.reply("early", "what came before koalaplum")
    said = sent_for(cx, "what came before koalaplum")
    assert any("quokkaberry" in x for x in said), said
    assert not any("wombatfig" in x for x in said), said
    assert hashlib.sha256(original.read_bytes()).hexdigest() == before

    forked = [
        e
        for e in json.loads(cx.world.roost("events", "early", "--json").stdout)
        if e["kind"] == "forked"
    ]
    (made_sid,) = [e["session"] for e in forked]
    made = rollout_of(cx.codex_home, made_sid)
    assert made is not None and made != original and made_sid != sid
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert rollout_meta(made)["id"] == made_sid
    assert b"wombatfig" not in made.read_bytes()
    fid = cx.ls("early")["provider_session_id"]
    assert fid not in (sid, None)
