#!/bin/sh
# roost's Claude Code hook: appends one line per event to the agent's hook log, for roost to read.
# No daemon and no Python in the hook itself: a shell, cat and date, a few milliseconds. Prints
# nothing (a hook's output may be shown to the model), and always exits 0 (a failing hook must
# not block Claude).
# usage: sh hook.sh LOG_FILE EVENT_NAME [PYTHON]    (the event's JSON payload on stdin)
# Each line: <epoch seconds> TAB <event> TAB <launch token> TAB <payload>. The token is the one
# roost gave this launch in ROOST_LAUNCH_TOKEN (core/lineage.py): it proves the line comes from
# the agent's current process. (Lines of roosts before it have no token field.)
# With PYTHON (agents that have roost mcp) and the marker `in-tree` beside the log (an agent with
# an orchestration parent or children), `roost _notify` then runs in the background, in its own
# session and without the agent's identity (stopping the agent must not stop a delivery), to
# tell parents about their children (ops/notify.py).
# The log is only ever a regular file: anything else planted at its path (a symlink, which would
# be written through; a FIFO, which would hold the hook until read) is removed, its target left
# alone, and a new 0600 log begun, as roost does at each launch. GNU dd opens it with O_NOFOLLOW
# and O_NONBLOCK (closing the race with the check); where dd has no such flags (BSD), the
# checked append is the fallback.
umask 077
payload=$(cat | tr '\n\r\t' '   ')  # a JSON text has no tab but between tokens
line=$(printf '%s\t%s\t%s\t%s' "$(date +%s)" "$2" "${ROOST_LAUNCH_TOKEN-}" "$payload")
if [ -L "$1" ] || { [ -e "$1" ] && [ ! -f "$1" ]; }; then rm -f "$1"; fi
# one write for the whole line (fullblock), so lines of concurrent hooks never interleave
if ! printf '%s\n' "$line" | dd of="$1" oflag=append,nofollow,nonblock conv=notrunc bs=16M \
        iflag=fullblock status=none 2>/dev/null; then
    if [ ! -L "$1" ] && { [ -f "$1" ] || [ ! -e "$1" ]; }; then
        printf '%s\n' "$line" >> "$1" 2>/dev/null
    fi
fi
if [ -n "$3" ] && [ -e "${1%/*}/in-tree" ]; then
    detach=""
    command -v setsid >/dev/null 2>&1 && detach="setsid"
    env -u ROOST_AGENT_ID -u ROOST_AGENT_NAME -u ROOST_LAUNCH_TOKEN ROOST_IN_SUPERVISOR=1 \
        $detach "$3" -P -m roost _notify </dev/null >/dev/null 2>&1 &
fi
exit 0
