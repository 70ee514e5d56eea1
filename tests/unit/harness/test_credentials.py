"""The harness's credential preflight (`harness.credentials`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.credentials import (
    ACCEPTED_TOKENS,
    Tokens,
    classic_token_problem,
    credential_problem,
    has_provider,
    stored_login,
    the_token_variable,
    tokens_of,
)


@pytest.mark.parametrize(
    "env",
    [
        {"COPILOT_GITHUB_TOKEN": "github_pat_x"},
        {"GH_TOKEN": "gho_x"},
        {"GITHUB_TOKEN": "ghs_x"},
        {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:8080/v1"},
        {"GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": '{"providers": []}'},
    ],
)
def test_a_token_or_a_provider_is_a_credential(env: dict[str, str]) -> None:
    assert credential_problem(env) is None


def test_nothing_at_all_in_actions_names_the_secret_and_the_fork_case(tmp_path: Path) -> None:
    problem = credential_problem({"HOME": str(tmp_path), "GITHUB_ACTIONS": "true"})
    assert problem is not None
    assert "COPILOT_GITHUB_TOKEN is not set" in problem
    assert "secrets.COPILOT_GITHUB_TOKEN" in problem
    assert "fork" in problem
    assert ACCEPTED_TOKENS in problem


EXPORT = (
    "`export COPILOT_GITHUB_TOKEN=$(gh auth token)` (after `gh auth login`), "
    "or `export COPILOT_GITHUB_TOKEN=<a token you created>`"
)


@pytest.mark.parametrize("sandboxed", [True, False])
def test_nothing_at_all_on_a_terminal_names_the_export(tmp_path: Path, sandboxed: bool) -> None:
    """No Actions advice outside Actions: a secret, a fork, pull_request_target mean nothing
    on a developer's terminal."""
    problem = credential_problem({"HOME": str(tmp_path)}, sandboxed=sandboxed)
    assert problem is not None
    assert "COPILOT_GITHUB_TOKEN is not set" in problem
    assert EXPORT in problem
    assert ACCEPTED_TOKENS in problem
    for actions_only in ("secrets.", "${{", "fork", "pull_request_target"):
        assert actions_only not in problem
    # A login stored by `copilot login` is hidden from the sandbox: only offered without it.
    assert ("`copilot login` once" in problem) is not sandboxed


def test_the_accepted_tokens_are_the_copilot_clis() -> None:
    """As its documentation's "Supported token types" table says (classic: not supported)."""
    assert 'fine-grained personal access token with the "Copilot Requests"' in ACCEPTED_TOKENS
    assert "`gh auth login` or `copilot login`" in ACCEPTED_TOKENS
    assert "refuses classic personal access tokens (ghp_...)" in ACCEPTED_TOKENS


def test_tokens_of_names_the_tokens_never_their_values() -> None:
    env = {
        "GH_TOKEN": " ghp_classic0123 ",
        "GITHUB_TOKEN": "ghs_installation",
        "COPILOT_GITHUB_TOKEN": "  ",
        "GITHUB_ACTIONS": "true",
    }
    tokens = tokens_of(env)
    assert tokens == Tokens(("GH_TOKEN", "GITHUB_TOKEN"), ("GH_TOKEN",), in_actions=True)
    assert tokens_of({}) == Tokens()


def test_an_empty_secret_is_called_empty(tmp_path: Path) -> None:
    problem = credential_problem({"HOME": str(tmp_path), "COPILOT_GITHUB_TOKEN": "  "})
    assert problem is not None
    assert "COPILOT_GITHUB_TOKEN is set but empty" in problem


def test_a_stored_login_counts(tmp_path: Path) -> None:
    (tmp_path / ".copilot").mkdir()
    (tmp_path / ".copilot" / "config.json").write_text('{"logged_in_users": [{"login": "a"}]}')
    assert credential_problem({"HOME": str(tmp_path)}) is None
    gh = tmp_path / "gh"
    gh.mkdir()
    (gh / "hosts.yml").write_text("github.com:\n    user: someone\n")
    assert credential_problem({"HOME": "/nonexistent", "GH_CONFIG_DIR": str(gh)}) is None


def test_a_cli_config_without_a_login_does_not(tmp_path: Path) -> None:
    (tmp_path / ".copilot").mkdir()
    (tmp_path / ".copilot" / "config.json").write_text('{"banner": "never"}')
    assert credential_problem({"HOME": str(tmp_path)}) is not None


