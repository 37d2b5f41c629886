"""`roost mcp` on stdio, loaded at its first real call: an agent's CLI starts its MCP server with
every launch, asks the same few things (initialize, then the tool list), and most agents never
call a tool. The MCP SDK and pydantic cost about 1 s of CPU and 45 MB to import, for each agent.
This front answers those first requests with the SDK's own answers, recorded for this roost
and SDK (handshake.json, written by mcp/record.py, held to the live SDK by a test), and hands
the connection to the SDK (mcp/server.py) at the first request it has no recorded answer for.

What the SDK then sees is the connection as it happened: the client's initialize (under an id
of its own, its answer dropped: the client had its answer) and initialized notification, then
the request that woke it and everything after, read from the same stdin. It answers with
the same protocol version, since the recording is used only for the SDK version it was made
with and for versions the handshake negotiates as asked. Anything the front does not know for
sure (another SDK, another protocol version, a line it does not read as exactly one of those
requests, a request before initialize, any other notification) goes to the SDK as it came.

Import-light: json and os. fd 0 is taken for the wire at once and pointed at /dev/null, as the
SDK's stdio transport does, so no child process reads the client's messages.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

RECORDING = os.path.join(os.path.dirname(__file__), "handshake.json")
# The id under which the client's initialize is shown to the SDK, its answer dropped: a string,
# so no client's request id (its own choice, usually counted from 0) can be it by chance.
REPLAYED_ID = "roost-front:initialize"
# The distributions whose versions shape the answers (the protocol's, the tool schemas').
SHAPERS = ("mcp", "mcp_types", "pydantic", "pydantic_core")
CHUNK = 65536


def installed_versions(site_dir: str) -> dict[str, str]:
    """The versions of SHAPERS installed in `site_dir`, from their dist-info directories' names
    (importlib.metadata costs more than the reply it would save)."""
    found = {}
    try:
        names = os.listdir(site_dir)
    except OSError:
        return {}
    for name in names:
        if name.endswith(".dist-info"):
            dist, _, version = name[: -len(".dist-info")].partition("-")
            if dist in SHAPERS:
                found[dist] = version
    return found


def site_of_sdk() -> str | None:
    """The directory the MCP SDK is installed in, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec("mcp")
    if spec is None or not spec.origin:
        return None
    return os.path.dirname(os.path.dirname(spec.origin))


def load_recording() -> dict[str, object] | None:
    """The recorded answers when they were made with the SDK installed here; else None."""
    site = site_of_sdk()
    try:
        with open(RECORDING, encoding="utf-8") as fh:
            recording = json.load(fh)
    except (OSError, ValueError):
        return None
    if site is None or not isinstance(recording, dict):
        return None
    if recording.get("made_with") != installed_versions(site):
        return None
    return recording


PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

Message = tuple[str, "int | str | None", dict[str, object]]


