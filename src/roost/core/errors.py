"""The one exception type the CLI turns into a single line on stderr."""


class RoostError(Exception):
    """A failure the user can act on; its message is printed as is, with exit code `code`."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class NeedsPerson(RoostError):
    """A start refused before it was made, which only a person can unblock: the agent needs
    approval, its provider's executable is missing, its conversation cannot be resumed. `why`
    is the same without the agent's name, for a list that names it (restore's not started)."""

    def __init__(self, message: str, code: int = 1, why: str | None = None) -> None:
        super().__init__(message, code)
        self.why = why or message


class StartFailed(RoostError):
    """An agent's CLI died at once after roost started it; the message holds its last words."""


class HeldStopped(RoostError):
    """A wake for roost's own reasons (a notice to a parent) found the agent stopped by its
    person, under its lock: it stays stopped until `roost wake`."""
