"""`roost mcp` on stdio, loaded at its first real call: an agent's CLI starts its MCP server with
every launch, asks the same few things, and most agents never call a tool. The MCP SDK and
pydantic cost about 1 s of CPU and 47 MB to import, for each agent. This front answers those
first requests with the SDK's own answers, recorded for this roost and SDK (handshake.json,
written by mcp/record.py, held to the live SDK by tests/test_mcp_front.py), and hands the
connection to the SDK (mcp/server.py) at the first request it has no recorded answer for.

What the SDK then sees is the connection as it stands: the request that opened it under an id
of the front's, its answer dropped (the client's initialize, which the SDK's state needs; in
the 2026-07-28 era, where each request says its version, a `server/discover` in the client's
words, which sets the SDK's era), the initialized notification, the listen requests the front
acknowledged and holds (their acknowledgement dropped), then the request that woke it and
everything after, read from the same stdin. Anything the front does not know for sure goes to
the SDK as it came: another SDK, pydantic or tool set than the recording's, another protocol
version, a line it does not read as exactly one of those requests with exactly the fields
the real CLIs send (a narrower reading than the SDK's, never a wider one), any other
notification, a blank or unfinished line.

Import-light: json and os. fd 0 is taken for the wire at once and pointed at /dev/null, as the
SDK's stdio transport does, so no child process reads the client's messages.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # not typing's: the typing module is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

HERE = os.path.dirname(__file__)
RECORDING = os.path.join(HERE, "handshake.json")
TOOLS_SOURCE = os.path.join(HERE, "server.py")  # the tool set: its digest is in the recording
# The id under which the request that opened the connection is shown to the SDK, its answer
# dropped (once): a client's own ids are numbers or its own strings, never this one.
REPLAYED_ID = "roost-front:opening"
# The distributions whose versions shape the answers (the protocol's, the tool schemas').
SHAPERS = ("mcp", "mcp_types", "pydantic", "pydantic_core")
CHUNK = 65536
MOST_PENDING = 1 << 20  # bytes of one line the front reads; a longer one goes to the SDK
MOST_BRACKETS = 64  # `{` and `[` in a line the front reads (the SDK refuses deep nesting)


def installed_versions(site_dir: str) -> dict[str, str] | None:
    """The versions of SHAPERS installed in `site_dir`, from their dist-info directories' names
    (importlib.metadata costs more than the reply it would save); None when one has two."""
    found: dict[str, str] = {}
    try:
        names = os.listdir(site_dir)
    except OSError:
        return None
    for name in names:
        if name.endswith(".dist-info"):
            dist, _, version = name[: -len(".dist-info")].partition("-")
            if dist in SHAPERS:
                if dist in found:
                    return None  # a stale copy beside the one imported: which is it?
                found[dist] = version
    return found


def tools_digest() -> str:
    import hashlib

    with open(TOOLS_SOURCE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def site_of_sdk() -> str | None:
    """The directory the MCP SDK is installed in, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec("mcp")
    if spec is None or not spec.origin:
        return None
    return os.path.dirname(os.path.dirname(spec.origin))


def made_with(site: str) -> dict[str, str] | None:
    """What the answers depend on here: the SHAPERS' versions and the tool set's digest."""
    versions = installed_versions(site)
    try:
        return None if versions is None else {**versions, "tools": tools_digest()}
    except OSError:  # no server.py to read (an install of bytecode alone): the SDK answers
        return None


def load_recording() -> dict[str, object] | None:
    """The recorded answers when they were made with what is installed here; else None."""
    site = site_of_sdk()
    try:
        with open(RECORDING, encoding="utf-8") as fh:
            recording = json.load(fh)
    except (OSError, ValueError):
        return None
    if site is None or not isinstance(recording, dict):
        return None
    if recording.get("made_with") != made_with(site):
        return None
    return recording


PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

