"""Codex's `-c key=value` overrides are TOML (issue 18 item 15): a ROOST_HOME outside the
Basic Multilingual Plane became JSON's surrogate-pair escapes (`\\ud83d\\ude00`), which TOML,
codex's parser as Python's, rejects. Every value must parse back to what it says."""

from __future__ import annotations

import tomllib

import pytest

from roost.providers.mcpwire import server_entry, toml_value

HOMES = [
    "/home/u/.local/share/roost",
    "/tmp/r\U0001f600ost",
    '/tmp/\u00e9t\u00e9 "q" \\b',
    "/tmp/ctl\x01\x7f\tx",
    "/tmp/\U00010348\U0001f9ea",
]


@pytest.mark.parametrize("home", HOMES)
def test_every_override_value_parses_as_toml_to_what_it_says(home: str) -> None:
    entry = server_entry(home, "0f0e0d0c-0000-4000-8000-000000000001")
    for key in ("command", "args", "env"):
        parsed = tomllib.loads(f"v = {toml_value(entry[key])}")["v"]
        assert parsed == entry[key], key


def test_roost_mcp_is_told_where_this_roost_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex starts a stdio server with a short allowlist of the environment, not its own: a
    `roost mcp` without this roost's tmux socket and TMUX_TMPDIR started (and waited on) a
    service of its own on another tmux server, and its tool calls failed ("Transport closed")."""
    monkeypatch.setenv("ROOST_TMUX_SOCKET", "rt-abc")
    monkeypatch.setenv("TMUX_TMPDIR", "/tmp/x y")
    monkeypatch.setenv("ROOST_SERVICE_AUTOSTART", "0")
    monkeypatch.setenv("ROOST_UNRELATED", "no")
    env = server_entry("/h", "a1")["env"]
    assert env == {
        "ROOST_AGENT_ID": "a1",
        "ROOST_HOME": "/h",
        "ROOST_TMUX_SOCKET": "rt-abc",
        "TMUX_TMPDIR": "/tmp/x y",
        "ROOST_SERVICE_AUTOSTART": "0",
    }
    monkeypatch.delenv("TMUX_TMPDIR")
    assert "TMUX_TMPDIR" not in server_entry("/h", "a1")["env"]  # type: ignore[operator]


def test_the_runtime_env_names_what_the_service_reads() -> None:
    from roost.ops import service
    from roost.system import locate

    assert service.NO_AUTOSTART in locate.RUNTIME_ENV
