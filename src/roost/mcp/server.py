"""`roost mcp`: roost's orchestration tools for agents, as an MCP server on stdio (the official
`mcp` SDK). Thin: every tool opens roost (a store connection per call, in the SDK's worker
thread), asks ops/orchestrate.py, and turns a refusal into a tool error the model can read.
Imported only by `roost mcp` (stdio: a person's own MCP client, or an agent's when no service
serves its home) and the shared endpoint (mcp/http.py): nothing else loads the SDK.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import Field, ValidationError

from roost.core.errors import RoostError
from roost.core.scope import Caller
from roost.ops import orchestrate
from roost.ops.context import App
from roost.ops.root import open_app

T = TypeVar("T")

INSTRUCTIONS = """\
roost runs AI coding agents in durable terminals. With these tools you can create child agents,
give them work, wait for their answers and read their conversations. You may act only on
yourself and the agents you created (and theirs). A child's result also reaches you on its own:
when a child you asked something finishes, fails, exits or needs its user, roost sends you a
short message starting with "[roost]" as your next prompt."""


# Who is calling, and the app to act in, from the app and the request: `roost mcp` (stdio)
# asks its environment; the shared endpoint (mcp/http.py) asks the store who holds the
# request's launch token, and acts with that agent's start environment.
Identify = Callable[[App, Context], tuple[App, Caller]]


def build(
    environ: dict[str, str],
    allow_write: bool,
    identify: Identify | None = None,
    listen: bool = True,
) -> MCPServer:
    """The tool set. `identify` names the caller of each call (default: the environment's
    ROOST_AGENT_ID, as `roost mcp` on stdio has always done). `listen`: serve
    `subscriptions/listen` (the shared endpoint does not: mcp/http.py)."""

    def by_environment(app: App, _ctx: Context) -> tuple[App, Caller]:
        return app, orchestrate.caller_from(app, allow_write)

    who_calls = identify or by_environment

    def call(ctx: Context, action: Callable[[App, Caller], T]) -> T:
        app = open_app(dict(environ))
        try:
            acting, who = who_calls(app, ctx)
            return action(acting, who)
        except RoostError as exc:
            raise ToolError(str(exc)) from None
        finally:
            app.close()

    server: MCPServer = MCPServer(
        "roost", instructions=INSTRUCTIONS, subscriptions=None if listen else False
    )

    @server.tool()
    def create_agent(
        ctx: Context,
        provider: Annotated[
            str,
            Field(description="Which agent CLI runs the child: claude, codex, gemini or aider."),
        ],
        prompt: Annotated[
            str | None,
            Field(
                description="The child's first message: its task. "
                "Say what to do and what to report."
            ),
        ] = None,
        cwd: Annotated[
            str | None, Field(description="Its working directory (default: yours).")
        ] = None,
        name: Annotated[
            str | None,
            Field(description="A unique name (letters, digits, - and _); generated when absent."),
        ] = None,
        tab: Annotated[
            str | None,
            Field(
                description="Show it in this tab of the person's "
                "workspace; default: parked, out of the "
                "way."
            ),
        ] = None,
        host: Annotated[
            str | None,
            Field(
                description="Create it on this remote host (a name of `roost host ls`); it is "
                "then named HOST:NAME, and send_message, wait_for_agents and list_agents take "
                "that name. Default: this machine."
            ),
        ] = None,
    ) -> dict[str, object]:
        """Create a child agent that starts working on `prompt` now. You become its parent:
        you can message, wait for, read, stop and remove it, and you are told when it finishes,
        fails, exits or waits for its user. Returns its name and whether it took the prompt."""
        return call(
            ctx,
            lambda app, who: dict(
                orchestrate.create(app, who, provider, prompt, cwd, name, tab, host)
            ),
        )

    @server.tool()
    def send_message(
        ctx: Context,
        name: Annotated[str, Field(description="The child to send to.")],
        text: Annotated[str, Field(description="The message, typed as its next prompt.")],
        idempotency_key: Annotated[
            str | None,
            Field(
                description="Any unique string for this message; retrying with the same key never "
                "delivers it twice (the first receipt is returned)."
            ),
        ] = None,
    ) -> dict[str, object]:
        """Send a message to one of your children (woken first if it sleeps). Returns a
        delivery receipt: delivered true/false and how it was confirmed or why not (a child
        that stays busy for 30 s, or has a draft typed by its user, is not sent to). Does not
        wait for the answer: use wait_for_agents."""
        return call(
            ctx, lambda app, who: dict(orchestrate.send_to(app, who, name, text, idempotency_key))
        )

    @server.tool()
    def answer_question(
        ctx: Context,
        name: Annotated[str, Field(description="The child whose question to answer.")],
        choice: Annotated[
            str | None,
            Field(
                description="The choice's number, y or n, or its words; leave it out to see "
                "the question and its choices."
            ),
        ] = None,
        question_id: Annotated[
            str | None,
            Field(
                description="The id the question was shown with: the answer is refused if "
                "the child now asks something else."
            ),
        ] = None,
    ) -> dict[str, object]:
        """See or answer the question a child of yours waits on (a folder's trust, a tool's
        permission, a yes/no), as its person would: only the choices it offers, only while it
        asks the question you saw. Returns the question and its choices, or what the child
        shows after the answer (and whether the prompt roost held for it went in)."""
        return call(ctx, lambda app, who: orchestrate.answer(app, who, name, choice, question_id))

    @server.tool()
    def wait_for_agents(
        ctx: Context,
        names: Annotated[
            list[str] | None,
            Field(description="The children to wait for; default: all your direct children."),
        ] = None,
        timeout_seconds: Annotated[
            float, Field(description="Give up after this long (max 3600).", ge=0)
        ] = 300,
    ) -> dict[str, object]:
        """Wait until each child is idle (its turn is done), waiting for its user, exited,
        stopped or failed, or the timeout passes. Returns each child's status and last reply
        (at most 4000 characters), and timed_out."""
        return call(ctx, lambda app, who: orchestrate.wait(app, who, names, timeout_seconds))

    @server.tool()
    def read_conversation(
        ctx: Context,
        name: Annotated[str, Field(description="The agent to read (you or a child).")],
        messages: Annotated[
            int, Field(description="How many recent messages (1-100).", ge=1, le=100)
        ] = 10,
        max_chars: Annotated[
            int, Field(description="At most this many characters in all.", ge=200, le=20000)
        ] = 4000,
    ) -> dict[str, object]:
        """Read an agent's recent conversation from its transcript, or the tail of its screen
        when it keeps none. Never wakes a sleeping agent."""
        return call(
            ctx, lambda app, who: dict(orchestrate.read(app, who, name, messages, max_chars))
        )

    @server.tool()
    def list_agents(
        ctx: Context,
    ) -> list[dict[str, object]]:
        """List you and every agent below you (children, grandchildren...) with its parent,
        provider, state and status (idle, working, waiting, exited, failed...)."""
        return call(ctx, orchestrate.tree)

    @server.tool()
    def stop_agent(
        ctx: Context, name: Annotated[str, Field(description="The child to stop.")]
    ) -> dict[str, object]:
        """Stop a child's processes now. It keeps its record and conversation; sending it a
        message wakes it again."""
        return call(ctx, lambda app, who: orchestrate.stop(app, who, name))

    @server.tool()
    def park_agent(
        ctx: Context, name: Annotated[str, Field(description="The child to park.")]
    ) -> dict[str, object]:
        """Take a child off the person's screen: it keeps running, out of the way."""
        return call(ctx, lambda app, who: orchestrate.park(app, who, name))

    @server.tool()
    def remove_agent(
        ctx: Context,
        name: Annotated[str, Field(description="The child to remove.")],
        confirm: Annotated[
            bool,
            Field(description="Must be true: removal stops it and forgets its record for good."),
        ] = False,
    ) -> dict[str, object]:
        """Remove a child for good: stop it and forget its record and files."""
        return call(ctx, lambda app, who: orchestrate.remove(app, who, name, confirm))

    @server.tool()
    def read_diff(
        ctx: Context,
        name: Annotated[str, Field(description="The agent whose change to read (you or a child).")],
        file: Annotated[
            str | None, Field(description="Only this file (relative to its checkout).")
        ] = None,
        stat_only: Annotated[
            bool, Field(description="Only the files and their line counts, no patch.")
        ] = False,
        max_chars: Annotated[
            int, Field(description="At most this many characters of patch.", ge=200, le=50000)
        ] = 20000,
    ) -> dict[str, object]:
        """What an agent changed in its checkout against the commit its branch started from
        (committed, staged, unstaged and new files), as `roost diff` shows it."""
        return call(
            ctx,
            lambda app, who: orchestrate.read_diff(app, who, name, file, stat_only, max_chars),
        )

    @server.tool()
    def add_review_comment(
        ctx: Context,
        name: Annotated[str, Field(description="The child whose change you comment on.")],
        file: Annotated[str, Field(description="The file, relative to the child's checkout.")],
        line: Annotated[
            int, Field(description="The (first) line, in the file as it is now.", ge=1)
        ],
        text: Annotated[str, Field(description="The comment: what to change and why.")],
        end_line: Annotated[
            int | None, Field(description="The last line of a range (default: `line`).", ge=1)
        ] = None,
    ) -> dict[str, object]:
        """Keep a review comment on changed lines of a child's change; send_review sends all
        open ones as one message. A line that is not in the change is refused."""
        return call(
            ctx,
            lambda app, who: orchestrate.comment_on(app, who, name, file, line, end_line, text),
        )

    @server.tool()
    def send_review(
        ctx: Context, name: Annotated[str, Field(description="The child to send comments to.")]
    ) -> dict[str, object]:
        """Send a child its open review comments as one message (each quotes its file, lines
        and code). Returns whether it was delivered and how many comments went."""
        return call(ctx, lambda app, who: orchestrate.send_review(app, who, name))

    @server.tool()
    def merge_child(
        ctx: Context,
        name: Annotated[str, Field(description="The child whose committed work to take.")],
        mode: Annotated[
            Literal["merge", "squash", "rebase", "files"],
            Field(
                description="A merge commit, one squashed commit, its commits replayed, or "
                "only `files` as they are on its branch."
            ),
        ] = "merge",
        files: Annotated[
            list[str] | None, Field(description="With mode files: the paths to take.")
        ] = None,
    ) -> dict[str, object]:
        """Merge a child's committed work (its worktree's branch) into your own worktree's
        branch, as `roost merge` would: refused, with nothing changed, while the child is
        mid-turn, when your worktree has uncommitted changes, or when it would conflict (the
        files named). Its uncommitted changes are not taken (counted in the answer)."""
        return call(
            ctx,
            lambda app, who: orchestrate.merge_child(app, who, name, mode, files or []),
        )

    @server.tool()
    def search_conversations(
        ctx: Context,
        query: Annotated[
            str,
            Field(
                description='Words to find (all of them), a "phrase", a prefix*, a OR b, a NOT b.'
            ),
        ],
        agent: Annotated[str | None, Field(description="Only this agent's conversations.")] = None,
        role: Annotated[
            str | None, Field(description="Only messages of: user, agent or tool.")
        ] = None,
        since: Annotated[
            str | None, Field(description="Only since: 30m, 12h, 7d, 2w or an ISO date.")
        ] = None,
        limit: Annotated[
            int, Field(description="At most this many hits (1-50).", ge=1, le=50)
        ] = 10,
    ) -> dict[str, object]:
        """Search every recorded conversation of your subtree (you and the agents below you,
        also ones stopped or hibernated long ago): the best-matching messages, each with its
        agent, turn (NAME@TURN), time, role and a snippet with the match between « »."""
        return call(
            ctx,
            lambda app, who: orchestrate.search_conversations(
                app, who, query, agent, role, since, limit
            ),
        )

    refuse_unknown_arguments(server)
    return server


