"""What an agent is doing, from the best signal available: Claude Code's hooks, then the screen
(versioned patterns per provider, last lines only), then process facts. Pure and import-light:
`roost ls` classifies on its fast path.

Statuses: starting, working, idle, waiting (needs the user), exited, stopped, hibernated,
failed, unknown. Sources: hook, screen, process, store.
"""

from __future__ import annotations

PATTERNS_VERSION = 1
STARTING_GRACE = 20.0  # seconds after a start with no other signal: "starting"
QUIET = 3.0  # seconds without screen activity before a pattern-less screen counts as idle
# How far up each kind is looked for: dialogs are tall, busy footers and prompts sit at the
# bottom. Looking no higher keeps the conversation above (which may quote any of these words)
# from reading as a status.
WINDOW = {"waiting": 8, "working": 6, "idle": 4}

# Checked in this order on the last lines of the screen; the first kind that matches wins.
# Claude Code cues were read off v2.1.332 (its `❯` prompt box stays drawn while it works, so
# "working" is checked before "idle"); the others follow their CLIs' own wording.
PATTERNS: dict[str, dict[str, list[str]]] = {
    "claude": {
        "waiting": ["Do you want to proceed?", "Yes, allow once", "Do you want to make this edit",
                    "Do you want to create", "Waiting for permission", "Esc to cancel",
                    "Yes, I trust this folder", "Enter to confirm"],
        "working": ["esc to interrupt", "ctrl+c to interrupt"],
        "idle": ["❯", "? for shortcuts"],
    },
    "codex": {
        "waiting": ["Allow command?", "[y/N]", "Do you want to proceed?", "Esc to cancel"],
        "working": ["esc to interrupt"],
        "idle": ["❯", "›"],
    },
    "gemini": {
        "waiting": ["Allow execution", "Waiting for user confirmation", "Do you want to proceed?",
                    "Esc to cancel"],
        "working": ["esc to cancel", "esc to interrupt"],
        "idle": ["Type your message", "❯", "> "],
    },
    "aider": {
        "waiting": ["(Y)es/(N)o", "[Yes]:", "Do you want to proceed?", "Esc to cancel"],
        "working": ["esc to interrupt", "Waiting for LLM"],
        "idle": ["> "],
    },
    "command": {"waiting": [], "working": [], "idle": []},
}

# Hook event -> status (Claude Code). Notification depends on its type.
HOOK_STATUS = {
    "SessionStart": "idle",
    "UserPromptSubmit": "working",
    "PreToolUse": "working",
    "PostToolUse": "working",
    "Stop": "idle",
    "SubagentStop": "working",
    "PreCompact": "working",
    "SessionEnd": "exited",
}
NOTIFICATION_STATUS = {"permission_prompt": "waiting", "idle_prompt": "idle",
                       "elicitation_dialog": "waiting"}


def patterns_for(provider: str, overrides: dict | None = None) -> dict[str, list[str]]:
    """The provider's patterns; `[status.patterns.<provider>]` in config.toml replaces kinds."""
    merged = {k: list(v) for k, v in PATTERNS.get(provider, PATTERNS["command"]).items()}
    for kind, values in ((overrides or {}).get(provider) or {}).items():
        if kind in ("waiting", "working", "idle") and isinstance(values, list):
            merged[kind] = [str(v) for v in values]
    return merged


def from_screen(text: str, patterns: dict[str, list[str]]) -> str | None:
    """waiting / working / idle from the last non-empty lines, or None when nothing matches."""
    lines = [line for line in text.splitlines() if line.strip()]
    for kind in ("waiting", "working", "idle"):
        tail = lines[-WINDOW[kind]:]
        if any(p in line for line in tail for p in patterns[kind]):
            return kind
    return None


def from_hook(event: str, payload: dict) -> str | None:
    if event == "Notification":
        return NOTIFICATION_STATUS.get(str(payload.get("notification_type", "")))
    return HOOK_STATUS.get(event)


def classify(*, alive: bool, has_window: bool, base_state: str, roost_stopped: bool,
             hook: tuple[str, float] | None, screen: str | None, activity: float | None,
             started_at: float | None, patterns: dict[str, list[str]],
             now: float) -> tuple[str, str]:
    """(status, source). `base_state` is state.derive's answer (running/stopped/hibernated/
    failed); `hook` is the status the last hook event gave and when it fired; `screen` is the
    pane's text when it was captured; `activity` is tmux's last output time of the window."""
    if not alive:
        if base_state in ("hibernated", "failed"):
            return base_state, "store"
        if has_window and not roost_stopped:
            return "exited", "process"
        return "stopped", "process"
    # Hooks first, unless the screen moved after the last hook (a dialog hooks do not report).
    if hook is not None and (started_at is None or hook[1] >= started_at - 1):
        stale = screen is not None and activity is not None and activity > hook[1] + 1
        if not stale:
            return hook[0], "hook"
        seen = from_screen(screen or "", patterns)
        if seen == "waiting" or (seen and hook[0] == "idle" and seen == "working"):
            return seen, "screen"
        return hook[0], "hook"
    if screen is not None:
        seen = from_screen(screen, patterns)
        if seen is not None:
            return seen, "screen"
    if started_at is not None and now - started_at < STARTING_GRACE and hook is None and \
            (screen is None or not screen.strip()):
        return "starting", "process"
    if activity is not None and screen is not None:
        return ("working" if now - activity < QUIET else "idle"), "screen"
    return "unknown", "process"


def needs_screen(provider: str, has_hooks: bool, hook_at: float | None,
                 activity: float | None) -> bool:
    """Capture a live pane only when its status may need it: no hooks (other providers, or
    claude before its first event), or screen output after the last hook event."""
    if not has_hooks or hook_at is None:
        return True
    return activity is not None and activity > hook_at + 1
