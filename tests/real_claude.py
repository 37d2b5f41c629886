"""The real Claude Code CLI for tests: a pinned install from npm, and the pieces to run it offline.

Run as a script to install (idempotently) and print the path of the ``claude`` executable:

    python tests/real_claude.py            # -> /.../claude-code/2.1.332/node_modules/.bin/claude

The install lives in ``$ROOST_TEST_CACHE/claude-code/<version>`` (default: ``tests/.cache``,
which is gitignored). Only npm is used: the package ships its native binary in a per-platform
optional dependency (``@anthropic-ai/claude-code-linux-x64`` here) and a postinstall script links
it over ``bin/claude.exe``; when scripts are disabled, the platform binary is used directly.
The package declares ``engines: node >=22`` but only its postinstall runs under Node, and it
runs fine on Node 20 (npm prints an EBADENGINE warning, nothing else).

Everything else here is what a test needs around the CLI, with no roost in it:
:func:`prepare_home` (``~/.claude.json`` that skips every first-run dialog),
:func:`claude_env`, :func:`hook_settings` (hooks that log their payloads),
:func:`transcript_path` / :func:`read_transcript`, :class:`PrivateTmux` (a private tmux server),
the screen cues seen on this version (:data:`BUSY_CUE`, :func:`is_ready`, ...), and
:class:`ClaudeWorld`, which puts them together for one test.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from cli_install import cache_root, npm_install, runs_as

PINNED_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"

# A dummy key in the real key's shape. Claude Code remembers a key the user approved by its last
# 20 characters (``customApiKeyResponses.approved`` in ~/.claude.json).
DUMMY_API_KEY = "sk-ant-api03-roost-test-" + "0" * 60 + "-stubKEYroostAA"

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "Notification", "SessionEnd")


# -- install --------------------------------------------------------------------------------------


def install_dir(version: str = PINNED_VERSION) -> Path:
    return cache_root() / "claude-code" / version


def _find_binary(root: Path, version: str) -> Path | None:
    """The executable in an install: the npm bin link when the postinstall ran, else the
    platform package's binary."""
    modules = root / "node_modules"
    candidates = [modules / ".bin" / "claude"]
    candidates += sorted(modules.glob("@anthropic-ai/claude-code-*/claude"))
    return next((c for c in candidates if runs_as(c, version, {"DISABLE_AUTOUPDATER": "1"})), None)


def install_claude(version: str = PINNED_VERSION) -> Path:
    """Install ``@anthropic-ai/claude-code@version`` (once) and return its ``claude`` executable
    (tests/cli_install.py: safe from concurrent test workers)."""
    return npm_install(
        PACKAGE, version, install_dir(version), lambda root: _find_binary(root, version)
    )


# -- config ---------------------------------------------------------------------------------------


