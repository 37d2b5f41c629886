"""roost web with the real Claude Code (pinned 2.1.332, offline against the Messages API
stand-in): its permission dialog's question and choices are read from its own screen, and the
first one's button answers it (the selection moved, then Enter) and approves the tool call."""

from __future__ import annotations

import re

import pytest

from anthropic_stub import running_stub
from conftest import Env
from real_claude import real_world
from web_server import Client, running

pytestmark = [pytest.mark.tmux, pytest.mark.real_claude]


@pytest.mark.timeout(240)
def test_a_real_dialogs_choice_pressed_from_the_page(world: Env) -> None:
    with running_stub() as stub:
        real_world(world, stub.url)
        work = world.tmp / "work"
        world.roost("spawn", "ca", "--cwd", str(work), "--", "--permission-mode", "default")
        world.wait_status("ca", "idle", 60)
        stub.queue_tool_use(
            "Bash", {"command": "echo roost > marker.txt", "description": "Write a marker file"}
        )
        world.roost("send", "ca", "please write the file")
        world.wait_status("ca", "waiting", 60)
        with running(world) as web:
            me = Client(web)
            me.login()
            _, _, page = me.request("GET", "/a/ca")
            labels = re.findall(r'data-key="(\d)" data-question="[0-9a-f]+">\d\. ([^<]+)<', page)
            qid = re.search(r'data-question="([0-9a-f]{16})"', page)
            assert qid is not None
            screen = world.screen(world.pane_of("ca"))
            # Claude Code 2.1.332's four choices, in its words
            assert [k for k, _ in labels] == ["1", "2", "3", "4"], (labels, screen)
            assert labels[0][1] == "Yes" and labels[3][1] == "No", labels
            assert labels[1][1].startswith("Yes, and always allow access to ")
            assert labels[2][1].startswith("Yes, and switch to auto mode")
            status, body = me.post("/a/ca/answer", {"choice": "1", "question": qid[1]})
            assert status == 200 and body["answered"] == "Yes", body
            world.wait_for(lambda: (work / "marker.txt").exists(), 60, "the tool to run")
            world.wait_status("ca", "idle", 60)
