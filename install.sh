#!/bin/sh
# Install roost for this user, check the setup and show it at work: ./install.sh
# A private virtualenv under ~/.local/share/roost-venv, the `roost` command linked into
# ~/.local/bin, `roost doctor`, then (in a roost with no agent yet) a first agent in its home:
# claude when it is installed, else a shell as a `command` agent. Needs python3 (3.11+) and
# tmux 3.2+. ROOST_NO_DEMO=1 skips the first agent.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd -P)
venv=${ROOST_VENV:-"$HOME/.local/share/roost-venv"}
bin=${ROOST_BIN_DIR:-"$HOME/.local/bin"}

if ! command -v tmux >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq tmux
    else
        echo "install: tmux is missing; install it (apt-get install tmux / brew install tmux)" >&2
        exit 1
    fi
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q "$here[web]"
# xterm.js for `roost web`'s terminal (pinned; without npm the page shows the screen and send box)
if command -v npm >/dev/null 2>&1; then
    npm install --prefix "$venv/share/roost-web" --no-save --no-audit --no-fund @xterm/xterm@6.0.0 >/dev/null ||
        echo "install: xterm.js not installed; roost web shows screens without a live terminal"
fi
mkdir -p "$bin"
ln -sf "$venv/bin/roost" "$bin/roost"
echo "installed: $bin/roost"
case ":$PATH:" in *":$bin:"*) ;; *) echo "add $bin to your PATH" ;; esac
# doctor's findings say what to fix (exit 1 with none of the agent CLIs); the install is done
"$bin/roost" doctor || true

if [ -z "${ROOST_NO_DEMO:-}" ] && [ "$("$bin/roost" ls --json)" = "[]" ]; then
    if command -v claude >/dev/null 2>&1; then
        "$bin/roost" spawn first --cwd "$HOME"
    else
        # No agent CLI: roost's home for any program, shown with a shell.
        "$bin/roost" spawn first --provider command --cwd "$HOME" -- sh -c \
            'echo "This shell lives in roost: detach with C-q, it keeps running."; exec sh -i'
        echo "no agent CLI yet: install one (npm i -g @anthropic-ai/claude-code), then: roost spawn NAME"
    fi
    "$bin/roost" ls
    echo "next: roost attach first (C-q comes back) | roost (the TUI) | roost spawn NAME --prompt TEXT"
fi
