#!/bin/sh
# roost keeper: window 0 ("home") of every roost home session.
# It keeps the session alive when its agents die (tmux ends a session with its last window),
# shows each agent's name, state and last exit status, and wakes agents on Enter.
# A POSIX shell loop, not a Python interpreter per home: it sleeps in `read` and costs ~1 MB.
# tmux redraws it (respawn-pane -k) when an agent in this home dies, is killed or woken.
#
# usage: sh keeper.sh HOME ROOST_COMMAND...      e.g. sh keeper.sh team python3 -m roost
home=$1
shift
# Marks its wakes: they start an agent with the environment of its last start (this shell has
# the tmux server's, which holds no secret).
ROOST_IN_KEEPER=1
export ROOST_IN_KEEPER
# Out of the home's directory (a user's project): nothing it runs is looked up there.
cd "${ROOST_HOME:-/}" 2>/dev/null || cd /
TAB="|"  # field separator: agent names never contain it
# One row per agent window of this session: name, state, last exit status, pid.
fmt="#{?#{@roost_id},#{window_name}${TAB}#{?pane_dead,#{?#{==:#{@roost_state},stopped},stopped,exited},running}${TAB}#{?pane_dead_signal,signal #{pane_dead_signal},#{pane_dead_status}}${TAB}#{pane_pid},}"
message=""

agents() {
    tmux list-panes -s -t "$TMUX_PANE" -F "$fmt" 2>/dev/null | grep -v '^$'
}

render() {
    printf '\033[H\033[2J'
    printf 'roost home \033[1m%s\033[0m\n\n' "$home"
    rows=$(agents)
    if [ -z "$rows" ]; then
        printf '  no agents live here now.\n'
    fi
    printf '%s\n' "$rows" | while IFS="$TAB" read -r name state status pid; do
        [ -n "$name" ] || continue
        case $state in
            running) printf '  %-24s running (pid %s)\n' "$name" "$pid" ;;
            stopped) printf '  %-24s stopped (last exit %s)   wake: roost wake %s\n' "$name" "${status:--}" "$name" ;;
            *)       printf '  %-24s exited (status %s)   wake: roost wake %s\n' "$name" "${status:--}" "$name" ;;
        esac
    done
    printf '\n'
    [ -n "$message" ] && printf '%s\n\n' "$message"
    printf 'Enter wakes every agent here that is not running; type a name and Enter to wake one.\n'
    printf 'Windows: prefix+n/p (agents), prefix+d detaches.\n> '
}

wake() {
    # HUP ignored: tmux may redraw this keeper while the wake runs; the wake must still finish.
    message=$(trap '' HUP; "$@" 2>&1)
}

while :; do
    render
    if ! IFS= read -r line; then
        sleep 3600  # no terminal to read from: stay alive, keep the home
        continue
    fi
    case $line in
        "")
            names=$(agents | while IFS="$TAB" read -r name state _rest; do
                [ "$state" = running ] || printf '%s ' "$name"
            done)
            message=""
            for name in $names; do
                wake "$@" wake "$name"
            done
            [ -n "$names" ] || message="every agent here is running"
            ;;
        *[!A-Za-z0-9_-]*) message="not an agent name: $line" ;;
        *) wake "$@" wake "$line" ;;
    esac
done
