#!/bin/sh
# roost's Claude Code hook: appends one line per event to the agent's hook log, for roost to read.
# No daemon and no Python: a shell, cat and date, a few milliseconds. Prints nothing (a hook's
# output may be shown to the model), and always exits 0 (a failing hook must not block Claude).
# usage: sh hook.sh LOG_FILE EVENT_NAME    (the event's JSON payload on stdin)
payload=$(cat | tr '\n\r' '  ')
printf '%s\t%s\t%s\n' "$(date +%s)" "$2" "$payload" >> "$1" 2>/dev/null
exit 0
