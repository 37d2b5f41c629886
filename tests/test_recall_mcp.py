"""Issue 39 point 4: the MCP `search_conversations` tool over `roost mcp` (the SDK's own client):
an agent finds what its child said, never what an agent outside its subtree said (unless the
person set `[recall] agents_see = "all"`); a person's own client searches every agent's; a
query FTS5 cannot read is one error line. Real tmux, the fake claude CLI's records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from test_mcp_server import Call, run_client

from conftest import Env

if TYPE_CHECKING:
    from mcp import ClientSession

pytestmark = pytest.mark.tmux


def refs(answer: dict[str, Any]) -> list[str]:
    return sorted(h["ref"] for h in answer["hits"])


def test_a_parent_searches_its_subtrees_conversations_only(world: Env) -> None:
    work = str(world.tmp / "work")
    world.roost("spawn", "lead", "--cwd", work)
    world.roost("spawn", "kid", "--cwd", work, "--parent", "lead", "--orchestrated-by", "lead")
    world.roost("spawn", "stranger", "--cwd", work)
    for name in ("lead", "kid", "stranger"):
        world.wait_status(name, "idle")
    world.roost("send", "kid", "the persimmon cache is warm")
    world.roost("send", "stranger", "my persimmon secret")
    lead_id = world.ls()["lead"]["id"]

    async def as_lead(session: ClientSession, call: Call) -> Any:
        found = await call("search_conversations", query="persimmon", role="user")
        bad = await call("search_conversations", query='"unclosed')
        return found, bad

    found, bad = run_client(world, lead_id, as_lead)
    # the kid's prompt (and lead's own: the notice of its child's reply quotes it), never the
    # stranger's
    assert found["scope"] == "subtree" and "kid@1" in refs(found)
    assert not any(r.startswith("stranger@") for r in refs(found))
    assert all("«persimmon»" in h["snippet"] for h in found["hits"])
    assert "FTS5 cannot read this query" in bad["error"]

    async def as_person(session: ClientSession, call: Call) -> Any:
        return await call("search_conversations", query="persimmon", role="user")

    everyone = run_client(world, None, as_person)
    assert everyone["scope"] == "all" and {"kid@1", "stranger@1"} <= set(refs(everyone))

    (world.home / "config.toml").write_text('[recall]\nagents_see = "all"\n')
    widened = run_client(world, lead_id, as_lead)[0]
    assert widened["scope"] == "all" and {"kid@1", "stranger@1"} <= set(refs(widened))
