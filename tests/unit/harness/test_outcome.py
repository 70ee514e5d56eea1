"""A run's end in words (`harness.outcome`): every kind has a title and a fix."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.credentials import ACCEPTED_TOKENS, Tokens
from copilot_driver.harness.outcome import (
    EXIT_STATUS_OF_KIND,
    brief_cause,
    explain,
    refusal_title,
)
from copilot_driver.vocabulary import DriverErrorKind, HarnessErrorKind


@pytest.mark.parametrize("kind", [*DriverErrorKind, *HarnessErrorKind, None, "something-new"])
def test_every_kind_gets_a_title_and_a_fix(kind: str | None) -> None:
    explanation = explain(1, kind, "it failed")
    assert explanation.title
    # The harness's own checks name the fix in their message; every other kind has one here.
    assert explanation.fix or kind in (
        "cli_not_found",
        "no_credential",
        "sandbox_unavailable",
        "unsupported_token",
    )
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


# -- the subscription path ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "title", "said"),
    [
        ("token_refused", "GitHub refused the Copilot CLI's token", "was refused"),
        ("no_copilot_access", "The GitHub token has no Copilot access", "has no Copilot access"),
    ],
)
def test_a_token_not_accepted_names_the_variable_it_came_from(
    kind: str, title: str, said: str
) -> None:
    terminal = explain(2, kind, "x", tokens=Tokens(("GH_TOKEN", "GITHUB_TOKEN")))
    actions = explain(2, kind, "x", tokens=Tokens(("GITHUB_TOKEN",), in_actions=True))

    assert terminal.title == title
    assert f"the token in GH_TOKEN {said}. Set GH_TOKEN to another token" in (terminal.fix or "")
    assert "Replace the secret behind GITHUB_TOKEN" in (actions.fix or "")
    assert ACCEPTED_TOKENS in (terminal.fix or "")


def test_github_out_of_reach_names_what_the_sandbox_refused_or_the_network() -> None:
    refused = explain(1, "github_unreachable", "x", egress_denied=(("api.acme.ghe.com:443", 3),))
    network = explain(1, "github_unreachable", "x")

    assert "the sandbox refused egress to api.acme.ghe.com:443" in (refused.fix or "")
    assert "GH_HOST" in (refused.fix or "")
    assert "--allow-domain" in (refused.fix or "")
    assert "HTTPS_PROXY" in (network.fix or "")
    assert "NODE_EXTRA_CA_CERTS" in (network.fix or "")


@pytest.mark.parametrize("kind", ["token_refused", "no_copilot_access"])
@pytest.mark.parametrize("tokens", [None, Tokens(), Tokens(in_actions=True)])
def test_a_token_not_accepted_without_knowing_its_variable_says_which_tokens_work(
    kind: str, tokens: Tokens | None
) -> None:
    explanation = explain(2, kind, "x", tokens=tokens)

    assert explanation.fix == f"give the sidecar a token it accepts: {ACCEPTED_TOKENS}"


@pytest.mark.parametrize("kind", ["token_refused", "no_copilot_access"])
def test_the_variable_named_is_the_one_the_cli_signs_in_with(kind: str) -> None:
    tokens = Tokens(("COPILOT_GITHUB_TOKEN", "GH_TOKEN"), ("GH_TOKEN",), in_actions=True)
    fix = explain(2, kind, "x", tokens=tokens).fix or ""

    assert fix.startswith("the token in COPILOT_GITHUB_TOKEN ")
    assert "Replace the secret behind COPILOT_GITHUB_TOKEN with another token" in fix
    assert "GH_TOKEN" not in fix
    assert "export" not in fix


def test_the_sandboxs_refusals_are_named_five_at_most() -> None:
    denied = tuple((f"host{index}.example:443", 10 - index) for index in range(7))
    fix = explain(1, "github_unreachable", "x", egress_denied=denied).fix or ""

    assert "egress to host0.example:443, host1.example:443, host2.example:443, " in fix
    assert "host4.example:443:" in fix
    assert "host5.example" not in fix
    assert "COPILOT_API_URL" in fix


def test_github_out_of_reach_has_its_own_title_whatever_the_exit_status() -> None:
    for exit_code in (1, 2):
        explanation = explain(exit_code, "github_unreachable", "x")
        assert explanation.title == "The Copilot CLI could not reach GitHub"
        assert "api.github.com" in (explanation.fix or "")


@pytest.mark.parametrize(
    ("kind", "exit_code", "title", "fix_says"),
    [
        (
            "model_unavailable",
            2,
            "The model is not available to this Copilot account",
            "set COPILOT_MODEL (the Action's `model` input) to one of the models named above",
        ),
        ("rate_limited", 1, "Copilot rate-limited the run", "COPILOT_MODEL=auto"),
        ("quota_exceeded", 1, "The Copilot account's quota is used up", "the reset date"),
        ("quota_exceeded", 1, "The Copilot account's quota is used up", "settings/copilot"),
        ("copilot_api_error", 1, "The Copilot API failed", "https://www.githubstatus.com"),
        ("token_refused", 2, "GitHub refused the Copilot CLI's token", ACCEPTED_TOKENS),
        ("no_copilot_access", 2, "The GitHub token has no Copilot access", ACCEPTED_TOKENS),
    ],
)
def test_the_subscription_paths_failures_have_their_own_title_and_fix(
    kind: str, exit_code: int, title: str, fix_says: str
) -> None:
    """An account failure exiting 2 is not called a configuration error."""
    explanation = explain(exit_code, kind, "the driver's sentence")

    assert explanation.title == title
    assert fix_says in (explanation.fix or "")


def test_no_sign_in_at_all_is_a_missing_credential() -> None:
    said = (
        "the Copilot CLI sidecar has no GitHub sign-in (No GitHub OAuth token or Copilot HMAC "
        "key provided): start it with a token"
    )
    explanation = explain(2, "not_signed_in", said, tokens=Tokens())

    assert explanation.title == "No credential for the Copilot CLI"
    assert "none of COPILOT_GITHUB_TOKEN or GH_TOKEN or GITHUB_TOKEN is set" in (
        explanation.fix or ""
    )


def test_a_classic_token_is_titled_and_its_fix_left_to_the_harnesss_message() -> None:
    explanation = explain(2, "unsupported_token", "GH_TOKEN holds a classic ...")
    assert explanation.title == "The GitHub token is a classic personal access token"
    assert explanation.fix is None  # the harness's own message already says what to do


TOKEN_NAMES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


@given(
    st.sampled_from(["token_refused", "no_copilot_access"]),
    st.lists(st.sampled_from(TOKEN_NAMES), unique=True, min_size=1).map(
        lambda names: tuple(sorted(names, key=TOKEN_NAMES.index))
    ),
    st.booleans(),
    st.sampled_from([1, 2]),
)
def test_a_token_not_accepted_names_the_first_variable_present_and_no_other(
    kind: str, present: tuple[str, ...], in_actions: bool, exit_code: int
) -> None:
    fix = explain(exit_code, kind, "x", tokens=Tokens(present, in_actions=in_actions)).fix or ""
    used = present[0]

    assert fix.startswith(f"the token in {used} ")
    assert set(re.findall(r"\b(?:COPILOT_GITHUB_TOKEN|GH_TOKEN|GITHUB_TOKEN)\b", fix)) == {used}
    assert ("Replace the secret behind" in fix) is in_actions
    assert ACCEPTED_TOKENS in fix


def test_github_out_of_reach_names_the_refused_hosts_without_their_counts() -> None:
    denied = (("api.acme.ghe.com:443", 3), ("copilot-api.acme.ghe.com:443", 12))
    fix = explain(1, "github_unreachable", "x", egress_denied=denied).fix or ""

    assert "egress to api.acme.ghe.com:443, copilot-api.acme.ghe.com:443:" in fix
    assert "12" not in fix
    assert "HTTPS_PROXY" not in fix


@pytest.mark.parametrize("kind", ["model_unavailable", "quota_exceeded", "rate_limited"])
def test_an_account_failure_is_explained_by_its_kind_whatever_the_exit_status(kind: str) -> None:
    assert explain(1, kind, "said") == explain(2, kind, "said")
    assert explain(2, kind, "said").title != "The run's configuration is invalid"


# -- the cause, said once ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "cause"),
    [
        (
            "the session failed: 400 bad request sessionId=9f2 errorKind=session_error "
            "exitCode=1 hasOutput=false durationMs=1795 resultFile=/tmp/s/result.json",
            "the session failed: 400 bad request",
        ),
        (
            'stopped sessionId=9f2 errorKind=interrupted resultFile="/tmp/a b/result.json"',
            "stopped",
        ),
        # The JSON format's message, and one whose own words hold `key=value`: as they are.
        ("the session failed: 400 bad request", "the session failed: 400 bad request"),
        ("the model said a=b", "the model said a=b"),
        ("fields errorKind=x at the start only", "fields errorKind=x at the start only"),
        ("errorKind=session_error", "errorKind=session_error"),
        # Each line alone: a configuration refusal lists every problem.
        (
            "A is not set: set it\nthe send failed errorKind=x exitCode=1",
            "A is not set: set it\nthe send failed",
        ),
    ],
)
def test_the_cause_is_the_drivers_message_without_the_text_formats_fields(
    said: str, cause: str
) -> None:
    assert brief_cause(said) == cause


@given(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=60))
def test_a_message_alone_survives_the_fields_a_text_log_line_appends(message: str) -> None:
    """What the text formatter appends (`logs.TextEntryFormatter`) comes off, whatever the
    message, unless the message itself ends in fields."""
    line = f"{message} sessionId=abc errorKind=session_error exitCode=1"
    cut = brief_cause(line)
    assert line.startswith(cut)
    if not message.strip():
        assert cut == line  # nothing but the fields: they stay
    elif not re.search(r" [A-Za-z]\w*=\S+\Z", message):
        assert cut == message


def test_a_refusal_of_several_problems_counts_them_in_its_title() -> None:
    assert refusal_title("No credential for the Copilot CLI", 1) == (
        "No credential for the Copilot CLI"
    )
    assert refusal_title("No credential for the Copilot CLI", 3) == (
        "3 problems stop the run before it starts"
    )


def test_every_kind_of_the_harness_has_its_documented_exit_status() -> None:
    """driver_failed takes the driver's own status; every other kind has one here (the
    docs' table is checked against this in tests/e2e/test_harness_statuses_e2e.py)."""
    assert set(EXIT_STATUS_OF_KIND) == set(HarnessErrorKind) - {HarnessErrorKind.DRIVER_FAILED}