def test_in_the_sandbox_a_stored_login_does_not_count_and_the_fix_is_named(
    tmp_path: Path,
) -> None:
    (tmp_path / ".config" / "gh").mkdir(parents=True)
    (tmp_path / ".config" / "gh" / "hosts.yml").write_text("github.com:\n    user: octocat\n")
    problem = credential_problem({"HOME": str(tmp_path)}, sandboxed=True)
    assert problem is not None
    assert "COPILOT_GITHUB_TOKEN=$(gh auth token)" in problem
    assert "--sandbox off" in problem
    assert credential_problem({"HOME": str(tmp_path), "GH_TOKEN": "t"}, sandboxed=True) is None


# -- a token the CLI refuses by its shape ----------------------------------------------------

CLASSIC = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"COPILOT_GITHUB_TOKEN": CLASSIC}, "COPILOT_GITHUB_TOKEN"),
        ({"GH_TOKEN": f" {CLASSIC} ", "GITHUB_TOKEN": "ghs_fine"}, "GH_TOKEN"),
        ({"COPILOT_GITHUB_TOKEN": "  ", "GITHUB_TOKEN": CLASSIC}, "GITHUB_TOKEN"),
    ],
)
def test_the_token_the_cli_would_use_is_refused_when_classic(
    env: dict[str, str], named: str
) -> None:
    problem = classic_token_problem(env)

    assert problem is not None
    assert problem.startswith(f"{named} holds a classic personal access token (ghp_...)")
    assert "nothing was started" in problem
    assert f"`export {named}=$(gh auth token)`" in problem
    assert CLASSIC not in problem
    assert the_token_variable(env) == named


def test_under_actions_the_secret_is_named() -> None:
    problem = classic_token_problem({"COPILOT_GITHUB_TOKEN": CLASSIC, "GITHUB_ACTIONS": "true"})
    assert problem is not None
    assert "Replace the secret behind COPILOT_GITHUB_TOKEN with another token" in problem


@pytest.mark.parametrize(
    "env",
    [
        {"COPILOT_GITHUB_TOKEN": "github_pat_fine", "GITHUB_TOKEN": CLASSIC},
        {"COPILOT_GITHUB_TOKEN": CLASSIC, "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1"},
        {"GH_TOKEN": "gho_fine"},
        {},
    ],
)
def test_no_refusal_when_the_cli_would_not_use_a_classic_token(env: dict[str, str]) -> None:
    assert classic_token_problem(env) is None


def test_a_stored_login_counts_only_without_a_token(tmp_path: Path) -> None:
    (tmp_path / ".copilot").mkdir()
    (tmp_path / ".copilot" / "config.json").write_text('{"logged_in_users": ["me"]}')
    env = {"HOME": str(tmp_path)}

    assert stored_login(env)
    assert not stored_login({**env, "GH_TOKEN": "gho_x"})
    assert not stored_login({"HOME": str(tmp_path / "nobody")})


# -- the token the CLI signs in with, and whether it needs one -------------------------------

TOKEN_NAMES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


@given(st.dictionaries(st.sampled_from(TOKEN_NAMES), st.sampled_from(["", " ", "\t", "t", " t "])))
def test_the_token_variable_is_the_first_non_blank_in_the_clis_order(
    env: dict[str, str],
) -> None:
    expected = next((name for name in TOKEN_NAMES if env.get(name, "").strip()), None)
    assert the_token_variable(env) == expected


@pytest.mark.parametrize(
    ("env", "provider"),
    [
        ({"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:8080/v1"}, True),
        ({"GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": "{}"}, True),
        ({"COPILOT_PROVIDER_BASE_URL": "  ", "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": ""}, False),
        ({"COPILOT_PROVIDER_API_KEY": "k", "COPILOT_PROVIDER_TYPE": "openai"}, False),
        ({}, False),
    ],
)
def test_a_provider_is_a_base_url_or_a_catalog(env: dict[str, str], provider: bool) -> None:
    assert has_provider(env) is provider


@given(st.text(min_size=1, max_size=40), st.sampled_from(TOKEN_NAMES), st.booleans())
def test_a_classic_tokens_value_never_reaches_the_message(
    suffix: str, name: str, in_actions: bool
) -> None:
    token = "ghp_CANARY" + suffix
    env = {name: token, **({"GITHUB_ACTIONS": "true"} if in_actions else {})}
    problem = classic_token_problem(env)

    assert problem is not None
    assert "ghp_CANARY" not in problem
    assert problem.startswith(f"{name} holds a classic personal access token")
    assert "nothing was started" in problem
    assert ("Replace the secret behind " + name in problem) is in_actions
    assert (f"`export {name}=$(gh auth token)`" in problem) is not in_actions
    assert ACCEPTED_TOKENS in problem


