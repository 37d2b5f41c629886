"""How an agent gets `roost mcp`: an MCP config file roost writes in the agent's own folder
(ROOST_HOME/agents/<id>/mcp.json), passed on the command line of that one process. It adds the
server "roost" to the user's own servers; roost never writes the user's files. The server is the
shared endpoint (`http_entry`: loopback HTTP, the launch token as bearer token) when one runs
for this home at launch, else a `roost mcp` process of the agent's own (`server_entry`).

Whether an agent gets it is decided at each launch by ops/lifecycle.py (config.toml `[mcp]
enabled`, and the agent's record: `roost spawn --no-mcp` stores `mcp = false`); a provider wires
the file when it exists (`configured`). The `in-tree` marker beside the hook log is a copy of
what the store says (an orchestration link), for hook.sh, which reads no database.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from roost.core.lineage import TOKEN_ENV
from roost.providers import hooks
from roost.system import locate, untrusted

SERVER = "roost"  # tools reach the model as mcp__roost__<tool>
CONFIG = "mcp.json"
IN_TREE = "in-tree"  # hook.sh starts `roost _notify` only for agents in an orchestration tree


def config_path(roost_home: str, agent_id: str) -> str:
    return os.path.join(hooks.agent_dir(roost_home, agent_id), CONFIG)


def configured(roost_home: str, agent_id: str) -> str | None:
    """The agent's MCP config file when this launch gives it roost's server, else None."""
    path = config_path(roost_home, agent_id)
    return path if os.path.isfile(path) else None


def mark_in_tree(roost_home: str, agent_id: str) -> None:
    """The agent has an orchestration parent or children: its turn ends concern a parent."""
    _mark(roost_home, agent_id, IN_TREE)


LISTED = "mcp-listed"  # the launch token whose CLI has listed roost's tools on the endpoint


def mark_listed(roost_home: str, agent_id: str, token: str) -> None:
    """The agent's CLI (this launch: `token`) has roost's tools: its first prompt may go."""
    folder = hooks._private_folder(roost_home, agent_id)
    path = os.path.join(folder, LISTED)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token)


def listed(roost_home: str, agent_id: str) -> str | None:
    """The launch token of the last launch whose CLI listed roost's tools, or None."""
    path = os.path.join(hooks.agent_dir(roost_home, agent_id), LISTED)
    try:  # the agent's folder, which its process may write: a FIFO there blocks nobody
        return untrusted.read(path, 200).decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def _mark(roost_home: str, agent_id: str, marker: str) -> None:
    folder = hooks._private_folder(roost_home, agent_id)
    fd = os.open(os.path.join(folder, marker), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    os.close(fd)


def http_entry(url: str) -> dict[str, object]:
    """The shared endpoint (mcp/http.py): its URL, and the launch token as a bearer token,
    left as a reference to the agent's own environment (`${ROOST_LAUNCH_TOKEN}`, which the CLI
    expands): the file is written before the launch mints its token, and holds no secret."""
    return {"type": "http", "url": url, "headers": {"Authorization": BEARER}}


BEARER = "Bearer ${" + TOKEN_ENV + "}"


def entry(roost_home: str, agent_id: str) -> dict[str, object]:
    """The server entry this launch's file holds: the endpoint's (`url`) or `roost mcp`'s."""
    try:
        # bounded and never blocking: the agent's own process may write in its folder
        found = json.loads(untrusted.read(config_path(roost_home, agent_id)))["mcpServers"][SERVER]
        if isinstance(found, dict):
            return found
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        pass
    return server_entry(roost_home, agent_id)


def server_entry(roost_home: str, agent_id: str) -> dict[str, object]:
    """The stdio server: this interpreter's roost, told who is calling and where this roost
    runs (locate.RUNTIME_ENV: a CLI may start it with little of its own environment)."""
    env = {"ROOST_AGENT_ID": agent_id, "ROOST_HOME": roost_home}
    return {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-P", "-m", "roost", "mcp"],
        "env": {**env, **locate.runtime_env(os.environ)},
    }


def toml_value(value: object) -> str:
    """A string, a list of strings or a table of strings as TOML: the value of a `-c key=value`
    override of Codex CLI.

    >>> toml_value({"A": "x"}), toml_value(["-m", "roost"])
    ('{"A" = "x"}', '["-m", "roost"]')
    """
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{toml_string(str(k))} = {toml_value(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_string(str(value))


def toml_string(text: str) -> str:
    """A TOML basic string: control characters, `"` and `\\` escaped, everything else as it is.
    Not JSON's: JSON writes a character beyond U+FFFF as two surrogate escapes, which TOML
    rejects (it is no Unicode scalar value), so codex refused a ROOST_HOME with an emoji.

    >>> print(toml_string('say "hi"'))
    "say \\"hi\\""
    """
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def write(roost_home: str, agent_id: str, url: str | None = None) -> str:
    """Write the agent's MCP config file: the shared endpoint at `url`, else `roost mcp`."""
    server = http_entry(url) if url else server_entry(roost_home, agent_id)
    return write_private(roost_home, agent_id, CONFIG, {"mcpServers": {SERVER: server}})


def write_private(roost_home: str, agent_id: str, name: str, content: object) -> str:
    """Write `content` as JSON to the agent's folder (0600, never through a planted
    symlink); returns the file's path."""
    folder = hooks._private_folder(roost_home, agent_id)
    path = os.path.join(folder, name)
    tmp = path + ".tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(content, fh, indent=2)
    os.replace(tmp, path)
    return path


def remove(roost_home: str, agent_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(config_path(roost_home, agent_id))
