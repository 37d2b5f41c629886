#!/bin/sh
# roost's hook for Codex CLI's `notify` program and Gemini CLI's hooks: appends one line per event
# to the agent's CLI event log (agents/<id>/cli-events.log), which the roost service stat()s, so a
# turn's end is known within a moment even when the screen shows nothing new. As hook.sh: a shell,
# no Python; prints nothing (Gemini reads a hook's output as its answer) and always exits 0.
# usage: sh cli_hook.sh LOG_FILE EVENT_NAME [PAYLOAD_JSON]
# Codex appends its JSON payload as the last argument (its stdin is the agent's terminal: never
# read it); Gemini gives it on stdin (no third argument).
# Each line: <epoch seconds> TAB <event> TAB <launch token> TAB <payload>, as hook.sh writes.
umask 077
if [ $# -ge 3 ]; then
    payload=$(printf '%s' "$3" | tr '\n\r\t' '   ')
else
    payload=$(cat | tr '\n\r\t' '   ')
fi
line=$(printf '%s\t%s\t%s\t%s' "$(date +%s)" "$2" "${ROOST_LAUNCH_TOKEN-}" "$payload")
if [ -L "$1" ] || { [ -e "$1" ] && [ ! -f "$1" ]; }; then rm -f "$1"; fi
if ! printf '%s\n' "$line" | dd of="$1" oflag=append,nofollow,nonblock conv=notrunc bs=16M \
        iflag=fullblock status=none 2>/dev/null; then
    if [ ! -L "$1" ] && { [ -f "$1" ] || [ ! -e "$1" ]; }; then
        printf '%s\n' "$line" >> "$1" 2>/dev/null
    fi
fi
# Codex runs one notify program: the user's own (from their config.toml, one word per line in
# ROOST_USER_NOTIFY) goes on after roost's with the same JSON as its last argument, each word as
# written (split on newlines only, no globbing, never through a shell), not waited for.
if [ $# -ge 3 ] && [ -n "${ROOST_USER_NOTIFY-}" ]; then
    set -f
    IFS='
'
    # shellcheck disable=SC2086 # the split on newlines is the point
    set -- $ROOST_USER_NOTIFY "$3"
    "$@" </dev/null >/dev/null 2>&1 &
fi
exit 0
