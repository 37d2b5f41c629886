"""A first prompt as data: what makes one unusable before anything is recorded. Pure.

A prompt goes on the CLI's command line (as one argument, where the CLI can only read it as
text: providers/*.py `prompt_argv`) or is typed in once the CLI is up. Either way the OS or the
terminal sets limits that a check here meets first, so a bad prompt is refused with one clear
line and no record, instead of a launcher that crashes and leaves a `failed` agent behind.
"""

# Linux takes at most 128 KiB (MAX_ARG_STRLEN) in one argument; more fails the start with
# E2BIG. Kept well under it, and the same for typed prompts: a paste that big is no message.
MAX_PROMPT_BYTES = 100_000


def prompt_problem(prompt: str) -> str | None:
    """Why `prompt` cannot be an agent's first prompt, or None when it can.

    >>> prompt_problem("- fix the login bug") is None
    True
    >>> prompt_problem("a\\x00b")
    'a prompt cannot hold a NUL character'
    """
    if "\0" in prompt:
        return "a prompt cannot hold a NUL character"
    try:
        size = len(prompt.encode("utf-8"))
    except UnicodeEncodeError:
        return "a prompt must be valid text (it holds a lone surrogate)"
    if size > MAX_PROMPT_BYTES:
        return (
            f"a prompt is at most {MAX_PROMPT_BYTES} bytes (got {size}); put the text in a "
            "file and ask the agent to read it"
        )
    return None
