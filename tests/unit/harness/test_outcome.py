"""A run's end in words (`harness.outcome`): every kind has a title and a fix."""

from __future__ import annotations

import pytest

from copilot_driver.driver.failures import ErrorKind
from copilot_driver.harness.outcome import HarnessErrorKind, explain


@pytest.mark.parametrize("kind", [*ErrorKind, *HarnessErrorKind, None, "something-new"])
def test_every_kind_gets_a_title_and_a_fix(kind: str | None) -> None:
    explanation = explain(1, kind, "it failed")
    assert explanation.title
    # The harness's own checks name the fix in their message; every other kind has one here.
    assert explanation.fix or kind in ("cli_not_found", "no_credential", "sandbox_unavailable")
    assert explanation.title[0].isupper()
    assert "\n" not in explanation.title


def test_a_missing_github_token_is_named_whatever_the_kind() -> None:
    message = "the session failed: Execution failed: InvalidArg, No GitHub OAuth token or ..."
    explanation = explain(1, "session_error", message)
    assert explanation.title == "No credential for the Copilot CLI"
    assert "COPILOT_GITHUB_TOKEN" in (explanation.fix or "")


def test_the_fixes_name_what_to_change() -> None:
    assert "GH_AW_MAX_TOOL_DENIALS" in (explain(3, "tool_denials_exceeded", None).fix or "")
    assert "--help" in (explain(2, None, None).fix or "")