@pytest.mark.parametrize(
    "env",
    [
        {"GH_TOKEN": "gho_fine", "GITHUB_TOKEN": CLASSIC},
        {"COPILOT_GITHUB_TOKEN": "github_pat_fine", "GH_TOKEN": CLASSIC, "GITHUB_TOKEN": CLASSIC},
        {"GH_TOKEN": CLASSIC, "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": '{"providers": []}'},
        {"GH_ENTERPRISE_TOKEN": CLASSIC},
        {"COPILOT_GITHUB_TOKEN": "xghp_" + CLASSIC[4:]},
    ],
)
def test_a_classic_token_the_cli_would_not_use_is_no_problem(env: dict[str, str]) -> None:
    assert classic_token_problem(env) is None


def test_a_stored_login_is_found_where_copilot_home_and_gh_config_dir_say(
    tmp_path: Path,
) -> None:
    copilot_home = tmp_path / "copilot"
    copilot_home.mkdir()
    (copilot_home / "config.json").write_text('{"logged_in_users": [{"login": "me"}]}')
    gh = tmp_path / "gh"
    gh.mkdir()
    (gh / "hosts.yml").write_text("github.com:\n    oauth_token: gho_x\n")

    assert stored_login({"COPILOT_HOME": str(copilot_home)})
    assert stored_login({"GH_CONFIG_DIR": str(gh)})
    assert stored_login({"COPILOT_GITHUB_TOKEN": "  ", "GH_CONFIG_DIR": str(gh)})
    assert not stored_login({"COPILOT_GITHUB_TOKEN": "t", "COPILOT_HOME": str(copilot_home)})


def test_no_home_or_an_unreadable_login_is_no_stored_login(tmp_path: Path) -> None:
    (tmp_path / ".copilot" / "config.json").mkdir(parents=True)  # a folder, not a file
    (tmp_path / "gh").mkdir()
    (tmp_path / "gh" / "hosts.yml").write_text("github.com:\n    git_protocol: https\n")

    assert not stored_login({})
    assert not stored_login({"HOME": str(tmp_path)})
    assert not stored_login({"HOME": str(tmp_path), "GH_CONFIG_DIR": str(tmp_path / "gh")})


TOKEN_VALUES = st.sampled_from(["", " ", CLASSIC, f" {CLASSIC}", "github_pat_fine", "gho_fine"])


@given(
    st.dictionaries(st.sampled_from(TOKEN_NAMES), TOKEN_VALUES),
    st.sampled_from([{}, {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1"}]),
    st.booleans(),
)
def test_a_classic_token_is_refused_exactly_when_the_cli_would_sign_in_with_it(
    tokens: dict[str, str], provider: dict[str, str], in_actions: bool
) -> None:
    env = {**tokens, **provider, **({"GITHUB_ACTIONS": "true"} if in_actions else {})}
    facts = tokens_of(env)
    problem = classic_token_problem(env)

    expected = bool(facts.present) and facts.present[0] in facts.classic and not provider
    assert (problem is not None) is expected
    if problem is not None:
        assert problem.startswith(f"{the_token_variable(env)} holds a classic")
        assert CLASSIC not in problem
        assert ("Replace the secret behind" in problem) is in_actions


@pytest.mark.parametrize(
    "provider",
    [
        {"COPILOT_PROVIDER_BASE_URL": "   "},
        {"GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": ""},
        {"COPILOT_PROVIDER_API_KEY": "key-without-a-url"},
    ],
)
def test_a_provider_setting_that_serves_no_model_does_not_excuse_a_classic_token(
    provider: dict[str, str],
) -> None:
    assert classic_token_problem({"GH_TOKEN": CLASSIC, **provider}) is not None


def test_a_stored_login_beside_a_blank_token_counts(tmp_path: Path) -> None:
    (tmp_path / ".copilot").mkdir()
    (tmp_path / ".copilot" / "config.json").write_text('{"logged_in_users": ["me"]}')

    assert stored_login({"HOME": str(tmp_path), "GH_TOKEN": " ", "GITHUB_TOKEN": ""})
    assert the_token_variable({"GH_TOKEN": " ", "GITHUB_TOKEN": ""}) is None