def refuse_unknown_arguments(server: MCPServer) -> None:
    """A tool call with an argument its tool does not have (`args`, `dangerous`) is refused,
    not run without it: CLI arguments and modes are the person's to set, never a caller's, and
    a caller must not believe it set them. The SDK ignores such arguments by default."""
    for tool in server._tool_manager.list_tools():  # no public name for a tool's model
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tool.parameters = model.model_json_schema(by_alias=True)


def serve(environ: dict[str, str], allow_write: bool) -> None:
    """`roost mcp`: check the caller at start (a wrong identity fails loudly), then serve the
    connection on stdin and stdout. The client's messages are read from a descriptor of their
    own; fd 0 then reads /dev/null, so no child process reads them."""
    app = open_app(dict(environ))
    try:
        orchestrate.caller_from(app, allow_write)
    finally:
        app.close()
    wire = _take_stdin()
    stdin = anyio.wrap_file(
        io.TextIOWrapper(io.FileIO(wire, "rb"), encoding="utf-8", errors="replace")
    )
    anyio.run(run_stdio, build(environ, allow_write), stdin)


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


# ---- every request gets an answer ----------------------------------------------------------
async def run_stdio(server: MCPServer, stdin: anyio.AsyncFile[str]) -> None:
    """The SDK's stdio server, with a screen in front: a line the SDK cannot read (JSON it
    refuses: a lone surrogate escape, nesting deeper than its limit; or no JSON-RPC message)
    reaches its loop only as an exception, which it logs and answers never, so the caller
    would wait for ever. The screen answers it with a JSON-RPC error for its id instead."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs (no public name)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # stdout: the SDK's
        screened_send, screened = create_context_streams[SessionMessage | Exception](0)

        async def screen() -> None:
            async with screened_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(SessionMessage(refusal(item)))
                    else:
                        await screened_send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen)
            await lowlevel.run(screened, write_stream, lowlevel.create_initialization_options())


def refusal(exc: Exception) -> types.JSONRPCError:
    """The error reply to a line that could not be read: a parse error (-32700) or an invalid
    request (-32600), for the line's own id when one can be found (else null, as JSON-RPC
    says)."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if not errors or errors[0].get("type") == "json_invalid":
        line = errors[0].get("input") if errors else None
        rid = request_id(line) if isinstance(line, str) else None
        return _error(
            rid,
            types.PARSE_ERROR,
            "the message is not JSON roost can read (a lone surrogate escape, or nested too deep)",
        )
    # JSON, but no message: the branches that miss a key were given the whole object
    whole: dict[str, object] = next(
        (
            e["input"]
            for e in errors
            if e.get("type") == "missing" and isinstance(e.get("input"), dict)
        ),
        {},
    )
    given = whole.get("id")
    rid = given if isinstance(given, int | str) and not isinstance(given, bool) else None
    if isinstance(rid, str) and not is_text(rid):
        rid = None
    return _error(rid, types.INVALID_REQUEST, "the message is not a JSON-RPC request")


