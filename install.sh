#!/bin/sh
# Install roost for this user and check the setup: ./install.sh
# A private virtualenv under ~/.local/share/roost-venv, the `roost` command linked into
# ~/.local/bin, then `roost doctor`. Needs python3 (3.11+) and tmux 3.2+.
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
"$venv/bin/pip" install -q "$here"
mkdir -p "$bin"
ln -sf "$venv/bin/roost" "$bin/roost"
echo "installed: $bin/roost"
case ":$PATH:" in *":$bin:"*) ;; *) echo "add $bin to your PATH" ;; esac
"$bin/roost" doctor
