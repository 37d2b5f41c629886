"""The one `list-panes -a` format roost reads, and its parsing into plain fields. Import-light."""

SEP = "\t"
FIELDS = (
    "session_id", "session_name", "window_id", "window_name", "window_index", "pane_id",
    "pane_pid", "pane_dead", "pane_dead_status", "pane_dead_signal", "roost_id", "roost_keeper",
    "roost_home", "server_pid",
)
FORMAT = SEP.join([
    "#{session_id}", "#{session_name}", "#{window_id}", "#{window_name}", "#{window_index}",
    "#{pane_id}", "#{pane_pid}", "#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}",
    "#{@roost_id}", "#{@roost_keeper}", "#{@roost_home}", "#{pid}",
])
NO_SERVER = ("no server running", "error connecting to", "server exited unexpectedly")


def rows(text: str) -> list[dict[str, str]]:
    return [dict(zip(FIELDS, line.split(SEP))) for line in text.splitlines()
            if line.count(SEP) == len(FIELDS) - 1]


def exit_status(row: dict[str, str]) -> int | None:
    """A dead pane's exit status; a death by signal N reads 128+N, as in shells."""
    if row["pane_dead"] != "1":
        return None
    if row["pane_dead_status"]:
        return int(row["pane_dead_status"])
    return 128 + int(row["pane_dead_signal"]) if row["pane_dead_signal"] else None