def prepare_home(
    home: Path,
    cwds: Iterable[Path],
    api_key: str = DUMMY_API_KEY,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``home/.claude.json`` so Claude Code starts straight at its prompt: onboarding done,
    the API key approved, and each cwd's trust dialog accepted. Returns the file's path."""
    home.mkdir(parents=True, exist_ok=True)
    project = {
        "allowedTools": [],
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
        "projectOnboardingSeenCount": 1,
    }
    config: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {str(Path(cwd).resolve()): dict(project) for cwd in cwds},
        **(extra or {}),
    }
    path = home / ".claude.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def real_world(world: Any, stub_url: str, **extra: str) -> None:
    """Point a test's roost world (conftest.Env) at the pinned Claude Code talking to the
    stand-in at ``stub_url``, its work folder trusted; ``extra``: more environment."""
    prepare_home(world.user_home, [world.tmp / "work"])
    world.env = claude_env(world.env, world.user_home, stub_url)
    world.env["ROOST_CLAUDE_BIN"] = str(install_claude())
    world.env.update(extra)


def claude_env(
    base: Mapping[str, str], home: Path, base_url: str, api_key: str = DUMMY_API_KEY
) -> dict[str, str]:
    """The environment for an offline Claude Code run against the stub."""
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(("TMUX", "CLAUDE", "ANTHROPIC", "CLAUDECODE"))
    }
    env.update(
        HOME=str(home),
        ANTHROPIC_API_KEY=api_key,
        ANTHROPIC_BASE_URL=base_url,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",  # no telemetry, error reports, updates
        DISABLE_AUTOUPDATER="1",
        TERM="xterm-256color",
        LANG="C.UTF-8",
    )
    env.pop("XDG_CONFIG_HOME", None)  # Claude Code's config must follow HOME
    return env


def hook_settings(path: Path, log: Path, events: Iterable[str] = HOOK_EVENTS) -> Path:
    """Write a settings file (for ``--settings``) whose hooks append each payload, one JSON
    object per line, to ``log``."""
    script = path.parent / "log_hook.py"
    script.write_text(
        "import json, sys\n"
        "payload = json.load(sys.stdin)\n"
        "with open(sys.argv[1], 'a') as f:\n"
        "    f.write(json.dumps(payload) + '\\n')\n"
    )
    command = " ".join(shlex.quote(p) for p in (sys.executable, str(script), str(log)))
    settings = {
        "hooks": {event: [{"hooks": [{"type": "command", "command": command}]}] for event in events}
    }
    path.write_text(json.dumps(settings, indent=2))
    return path


def read_hooks(log: Path) -> list[dict[str, Any]]:
    """The payloads logged by :func:`hook_settings`' hooks, in order."""
    return read_transcript(log)  # same shape: JSON lines, the last one maybe half-written


def project_key(cwd: Path) -> str:
    """Claude Code's directory name for a project: the cwd with every non-alphanumeric as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def transcript_path(home: Path, cwd: Path, session_id: str) -> Path:
    return home / ".claude" / "projects" / project_key(cwd) / f"{session_id}.jsonl"


def read_transcript(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written right now
    return out


def transcript_texts(entries: list[dict[str, Any]], role: str) -> list[str]:
    """The plain texts of the user or assistant messages in a transcript."""
    texts = []
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") != role or not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [
                b.get("text", "")
                for b in content
                if isinstance(b, dict) and b.get("type") == "text"
            ]
    return texts


# -- tmux -----------------------------------------------------------------------------------------


class PrivateTmux:
    """A tmux server of our own: unique ``-L`` socket, ``-f /dev/null``, ``TMUX_TMPDIR`` in a short
    private directory. ``kill()`` ends the server and removes the directory."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.socket = f"rc-{uuid.uuid4().hex[:10]}"
        # Short on purpose: a unix socket path is limited to ~107 bytes.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp"))
        os.chmod(self.tmpdir, 0o700)
        self.env = {**env, "TMUX_TMPDIR": str(self.tmpdir)}
        self.env.pop("TMUX", None)
        self.env.pop("TMUX_PANE", None)
        self._started = False

    def run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def _ensure_server(self, width: int, height: int) -> None:
        """Start the server with a keeper session (so no window's exit can race the
        ``remain-on-exit`` setting, and the server outlives every agent)."""
        if self._started:
            return
        self.run(
            "new-session",
            "-d",
            "-s",
            "keeper",
            "-x",
            str(width),
            "-y",
            str(height),
            "sleep",
            "infinity",
        )
        self.run("set-option", "-g", "remain-on-exit", "on")
        self._started = True

    def new_window(
        self, argv: list[str], cwd: Path, env: Mapping[str, str], width: int = 120, height: int = 40
    ) -> str:
        """Start ``argv`` in a new window of the keeper session; returns the pane id.
        The pane stays after its program exits (``remain-on-exit``) so its last screen and
        exit status can be read."""
        self._ensure_server(width, height)
        env_args = [a for k, v in env.items() if self.env.get(k) != v for a in ("-e", f"{k}={v}")]
        return self.run(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "=keeper:",
            "-c",
            str(cwd),
            *env_args,
            *argv,
        ).strip()

    def screen(self, pane: str) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", pane)

    def pane_dead(self, pane: str) -> bool:
        return (
            self.run("display-message", "-p", "-t", pane, "#{pane_dead}", check=False).strip()
            == "1"
        )

    def dead_status(self, pane: str) -> int | None:
        """The exit status of a dead pane's program (128+N for signal N), or None.

        None also for a program that has exited: tmux 3.3a sets ``pane_dead`` when the pty
        hits EOF, but learns the status only when it reaps the child, and here it often misses
        the SIGCHLD (the child stays a zombie until some later SIGCHLD reaches the server), so
        the status can stay unknown indefinitely. Use :meth:`pane_dead` to tell "exited"."""
        out = self.run(
            "display-message",
            "-p",
            "-t",
            pane,
            "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
            check=False,
        )
        dead, status, signal = ([*out.strip().split(":"), "", "", ""])[:3]
        if dead != "1":
            return None
        if status:
            return int(status)
        if signal:
            return 128 + int(signal)
        return None

    def paste(self, pane: str, text: str, enter_after: float | None = 0.3) -> None:
        """Paste ``text`` as a bracketed paste, then (after a pause, so it is not taken as a
        newline inside the paste) press Enter."""
        name = f"b{uuid.uuid4().hex[:8]}"
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "load-buffer", "-b", name, "-"],
            input=text,
            text=True,
            env=self.env,
            check=True,
            timeout=30,
        )
        self.run("paste-buffer", "-p", "-d", "-b", name, "-t", pane)
        if enter_after is not None:
            time.sleep(enter_after)
            self.run("send-keys", "-t", pane, "Enter")

    def keys(self, pane: str, *keys: str) -> None:
        self.run("send-keys", "-t", pane, *keys)

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "kill-server"],
            capture_output=True,
            env=self.env,
            timeout=30,
            check=False,
        )
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def wait_for(
    predicate: Callable[[], Any],
    timeout: float = 20,
    what: str = "condition",
    interval: float = 0.1,
    on_timeout: Callable[[], str] | None = None,
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            detail = f"\n{on_timeout()}" if on_timeout else ""
            raise AssertionError(f"timed out after {timeout}s waiting for {what}{detail}")
        time.sleep(interval)


# -- screen cues (checked on 2.1.332 in a 120x40 pane) ---------------------------------------------

BUSY_CUE = "esc to interrupt"  # footer while a turn runs (and while a tool waits)
PERMISSION_CUE = "Do you want to proceed?"  # a tool permission dialog (waiting for the user)
DIALOG_CUE = "Esc to cancel"  # footer of every selection dialog (permission, trust)
TRUST_CUE = "Quick safety check: Is this a project you created or one you trust?"
EXIT_CUE = "Resume this session with:"  # printed on the way out, then `claude ... --resume <id>`
SPINNER_RE = re.compile(r"^[·✢*✶✻✽] \S[^\n]*…", re.MULTILINE)  # "✻ Razzle-dazzling…" while busy
RULE = "─"


def input_box(screen: str) -> str | None:
    """The text in the prompt box (the ``❯`` line between two horizontal rules), or None when
    no prompt box is drawn (a dialog is up, the program is starting or gone)."""
    lines = screen.splitlines()
    for i in range(len(lines) - 2, 0, -1):
        if (
            lines[i].startswith("❯")
            and lines[i - 1].startswith(RULE)
            and lines[i + 1].startswith(RULE)
        ):
            return lines[i][1:].strip()
    return None


def is_busy(screen: str) -> bool:
    return BUSY_CUE in screen


def is_ready(screen: str) -> bool:
    """Idle at an empty prompt: the prompt box is drawn and empty, no turn runs, no dialog."""
    return (
        input_box(screen) == ""
        and not is_busy(screen)
        and PERMISSION_CUE not in screen
        and DIALOG_CUE not in screen
    )


class ClaudeWorld:
    """One offline Claude Code world: a temp HOME that skips first-run dialogs, a project dir,
    the stub API, a hooks settings file, and a private tmux server to run ``claude`` in.

        with running_stub() as stub:
            world = ClaudeWorld(tmp_path, stub, install_claude())
            try:
                pane = world.start("--session-id", sid)
                world.wait_ready(pane)
                world.submit(pane, "hello")
                world.wait_screen(pane, "stub reply: hello")
            finally:
                world.close()
    """

    def __init__(self, base: Path, stub: Any, claude: Path, api_key: str = DUMMY_API_KEY) -> None:
        self.base = base
        self.claude = claude
        self.stub = stub
        self.home = base / "home"
        self.work = base / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        prepare_home(self.home, [self.work], api_key)
        self.hooks_log = base / "hooks.jsonl"
        self.settings = hook_settings(base / "settings.json", self.hooks_log)
        self.env = claude_env(os.environ, self.home, stub.url, api_key)
        self.tmux = PrivateTmux(self.env)
        self.screens: dict[str, str] = {}  # named screens kept for the report / failures

    def start(self, *args: str, cwd: Path | None = None, hooks: bool = True) -> str:
        argv = [str(self.claude), *args]
        if hooks:
            argv += ["--settings", str(self.settings)]
        return self.tmux.new_window(argv, cwd or self.work, self.env)

    def run_plain(
        self, *args: str, cwd: Path | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        """Run ``claude`` without a terminal (stdin /dev/null), capturing its output: the
        reliable way to read a start-up refusal, which on a tty can be wiped from the pane."""
        return subprocess.run(
            [str(self.claude), *args],
            cwd=cwd or self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def screen(self, pane: str) -> str:
        return self.tmux.screen(pane)

    def keep(self, name: str, pane: str) -> str:
        text = self.screen(pane)
        self.screens[name] = text
        return text

    def wait(
        self, pane: str, predicate: Callable[[str], Any], what: str, timeout: float = 20
    ) -> str:
        """Poll the pane until ``predicate(screen)`` holds; return that screen."""

        def check() -> str | None:
            text = self.screen(pane)
            return text if predicate(text) else None

        return str(
            wait_for(check, timeout, what, interval=0.05, on_timeout=lambda: self.screen(pane))
        )

    def wait_screen(self, pane: str, text: str, timeout: float = 20) -> str:
        return self.wait(pane, lambda s: text in s, repr(text), timeout)

    def wait_ready(self, pane: str, timeout: float = 30) -> str:
        return self.wait(pane, is_ready, "the idle prompt", timeout)

    def wait_dead(self, pane: str, timeout: float = 20) -> str:
        """Wait until the pane's program has exited (its pty closed); return the pane's last
        screen. (Not its exit status: see :meth:`PrivateTmux.dead_status`.)"""
        wait_for(
            lambda: self.tmux.pane_dead(pane),
            timeout,
            f"pane {pane} to exit",
            on_timeout=lambda: self.screen(pane),
        )
        return self.screen(pane)

    def submit(self, pane: str, text: str) -> None:
        self.tmux.paste(pane, text)

    def hooks(self, event: str | None = None) -> list[dict[str, Any]]:
        return [
            h
            for h in read_hooks(self.hooks_log)
            if event is None or h.get("hook_event_name") == event
        ]

    def wait_hooks(self, event: str, count: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
        return list(
            wait_for(
                lambda: len(self.hooks(event)) >= count and self.hooks(event),
                timeout,
                f"{count} {event} hook(s)",
                on_timeout=lambda: json.dumps(self.hooks(), indent=1),
            )
        )

    def transcript(self, session_id: str, cwd: Path | None = None) -> Path:
        return transcript_path(self.home, cwd or self.work, session_id)

    def close(self) -> None:
        self.tmux.kill()


def main() -> int:
    started = time.monotonic()
    path = install_claude()
    print(path)
    print(f"({time.monotonic() - started:.1f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
