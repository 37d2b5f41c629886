"""`roost mcp`: roost's orchestration tools for agents, as an MCP server on stdio (the official
`mcp` SDK). Thin: every tool opens roost (a store connection per call, in the SDK's worker
thread), asks ops/orchestrate.py, and turns a refusal into a tool error the model can read.
Imported only by `roost mcp`: nothing else loads the SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from roost.core.errors import RoostError
from roost.core.scope import Caller
from roost.ops import orchestrate
from roost.ops.context import App, open_app

T = TypeVar("T")

INSTRUCTIONS = """\
roost runs AI coding agents in durable terminals. With these tools you can create child agents,
give them work, wait for their answers and read their conversations. You may act only on
yourself and the agents you created (and theirs). A child's result also reaches you on its own:
when a child you asked something finishes, fails, exits or needs its user, roost sends you a
short message starting with "[roost]" as your next prompt."""


def build(environ: dict[str, str], allow_write: bool) -> MCPServer:
    def call(action: Callable[[App, Caller], T]) -> T:
        app = open_app(dict(environ))
        try:
            return action(app, orchestrate.caller_from(app, allow_write))
        except RoostError as exc:
            raise ToolError(str(exc)) from None
        finally:
            app.close()

    server: MCPServer = MCPServer("roost", instructions=INSTRUCTIONS)

    @server.tool()
    def create_agent(
        provider: Annotated[str, Field(description="Which agent CLI runs the child: claude, "
                                                   "codex, gemini or aider.")],
        prompt: Annotated[str | None, Field(description="The child's first message: its task. "
                                                        "Say what to do and what to report.")]
        = None,
        cwd: Annotated[str | None, Field(description="Its working directory (default: yours).")]
        = None,
        name: Annotated[str | None, Field(description="A unique name (letters, digits, - and "
                                                      "_); generated when absent.")] = None,
        tab: Annotated[str | None, Field(description="Show it in this tab of the person's "
                                                     "workspace; default: parked, out of the "
                                                     "way.")] = None,
    ) -> dict[str, Any]:
        """Create a child agent that starts working on `prompt` now. You become its parent:
        you can message, wait for, read, stop and remove it, and you are told when it finishes,
        fails, exits or waits for its user. Returns its name and whether it took the prompt."""
        return call(lambda app, who: orchestrate.create(app, who, provider, prompt, cwd, name,
                                                        tab))

    @server.tool()
    def send_message(
        name: Annotated[str, Field(description="The child to send to.")],
        text: Annotated[str, Field(description="The message, typed as its next prompt.")],
        idempotency_key: Annotated[str | None, Field(
            description="Any unique string for this message; retrying with the same key never "
                        "delivers it twice (the first receipt is returned).")] = None,
    ) -> dict[str, Any]:
        """Send a message to one of your children (woken first if it sleeps). Returns a
        delivery receipt: delivered true/false and how it was confirmed or why not (a child
        that stays busy for 30 s, or has a draft typed by its user, is not sent to). Does not
        wait for the answer: use wait_for_agents."""
        return call(lambda app, who: orchestrate.send_to(app, who, name, text, idempotency_key))

    @server.tool()
    def wait_for_agents(
        names: Annotated[list[str] | None, Field(
            description="The children to wait for; default: all your direct children.")] = None,
        timeout_seconds: Annotated[float, Field(description="Give up after this long (max "
                                                            "3600).", ge=0)] = 300,
    ) -> dict[str, Any]:
        """Wait until each child is idle (its turn is done), waiting for its user, exited,
        stopped or failed, or the timeout passes. Returns each child's status and last reply
        (at most 4000 characters), and timed_out."""
        return call(lambda app, who: orchestrate.wait(app, who, names, timeout_seconds))

    @server.tool()
    def read_conversation(
        name: Annotated[str, Field(description="The agent to read (you or a child).")],
        messages: Annotated[int, Field(description="How many recent messages (1-100).",
                                       ge=1, le=100)] = 10,
        max_chars: Annotated[int, Field(description="At most this many characters in all.",
                                        ge=200, le=20000)] = 4000,
    ) -> dict[str, Any]:
        """Read an agent's recent conversation from its transcript, or the tail of its screen
        when it keeps none. Never wakes a sleeping agent."""
        return call(lambda app, who: orchestrate.read(app, who, name, messages, max_chars))

    @server.tool()
    def list_agents() -> list[dict[str, Any]]:
        """List you and every agent below you (children, grandchildren...) with its parent,
        provider, state and status (idle, working, waiting, exited, failed...)."""
        return call(orchestrate.tree)

    @server.tool()
    def stop_agent(name: Annotated[str, Field(description="The child to stop.")]
                   ) -> dict[str, Any]:
        """Stop a child's processes now. It keeps its record and conversation; sending it a
        message wakes it again."""
        return call(lambda app, who: orchestrate.stop(app, who, name))

    @server.tool()
    def park_agent(name: Annotated[str, Field(description="The child to park.")]
                   ) -> dict[str, Any]:
        """Take a child off the person's screen: it keeps running, out of the way."""
        return call(lambda app, who: orchestrate.park(app, who, name))

    @server.tool()
    def remove_agent(
        name: Annotated[str, Field(description="The child to remove.")],
        confirm: Annotated[bool, Field(description="Must be true: removal stops it and forgets "
                                                   "its record for good.")] = False,
    ) -> dict[str, Any]:
        """Remove a child for good: stop it and forget its record and files."""
        return call(lambda app, who: orchestrate.remove(app, who, name, confirm))

    return server


def serve(environ: dict[str, str], allow_write: bool) -> None:
    app = open_app(dict(environ))
    try:
        orchestrate.caller_from(app, allow_write)  # a wrong identity fails at start, loudly
    finally:
        app.close()
    build(environ, allow_write).run("stdio")