# What a client may say of itself (Implementation's text fields) and the capabilities it may
# declare, as the real CLIs do: each a table of empty tables (`{"form": {}, "url": {}}`), roots
# a `listChanged` flag. Anything else goes to the SDK, which reads more shapes than these.
CLIENT_FIELDS = frozenset({"name", "version", "title", "description", "websiteUrl"})
CAPABILITIES = frozenset({"roots", "sampling", "elicitation", "experimental", "extensions"})

if TYPE_CHECKING:
    Id = int | str
    Message = tuple[str, Id | None, dict[str, object]]


class Front:
    """The front's decisions, pure: each line the client sent gives the lines to write back
    (none for a notification kept for the SDK), or None: the SDK takes the connection.

    Two eras of the protocol: the handshake (`initialize` and its version, then plain
    requests: Codex, Gemini CLI) and 2026-07-28's, where each request carries its version and
    the client in `_meta` and server events come on a `subscriptions/listen` request held
    open, acknowledged first (Claude Code 2.1.332)."""

    def __init__(self, recording: Mapping[str, object]) -> None:
        self.handshake_answers = _table(recording.get("answers"))  # version -> method -> result
        self.modern_answers = _table(recording.get("modern"))
        self.listen_answers = _table(recording.get("listen"))  # version -> asked, granted
        self.recorded: Mapping[str, object] = {}  # the answers of the era spoken
        self.version: str | None = None
        self.modern = False  # the 2026-07-28 era (else the handshake's)
        self.opening: bytes | None = None  # the SDK is shown it first, its answer dropped
        self.initialized: bytes | None = None
        self.held: dict[Id, bytes] = {}  # listen requests acknowledged here, in order

    def shown(self) -> bytes:
        """What the SDK reads first at a hand-over: the connection as it stands."""
        return b"".join([self.opening or b"", self.initialized or b"", *self.held.values()])

    def take(self, line: bytes) -> list[bytes] | None:
        message = _message(line)
        if message is None:
            return None
        try:
            return self._take(line, message)
        except (KeyError, TypeError):  # a recording damaged, its versions right: the SDK's
            return None

    def _take(self, line: bytes, message: Message) -> list[bytes] | None:
        method, rid, params = message
        enveloped = _envelope(params)  # the version a 2026-era request names
        if self.version is None:  # the first request says which era, as the SDK decides it
            if enveloped in self.modern_answers and rid is not None and method != "initialize":
                discover = {"jsonrpc": "2.0", "id": REPLAYED_ID, "method": "server/discover"}
                opening = _line({**discover, "params": {"_meta": params["_meta"]}})
                self.version, self.modern = enveloped, True
                self.recorded, self.opening = self.modern_answers[enveloped], opening
            elif (asked := _initialize(method, rid, params)) in self.handshake_answers:
                recorded = self.handshake_answers[asked]
                answer = _answer(rid, recorded["initialize"])
                init: dict[str, object] = {"jsonrpc": "2.0", "id": REPLAYED_ID, "method": method}
                init["params"] = params
                self.version, self.recorded, self.opening = asked, recorded, _line(init)
                return [answer]
            else:
                return None
        if self.modern:
            return self._modern(line, message, enveloped)
        if enveloped is not None or method == "initialize":
            return None
        if method == "notifications/initialized" and rid is None and not params:
            if self.initialized is not None:
                return None
            self.initialized = line
            return []
        if rid is None or method not in self.recorded or set(params) - {"_meta"}:
            return None
        if "_meta" in params and not _progress_only(params["_meta"]):
            return None
        return [_answer(rid, self.recorded[method])]

    def _modern(self, line: bytes, message: Message, version: str | None) -> list[bytes] | None:
        """A 2026-era request: the recorded answers, and a listen acknowledged and held (a
        cancel, which the SDK may answer its own way, is the SDK's)."""
        method, rid, params = message
        if version is None or version != self.version or rid is None:
            return None
        if rid == REPLAYED_ID or rid in self.held:
            return None
        rest = {k: v for k, v in params.items() if k != "_meta"}
        if method == LISTEN:
            listen = self.listen_answers[version]
            if rest != {"notifications": listen["asked"]}:
                return None
            ack = {"_meta": {SUBSCRIPTION_KEY: rid}, "notifications": listen["granted"]}
            said = _line({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": ack})
            self.held[rid] = line
            return [said]
        if rest or method not in self.recorded:
            return None
        return [_answer(rid, self.recorded[method])]


def _table(found: object) -> dict[str, dict[str, object]]:
    """A recording's table (version -> entries), or an empty one when it is not one."""
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def _envelope(params: Mapping[str, object]) -> str | None:
    """The protocol version a 2026-07-28 request's `_meta` names, when the envelope is one the
    front may answer: the version, the client's info and capabilities, of their shapes."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or PROTOCOL_KEY not in meta:
        return None
    if set(meta) != {PROTOCOL_KEY, CLIENT_KEY, CAPABILITIES_KEY}:
        return None
    if not _client_info(meta[CLIENT_KEY]) or not _capabilities(meta[CAPABILITIES_KEY]):
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
        and {"name", "version"} <= set(client) <= CLIENT_FIELDS
        and all(isinstance(v, str) for v in client.values())
    )


def _capabilities(found: object) -> bool:
    if not isinstance(found, dict) or not set(found) <= CAPABILITIES:
        return False
    for name, value in found.items():
        if not isinstance(value, dict):
            return False
        if name == "roots":
            if not set(value) <= {"listChanged"} or not all(
                v is True or v is False for v in value.values()
            ):
                return False
        elif any(v != {} for v in value.values()):
            return False
    return True


def _message(line: bytes) -> Message | None:
    """(method, id, params) of a JSON-RPC request or notification the front may read: strict
    UTF-8 with no byte-order mark, one line (a CR only before its end), nested no deeper than
    MOST_BRACKETS, no lone surrogate escape. None for anything else: the SDK has its own
    answer to it (it reads some of these, refuses others)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    body = text.rstrip("\n").removesuffix("\r")
    if not body.strip() or text.startswith("\ufeff") or "\r" in body:
        return None
    if body.count("{") + body.count("[") > MOST_BRACKETS:
        return None
    try:
        found = json.loads(body)
        json.dumps(found, ensure_ascii=False).encode()  # a lone surrogate escape: the SDK's
    except ValueError:  # UnicodeEncodeError is a ValueError
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


def _initialize(method: str, rid: Id | None, params: dict[str, object]) -> str | None:
    """The protocol version an initialize request asks for, when it is one the front may answer:
    exactly the fields the handshake has, of the shapes the real CLIs send."""
    if method != "initialize" or rid is None:
        return None
    if set(params) != {"protocolVersion", "capabilities", "clientInfo"}:
        return None
    if not _client_info(params["clientInfo"]) or not _capabilities(params["capabilities"]):
        return None
    version = params["protocolVersion"]
    return version if isinstance(version, str) else None


def _answer(rid: Id | None, result: object) -> bytes:
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
    pending, line = b"", b""
    searched = 0  # bytes of `pending` known to hold no newline
    while True:
        newline = pending.find(b"\n", searched)
        if newline < 0 and len(pending) < MOST_PENDING:
            searched = len(pending)
            chunk = os.read(wire, CHUNK)
            if chunk:
                pending += chunk
                continue
            if not pending and not front.held:
                return  # the client closed the connection before any real call
        if newline < 0 or newline >= MOST_PENDING:
            break  # an unfinished or too long line, or listens held at the end: the SDK's
        line, pending, searched = pending[: newline + 1], pending[newline + 1 :], 0
        said = front.take(line)
        if said is None:
            break  # `line` goes to the SDK, first after what it is shown
        for answer in said:
            _write_all(1, answer)
        line = b""  # answered here: nothing of it for the SDK
    from roost.mcp import server

    shown = server.Shown(REPLAYED_ID if front.opening else None, list(front.held))
    server.serve_connection(environ, allow_write, front.shown() + line + pending, wire, shown)


def _take_stdin() -> int:
    """A private descriptor for the client's messages; fd 0 then reads /dev/null."""
    import fcntl

    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)  # never 1 or 2, were one of them closed
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return wire


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
