"""The roost service's room: its main (the runtime's composition root), the components it
runs, its socket for readers and its monitor of tmux. Above mcp, tui and web (it composes
their components); only the CLI's `roost service run` imports it. docs/ARCHITECTURE.md.
"""
