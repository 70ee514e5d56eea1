"""The harness's credential preflight (`harness.credentials`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_driver.harness.credentials import (
    ACCEPTED_TOKENS,
    Tokens,
    credential_problem,
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
