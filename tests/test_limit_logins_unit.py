"""Issue 23, part 3, pure: an expired or refused login is an `error` in the CLI's own words (never
`limited`, never `idle`), from Claude Code's StopFailure hook and from Codex's error line."""

from __future__ import annotations

import pytest

from roost.core import status
from roost.limits import rules as limits
from roost.providers import hooks, traits

NOW = 1_000_000.0
CODEX_FOOTER = ["› Ask Codex to do anything", "  ? for shortcuts"]


@pytest.mark.parametrize(
    "words",
    [
        "Please run /login · API Error: 403 OAuth token has been revoked",
        "Not logged in · Please run /login",
        "Invalid API key · Fix external API key",
    ],
)
def test_claudes_failed_login_is_an_error_in_its_words(words: str) -> None:
    failure: dict[str, object] = {"error": "authentication_failed", "last_assistant_message": words}
    folded = hooks.fold([(NOW, "UserPromptSubmit", {}), (NOW + 1, "StopFailure", failure)])
    assert folded == ("error", NOW + 1, words)
    assert limits.from_status("error", words, None, NOW, None) is None  # not a usage limit


@pytest.mark.parametrize(
    "words",
    [
        "Your access token could not be refreshed because your refresh token was already "
        "used. Please log out and sign in again.",
        "unexpected status 401 Unauthorized: Incorrect API key provided",
    ],
)
def test_codexs_failed_login_is_an_error_in_its_words(words: str) -> None:
    screen = "\n".join(["› do it", f"■ {words}", *CODEX_FOOTER])
    found = status.reading(screen, status.patterns_for(traits.CODEX.patterns))
    assert found == ("error", words)
    assert limits.from_status("error", words, screen, NOW, None) is None
