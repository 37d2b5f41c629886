"""Review: an agent's change seen (`roost diff`), commented on (`roost comment`) and the
comments sent to it (`roost review send`). rules.py decides, operations.py does (the API the CLI,
the TUI, the web and MCP call), commands.py is the CLI; the comments' rows are store/review.py's,
git's answers system/gitdiff.py's."""
