"""The roost TUI (Textual). Imported only by `roost` with no arguments or `roost tui`."""