def _error(rid: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message)
    )


def request_id(line: str) -> int | str | None:
    """The value of `"id"` among a JSON object's own keys, read without parsing the rest (it
    may be what could not be parsed); None when there is none that is a number or a string."""
    depth, i, key_next = 0, 0, False
    while i < len(line):
        ch = line[i]
        if ch == '"':
            end = _string_end(line, i)
            if depth == 1 and key_next and line[i:end] == '"id"':
                return _id_value(line[end:].lstrip())
            key_next = False
            i = end
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch in "{," and depth == 1:
            key_next = True
        i += 1
    return None


def _string_end(line: str, start: int) -> int:
    """The index just past the JSON string starting at `start` (escapes skipped)."""
    i = start + 1
    while i < len(line) and line[i] != '"':
        i += 2 if line[i] == "\\" else 1
    return i + 1


def _id_value(rest: str) -> int | str | None:
    if not rest.startswith(":"):
        return None
    value = rest[1:].lstrip()
    if value.startswith('"'):
        text = value[: _string_end(value, 0)]
        try:
            found = json.loads(text)
        except ValueError:
            return None
        return found if isinstance(found, str) and is_text(found) else None
    digits = value[: len(value) - len(value.lstrip("-0123456789"))]
    try:
        return int(digits)
    except ValueError:
        return None


def is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
