"""A run's end in words (`harness.outcome`): every kind has a title and a fix."""

from __future__ import annotations

import pytest

from copilot_driver.harness.credentials import ACCEPTED_TOKENS, Tokens
from copilot_driver.harness.outcome import explain
from copilot_driver.vocabulary import DriverErrorKind, HarnessErrorKind


@pytest.mark.parametrize("kind", [*DriverErrorKind, *HarnessErrorKind, None, "something-new"])
def test_every_kind_gets_a_title_and_a_fix(kind: str | None) -> None:
    explanation = explain(1, kind, "it failed")
    assert explanation.title
    # The harness's own checks name the fix in their message; every other kind has one here.
    assert explanation.fix or kind in ("cli_not_found", "no_credential", "sandbox_unavailable")
    assert explanation.title[0].isupper()
    assert "\n" not in explanation.title


MISSING_TOKEN = "the session failed: Execution failed: InvalidArg, No GitHub OAuth token or ..."


def test_a_missing_github_token_is_named_whatever_the_kind() -> None:
    explanation = explain(1, "session_error", MISSING_TOKEN)
    assert explanation.title == "No credential for the Copilot CLI"
    fix = explanation.fix or ""
    # Not knowing the environment, it says both: refused if set, set it if not.
    assert "if COPILOT_GITHUB_TOKEN or GH_TOKEN or GITHUB_TOKEN is set, the Copilot CLI " in fix
    assert "if none is set, set COPILOT_GITHUB_TOKEN" in fix
    assert ACCEPTED_TOKENS in fix


def test_a_token_that_is_set_is_never_told_to_be_set() -> None:
    tokens = Tokens(("COPILOT_GITHUB_TOKEN", "GITHUB_TOKEN"))
    explanation = explain(1, "session_error", MISSING_TOKEN, tokens=tokens)
    assert explanation.title == "The Copilot CLI could not use its GitHub token"
    fix = explanation.fix or ""
    assert fix.startswith("COPILOT_GITHUB_TOKEN is set, but the Copilot CLI could not use it: ")
    for cause in ("expired", "revoked", '"Copilot Requests"', "GitHub was unreachable"):
        assert cause in fix
    assert "set COPILOT_GITHUB_TOKEN again with a token it accepts" in fix
    assert "secret" not in fix  # not in Actions
    assert ACCEPTED_TOKENS in fix


def test_a_classic_token_is_called_classic() -> None:
    tokens = Tokens(("GH_TOKEN",), ("GH_TOKEN",), in_actions=True)
    fix = explain(1, "session_error", MISSING_TOKEN, tokens=tokens).fix or ""
    assert fix.startswith(
        "GH_TOKEN holds a classic personal access token (ghp_...), which the Copilot CLI refuses"
    )
    assert "replace the secret's value with a token it accepts" in fix


@pytest.mark.parametrize(("in_actions", "how"), [(True, "secrets."), (False, "export ")])
def test_no_token_at_all_is_told_how_to_set_one(in_actions: bool, how: str) -> None:
    explanation = explain(1, "session_error", MISSING_TOKEN, tokens=Tokens(in_actions=in_actions))
    assert explanation.title == "No credential for the Copilot CLI"
    fix = explanation.fix or ""
    assert fix.startswith("none of COPILOT_GITHUB_TOKEN or GH_TOKEN or GITHUB_TOKEN is set")
    assert how in fix
    assert ACCEPTED_TOKENS in fix


def test_the_fixes_name_what_to_change() -> None:
    assert "GH_AW_MAX_TOOL_DENIALS" in (explain(3, "tool_denials_exceeded", None).fix or "")
    assert "--help" in (explain(2, None, None).fix or "")
    assert "without saying why" in (explain(2, "config", None).fix or "")
    # The driver's message names its variable and its fix; the harness adds where the
    # others are listed, never "fix the variables named above".
    said = explain(2, "config", "COPILOT_MODEL is not set: set it to the model name").fix
    assert said == "`python -m copilot_driver --help` lists every variable the driver reads"