class Front:
    """The front's decisions, pure: each line the client sent gives the lines to write back
    (answers; none for a notification kept for the SDK), or HAND_OVER.

    Two eras of the protocol: the handshake (`initialize` and its version, then plain
    requests: Codex, Gemini CLI) and 2026-07-28's, where each request carries its version and
    the client in `_meta` and server events come on a `subscriptions/listen` request held open,
    acknowledged first (Claude Code 2.1.332)."""

    HAND_OVER = object()

    def __init__(self, recording: Mapping[str, object]) -> None:
        self.handshake = _table(recording.get("answers"))  # version -> method -> result
        self.modern = _table(recording.get("modern"))
        self.listens = _table(recording.get("listen"))  # version -> asked, granted
        self.recorded: Mapping[str, object] | None = None  # the answers of the era spoken
        self.version: str | None = None
        self.seen: list[bytes] = []  # what the SDK is shown first, at a hand-over
        self.held: list[int | str] = []  # listen requests acknowledged here, then the SDK's

    def take(self, line: bytes) -> list[bytes] | object:
        message = _message(line)
        if message is None:
            return self.HAND_OVER
        method, rid, params = message
        modern = _envelope(params)
        if self.recorded is None:  # the first request says which era
            if modern is not None and modern in self.modern:
                self.version, self.recorded = modern, self.modern[modern]
            elif (asked := _initialize(method, rid, params)) in self.handshake:
                self.version, self.recorded = asked, self.handshake[asked]
                self.seen.append(_line({**_request(message), "id": REPLAYED_ID}))
                return [_answer(rid, self.recorded["initialize"])]
            else:
                return self.HAND_OVER
        if self.version in self.modern:
            return self._modern(line, message, modern)
        if modern is not None or method == "initialize":
            return self.HAND_OVER
        if method == "notifications/initialized" and rid is None and not params:
            self.seen.append(line.strip() + b"\n")
            return []
        if rid is None or method not in self.recorded or set(params) - {"_meta"}:
            return self.HAND_OVER
        if "_meta" in params and not _progress_only(params["_meta"]):
            return self.HAND_OVER
        return [_answer(rid, self.recorded[method])]

    def _modern(self, line: bytes, message: Message, version: str | None) -> list[bytes] | object:
        method, rid, params = message
        if version is None or version != self.version or rid is None or self.recorded is None:
            return self.HAND_OVER
        rest = {k: v for k, v in params.items() if k != "_meta"}
        if method == LISTEN:
            listen = self.listens.get(version)
            if not isinstance(listen, dict) or rest != {"notifications": listen["asked"]}:
                return self.HAND_OVER
            if rid == REPLAYED_ID or rid in self.held:
                return self.HAND_OVER
            self.held.append(rid)
            self.seen.append(line.strip() + b"\n")
            ack = {"_meta": {SUBSCRIPTION_KEY: rid}, "notifications": listen["granted"]}
            return [_line({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": ack})]
        if rest or method not in self.recorded:
            return self.HAND_OVER
        return [_answer(rid, self.recorded[method])]


def _table(found: object) -> dict[str, dict[str, object]]:
    """A recording's table (version -> entries), or an empty one when it is not one."""
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def _envelope(params: Mapping[str, object]) -> str | None:
    """The protocol version a 2026-07-28 request's `_meta` names, when the envelope is one the
    front may answer: the version, the client's info and capabilities, of their types."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or PROTOCOL_KEY not in meta:
        return None
    if set(meta) != {PROTOCOL_KEY, CLIENT_KEY, CAPABILITIES_KEY}:
        return None
    client, capabilities = meta[CLIENT_KEY], meta[CAPABILITIES_KEY]
    if not _client_info(client) or not isinstance(capabilities, dict):
        return None
    version = meta[PROTOCOL_KEY]
    return version if isinstance(version, str) else None


def _progress_only(meta: object) -> bool:
    """A handshake-era request's `_meta` that asks for progress only (Codex sends a token with
    its tools/list; a list reports none)."""
    if not isinstance(meta, dict) or set(meta) != {"progressToken"}:
        return False
    token = meta["progressToken"]
    return isinstance(token, int | str) and not isinstance(token, bool)


def _client_info(client: object) -> bool:
    return (
        isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
    )


def _message(line: bytes) -> Message | None:
    """(method, id, params) of a JSON-RPC request or notification the front may read; None for
    anything else (the SDK has its own answer to it)."""
    try:
        found = json.loads(line)
        json.dumps(found, ensure_ascii=False).encode()  # a lone surrogate escape: the SDK's
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None
    if not isinstance(found, dict) or found.get("jsonrpc") != "2.0":
        return None
    if set(found) - {"jsonrpc", "id", "method", "params"}:
        return None
    method, params = found.get("method"), found.get("params", {})
    rid = found.get("id")
    if not isinstance(method, str) or not isinstance(params, dict):
        return None
    if "id" in found and (isinstance(rid, bool) or not isinstance(rid, int | str)):
        return None
    return method, rid, params


def _initialize(method: str, rid: int | str | None, params: dict[str, object]) -> str | None:
    """The protocol version an initialize request asks for, when it is one the front may answer:
    exactly the fields the handshake has, of their types."""
    if method != "initialize" or rid is None:
        return None
    if set(params) != {"protocolVersion", "capabilities", "clientInfo"}:
        return None
    version, capabilities = params["protocolVersion"], params["capabilities"]
    if not isinstance(capabilities, dict) or not _client_info(params["clientInfo"]):
        return None
    if not all(isinstance(v, dict) for v in capabilities.values()):
        return None
    return version if isinstance(version, str) else None


def _request(message: Message) -> dict[str, object]:
    method, rid, params = message
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _answer(rid: int | str | None, result: object) -> bytes:
    return _line({"jsonrpc": "2.0", "id": rid, "result": result})


def _line(message: dict[str, object]) -> bytes:
    """One message on the wire, written as the SDK writes its own: compact, UTF-8."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def serve(environ: dict[str, str], allow_write: bool) -> None:
    """`roost mcp`: check the caller at start (a wrong identity fails loudly), then answer what
    the recording answers, and hand the connection to the SDK at the first other request."""
    from roost.ops import orchestrate
    from roost.ops.context import open_app

    app = open_app(dict(environ))
    try:
        orchestrate.caller_from(app, allow_write)
    finally:
        app.close()
    wire = _take_stdin()
    front = Front(load_recording() or {})
    pending = b""
    while True:
        newline = pending.find(b"\n")
        if newline < 0:
            chunk = os.read(wire, CHUNK)
            if not chunk:
                return  # the client closed the connection before any real call
            pending += chunk
            continue
        line, pending = pending[: newline + 1], pending[newline + 1 :]
        if not line.strip():
            continue
        said = front.take(line)
        if said is Front.HAND_OVER:
            break
        for answer in said:  # type: ignore[attr-defined]
            _write_all(1, answer)
    from roost.mcp import server

    server.serve_connection(
        environ,
        allow_write,
        b"".join(front.seen) + line + pending,
        wire,
        server.Shown(REPLAYED_ID, front.held),
    )


def _take_stdin() -> int:
    """A private descriptor for the client's messages; fd 0 then reads /dev/null."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return wire


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
