"""`roost mcp`'s front (mcp/front.py): an agent's CLI starting its MCP server gets the SDK's own
answers to its first requests without the SDK loaded, and the SDK takes the connection over at
the first call, as if it had served it from the start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_mcp_input import RawClient

from roost.mcp import front

from conftest import Env

SDK_LIBRARY = "pydantic_core"  # a shared library the SDK (through pydantic) maps, and no
# other part of roost mcp


CLAUDE = {  # the envelope Claude Code 2.1.332 sends with each request (its own words)
    front.PROTOCOL_KEY: "2026-07-28",
    front.CLIENT_KEY: {"name": "claude-code", "title": "Claude Code", "version": "2.1.332"},
    front.CAPABILITIES_KEY: {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    },
}
LISTENED = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


def sdk_loaded(pid: int) -> bool:
    return SDK_LIBRARY in Path(f"/proc/{pid}/maps").read_text()


def recorded() -> dict[str, Any]:
    return dict(json.loads(Path(front.RECORDING).read_text()))


def test_the_recording_is_what_the_live_sdk_answers() -> None:
    from roost.mcp import record

    assert record.recording() == recorded(), (
        "mcp/handshake.json is not what this SDK and these tools answer: "
        "run `python -m roost.mcp.record` and commit the file"
    )


@pytest.mark.tmux
def test_the_front_answers_a_clis_start_and_the_sdk_takes_over_at_the_first_call(
    world: Env,
) -> None:
    answers = recorded()["answers"]["2025-06-18"]
    client = RawClient(world)
    try:
        client.start()  # initialize (id 0), then the initialized notification
        assert client.replies[0]["result"] == answers["initialize"]
        for rid, method in enumerate(("tools/list", "prompts/list", "resources/list"), 1):
            client.request(rid, method, {})
            assert client.reply(rid)["result"] == answers[method]
        assert not sdk_loaded(client.proc.pid)  # all that, with no SDK in the process

        client.request(4, "tools/call", {"name": "list_agents", "arguments": {}})
        assert "result" in client.reply(4) and not client.reply(4)["result"]["isError"]
        assert sdk_loaded(client.proc.pid)
        client.request(5, "tools/list", {})  # the SDK's own answer now: the same
        assert client.reply(5)["result"] == answers["tools/list"]
        client.request(6, "ping", {})
        client.reply(6)
        # one answer each: the initialize the SDK was shown again was not answered twice
        assert [r.get("id") for r in client.every] == [0, 1, 2, 3, 4, 5, 6]
    finally:
        client.close()


@pytest.mark.tmux
@pytest.mark.parametrize(
    ("first", "version"),
    [
        pytest.param({"protocolVersion": "2099-01-01"}, "2025-11-25", id="a-version-unknown"),
        pytest.param({"_meta": {}}, "2025-06-18", id="a-field-the-front-does-not-know"),
        # an initialize is the handshake's whatever it carries: the SDK answers it so
        pytest.param({"_meta": CLAUDE}, "2025-06-18", id="an-initialize-with-2026s-envelope"),
    ],
)
def test_what_the_front_does_not_know_goes_to_the_sdk_as_it_came(
    world: Env, first: dict[str, Any], version: str
) -> None:
    client = RawClient(world)
    try:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
            **first,
        }
        client.request(0, "initialize", params)
        assert client.reply(0)["result"]["protocolVersion"] == version  # the SDK negotiated
        assert sdk_loaded(client.proc.pid)
    finally:
        client.close()


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', id="before-initialize"
        ),
        pytest.param(b'{"jsonrpc": "2.0", "id": true, "method": "initialize"}', id="a-bool-id"),
        pytest.param(b'[{"jsonrpc": "2.0", "id": 1, "method": "initialize"}]', id="a-batch"),
        pytest.param(b"\xff\xfe", id="not-utf8"),
        pytest.param(b"\n", id="blank"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "x": 1}', id="extra"),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "initialize"}', id="surrogate"
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}}",
            id="nested-deeper-than-python-reads",
        ),
        pytest.param(
            b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": '
            + b"[" * 70
            + b"]" * 70
            + b"}}",
            id="nested-deeper-than-the-sdk-reads",
        ),
        pytest.param(
            b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 1, "method": "initialize"}', id="byte-order-mark"
        ),
        pytest.param(b'{"jsonrpc": "2.0",\r"id": 1, "method": "initialize"}', id="a-cr-inside"),
    ],
)
def test_lines_the_front_does_not_read_go_to_the_sdk(line: bytes) -> None:
    assert front.Front(recorded()).take(line) is None


def handshake_start(version: str = "2025-03-26", **params: Any) -> list[dict[str, Any]]:
    init = {
        "protocolVersion": version,
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "c", "version": "1"},
        **params,
    }
    return [
        {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def test_after_initialize_only_the_recorded_lists_and_the_notification_are_answered() -> None:
    answers = recorded()["answers"]
    taker = front.Front(recorded())
    init, initialized = (json.dumps(m).encode() for m in handshake_start())
    said = taker.take(init)
    assert said is not None
    assert [json.loads(line) for line in said] == [
        {"jsonrpc": "2.0", "id": 7, "result": answers["2025-03-26"]["initialize"]}
    ]
    assert taker.take(initialized) == []
    codex = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":0}}}'
    said = taker.take(codex)
    assert said is not None
    assert [json.loads(line) for line in said] == [
        {"jsonrpc": "2.0", "id": 1, "result": answers["2025-03-26"]["tools/list"]}
    ]
    for line in (
        b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"cursor": "x"}}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "x"}}',
        b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}}',
        b'{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"progressToken":true}}}',
        initialized,  # a second one
    ):
        assert taker.take(line) is None
    # what the SDK is shown first: the initialize under the front's own id, the notification
    shown = [json.loads(line) for line in taker.shown().splitlines()]
    first = json.loads(init)
    assert shown == [{**first, "id": front.REPLAYED_ID}, json.loads(initialized)]


def test_a_recording_made_with_something_else_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = front.site_of_sdk()
    assert site is not None
    assert front.load_recording() == recorded()  # this checkout's recording is this install's
    for key, other in (("mcp", "9.0.0"), ("tools", "0" * 64)):
        changed = recorded()
        changed["made_with"][key] = other
        (tmp_path / "handshake.json").write_text(json.dumps(changed))
        monkeypatch.setattr(front, "RECORDING", str(tmp_path / "handshake.json"))
        assert front.load_recording() is None
    for version in ("9.0.0", "8.0.0"):  # a stale copy beside the one imported
        (tmp_path / f"mcp-{version}.dist-info").mkdir()
    assert front.installed_versions(str(tmp_path)) is None


SDK_CASES = {
    "codex": [
        *handshake_start(
            "2025-06-18",
            capabilities={"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}}},
        ),
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"progressToken": 0}},
        },
    ],
    "title-not-text": handshake_start(clientInfo={"name": "c", "version": "1", "title": 5}),
    "icons": handshake_start(clientInfo={"name": "c", "version": "1", "icons": 5}),
    "roots-flag-not-a-flag": handshake_start(capabilities={"roots": {"listChanged": "maybe"}}),
    "an-unknown-capability": handshake_start(capabilities={"later": {}}),
    "an-unknown-version": handshake_start("2099-01-01"),
}


def modern_case(**envelope: Any) -> list[dict[str, Any]]:
    meta = {**CLAUDE, **envelope}
    listen = {"_meta": meta, "notifications": LISTENED}
    return [
        {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": "listen:0", "method": front.LISTEN, "params": listen},
        *(
            {"jsonrpc": "2.0", "id": n, "method": m, "params": {"_meta": meta}}
            for n, m in enumerate(("prompts/list", "resources/list", "tools/list"))
        ),
    ]


@pytest.mark.parametrize("case", [*SDK_CASES, "claude", "claude-icons", "claude-roots-list"])
def test_what_the_front_answers_is_what_the_sdk_answers(case: str) -> None:
    """The front against the live SDK, in process: a line the front answers gets the SDK's
    answer; the first it hands over ends the comparison (the SDK answers it and the rest)."""
    import anyio

    from roost.mcp import record

    if case == "claude":
        lines = modern_case()
    elif case == "claude-icons":
        lines = modern_case(**{front.CLIENT_KEY: {"name": "c", "version": "1", "icons": 5}})
    elif case == "claude-roots-list":
        lines = modern_case(**{front.CAPABILITIES_KEY: {"roots": [1]}})
    else:
        lines = SDK_CASES[case]
    taker = front.Front(recorded())
    said: list[dict[str, Any]] = []
    for line in lines:
        answers = taker.take(json.dumps(line).encode())
        if answers is None:
            break
        said += [json.loads(a) for a in answers]
    sdk = anyio.run(record.exchange, False, lines)
    assert said == sdk[: len(said)]
    if case in ("codex", "claude"):
        assert len(said) == len(sdk)  # the whole start answered by the front


def modern(client: RawClient, rid: Any, method: str, **params: Any) -> None:
    client.request(rid, method, {"_meta": CLAUDE, **params})


@pytest.mark.tmux
def test_claude_codes_start_in_the_2026_era_is_answered_and_its_listen_request_handed_on(
    world: Env,
) -> None:
    recorded_now = recorded()
    answers = recorded_now["modern"]["2026-07-28"]
    client = RawClient(world)
    try:
        modern(client, "server-discover-probe-1", "server/discover")
        modern(client, "listen:0", "subscriptions/listen", notifications=LISTENED)
        for rid, method in enumerate(("server/discover", "prompts/list", "tools/list")):
            modern(client, rid, method)
            assert client.reply(rid)["result"] == answers[method]
        assert client.reply("server-discover-probe-1")["result"] == answers["server/discover"]
        ack = client.every[1]
        assert ack["method"] == front.ACKNOWLEDGED
        assert ack["params"]["_meta"] == {front.SUBSCRIPTION_KEY: "listen:0"}
        assert not sdk_loaded(client.proc.pid)

        modern(client, 9, "tools/call", name="list_agents", arguments={})
        assert not client.reply(9)["result"]["isError"]
        assert sdk_loaded(client.proc.pid)
        modern(client, 10, "tools/list")  # the SDK's own answer now: the same
        assert client.reply(10)["result"] == answers["tools/list"]
        # the listen request went to the SDK, which holds it open: nothing answered twice
        assert [r.get("id", r.get("method")) for r in client.every] == [
            "server-discover-probe-1",
            front.ACKNOWLEDGED,
            0,
            1,
            2,
            9,
            10,
        ]
    finally:
        client.close()


@pytest.mark.tmux
def test_the_sdk_keeps_the_2026_era_when_a_line_without_its_envelope_wakes_it(
    world: Env,
) -> None:
    """A bare ping wakes the SDK after the front answered discover and tools/list: the SDK was
    shown a discover in the client's words first, so it serves the 2026-07-28 era as it would
    have from the start (the ping refused, the enveloped requests answered)."""
    answers = recorded()["modern"]["2026-07-28"]
    client = RawClient(world)
    try:
        modern(client, 0, "server/discover")
        modern(client, 1, "tools/list")
        assert client.reply(1)["result"] == answers["tools/list"]
        client.request(2, "ping", {})
        assert "error" in client.reply(2)  # a request with no envelope, in this era
        modern(client, 3, "tools/list")
        assert client.reply(3)["result"] == answers["tools/list"]
        assert [r.get("id") for r in client.every] == [0, 1, 2, 3]  # the discover shown: unanswered
        client.proc.stdin.close()  # type: ignore[union-attr]
        assert client.proc.wait(timeout=30) == 0  # its end read: it ends
    finally:
        client.close()


@pytest.mark.tmux
def test_a_cancel_of_a_listen_goes_to_the_sdk_which_serves_the_next_listen(world: Env) -> None:
    client = RawClient(world)
    try:
        modern(client, "listen:0", "subscriptions/listen", notifications=LISTENED)
        cancel = {"requestId": "listen:0"}
        client.send(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        )
        modern(client, "listen:1", "subscriptions/listen", notifications=LISTENED)
        modern(client, 5, "tools/call", name="list_agents", arguments={})
        assert not client.reply(5)["result"]["isError"]

        def acknowledged(listen: str) -> list[dict[str, Any]]:
            return [
                r
                for r in client.every
                if r.get("method") == front.ACKNOWLEDGED
                and r["params"]["_meta"][front.SUBSCRIPTION_KEY] == listen
            ]

        world.wait_for(lambda: acknowledged("listen:1"), 30, "the SDK's acknowledgement")
        assert len(acknowledged("listen:1")) == 1 and acknowledged("listen:0")
    finally:
        client.close()


def test_the_sdk_forgets_a_listen_the_client_cancelled_or_asks_again() -> None:
    import mcp_types as types

    from roost.mcp.server import Shown

    def parsed(message: dict[str, Any]) -> Any:
        return types.jsonrpc_message_adapter.validate_python(message, by_name=False)

    def ack(listen: str) -> Any:
        meta = {"_meta": {front.SUBSCRIPTION_KEY: listen}, "notifications": LISTENED}
        return parsed({"jsonrpc": "2.0", "method": front.ACKNOWLEDGED, "params": meta})

    shown = Shown(None, ["a", "b", "c"])
    listen = {"_meta": CLAUDE, "notifications": LISTENED}
    for name in ("a", "b", "c"):  # the copies shown to the SDK first: no asking again
        shown.forget(
            parsed({"jsonrpc": "2.0", "id": name, "method": front.LISTEN, "params": listen})
        )
    assert shown.answered(ack("a")) and not shown.answered(ack("a"))  # dropped once
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "b"}}
    shown.forget(parsed(cancel))
    shown.forget(parsed({"jsonrpc": "2.0", "id": "c", "method": front.LISTEN, "params": listen}))
    assert not shown.answered(ack("b")) and not shown.answered(ack("c"))  # the client's now
