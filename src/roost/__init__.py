"""roost: a durable home in tmux for AI coding agents."""

__version__ = "0.1.0"
