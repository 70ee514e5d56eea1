"""The environment contract's table: the one source of names, secrets, help and docs."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from copilot_driver import env, env_commands, secret_variables
from copilot_driver.cli import USAGE
from copilot_driver.driver.config import ConfigError, load_config
from copilot_driver.env import DRIVER_VARIABLES
from copilot_driver.env_docs import markdown_table
from copilot_driver.secret_variables import secret_looking_values, secrets_in
from copilot_driver.variable import Variable

CONFIGURATION_DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_documented_table_is_the_contract() -> None:
    """docs/configuration.md's table of variables is generated from the contract; a drift
    fails."""
    text = CONFIGURATION_DOC.read_text(encoding="utf-8")
    start = text.index("<!-- env-table:start -->\n") + len("<!-- env-table:start -->\n")
    end = text.index("<!-- env-table:end -->")
    assert text[start:end] == markdown_table(), (
        "docs/configuration.md's table of variables differs from copilot_driver.env: paste "
        "markdown_table()'s output between the env-table markers"
    )


def test_help_lists_every_variable_the_driver_reads() -> None:
    for variable in DRIVER_VARIABLES:
        assert re.search(rf"^  {variable.name} +{re.escape(variable.summary)}$", USAGE, re.M)


def test_every_required_variable_is_reported_missing_with_its_fix() -> None:
    required = [variable for variable in DRIVER_VARIABLES if variable.required]
    assert [variable.name for variable in required] == [
        "GH_AW_PROMPT",
        "COPILOT_SDK_URI",
        "COPILOT_CONNECTION_TOKEN",
        "COPILOT_MODEL",
    ]
    try:
        load_config({}, cwd=Path.cwd())
    except ConfigError as error:
        problems = error.problems
    else:
        raise AssertionError("an empty environment was accepted")
    for variable in required:
        assert f"{variable.name} is not set: {variable.when_missing}" in problems


def test_the_secrets_are_the_token_and_the_provider_key() -> None:
    assert env.DRIVER_SECRETS == ("COPILOT_CONNECTION_TOKEN", "COPILOT_PROVIDER_API_KEY")
    assert secret_variables.secrets_in(
        {"COPILOT_CONNECTION_TOKEN": " t ", "GITHUB_TOKEN": "g"}
    ) == (" t ", "")


def test_the_platform_tokens_are_never_driver_variables() -> None:
    names = {variable.name for variable in DRIVER_VARIABLES}
    assert not names & set(env_commands.GITHUB_CREDENTIALS)
    assert env_commands.PLATFORM_TOKENS == ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
    assert set(env_commands.PLATFORM_TOKENS) <= set(env_commands.GITHUB_CREDENTIALS)
    assert set(env_commands.PLATFORM_TOKENS) <= set(secret_variables.ADAPTER_SECRETS)


def test_names_are_unique_and_documented() -> None:
    names = [variable.name for variable in DRIVER_VARIABLES]
    assert len(names) == len(set(names))
    for variable in DRIVER_VARIABLES:
        assert variable.summary
        assert variable.rule
        assert variable.required == bool(variable.when_missing)


def test_value_of_strips_and_treats_blank_as_unset() -> None:
    assert env.value_of({"COPILOT_MODEL": "  m  "}, env.MODEL) == "m"
    assert env.value_of({"COPILOT_MODEL": " \t"}, env.MODEL) is None
    assert env.value_of({}, env.MODEL) is None


def test_session_state_base_dir_default_and_relative(tmp_path: Path) -> None:
    assert env.session_state_base_dir({}, tmp_path).parts[-5:] == (
        "gh-aw",
        "sandbox",
        "agent",
        "logs",
        "copilot-session-state",
    )
    relative = env.session_state_base_dir({"GH_AW_SESSION_STATE_BASE_DIR": "st"}, tmp_path)
    assert relative == tmp_path / "st"
    assert os.path.isabs(relative)


def test_secret_looking_values_are_those_of_long_enough_secret_named_variables() -> None:
    env = {
        "NPM_TOKEN": "npm-0123456789",
        "AWS_SECRET_ACCESS_KEY": "aws/secret+key",
        "DB_PASSWORD": "hunter2hunter2",
        "API_SECRET": "s3cret-value",
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-x",
        "ACTIONS_STEP_DEBUG": "true",  # a setting: too short to be a secret
        "GITHUB_TOKEN": "ghs_never-read-here",  # the driver never reads platform tokens
        "COPILOT_CONNECTION_TOKEN": "read-by-name-elsewhere",
        "PATH": "/usr/bin:/bin",
        "KEYBOARD": "not-a-secret-name",
    }
    assert set(secret_looking_values(env)) == {
        "npm-0123456789",
        "aws/secret+key",
        "hunter2hunter2",
        "s3cret-value",
        "runtime-token-x",
    }
    assert "read-by-name-elsewhere" in secrets_in(env)
    assert "ghs_never-read-here" not in secrets_in(env)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        (" true\n", True),
        ("", False),
        ("false", False),
        ("1", False),
    ],
)
def test_github_actions_is_read_one_way_everywhere(value: str, expected: bool) -> None:
    assert env.in_github_actions({"GITHUB_ACTIONS": value}) is expected
    assert env.in_github_actions({}) is False


def _quote(raw: str) -> str:
    return raw


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, "auto"), ("", "auto"), ("auto", "auto"), ("eager", "eager"), (" EAGER\n", "eager")],
)
def test_sdk_loading_reads_auto_or_eager_without_a_notice(raw: str | None, expected: str) -> None:
    notices: list[str] = []
    assert env.SDK_LOADING.soft_value(raw, notices, _quote) == expected
    assert notices == []


@pytest.mark.parametrize("raw", ["off", "lazy", "0", "false", "auto,eager", "autoo"])
def test_an_unreadable_sdk_loading_means_eager_not_the_default(raw: str) -> None:
    """The safe choice for a value that cannot be read is the eager import."""
    notices: list[str] = []
    assert env.SDK_LOADING.soft_value(raw, notices, _quote) == "eager"
    assert notices == [
        f"COPILOT_DRIVER_SDK_LOADING={raw!r} is not auto or eager; using eager",
    ]


def test_unreadable_applies_to_counts_too_and_fallback_words_the_notice() -> None:
    count = Variable("N", "n", "n", kind="count", default=5, limit=9, unreadable=1)
    notices: list[str] = []
    assert count.soft_value("", notices, _quote) == 5  # unset: the default
    assert count.soft_value("10", notices, _quote) == 1  # unreadable: `unreadable`
    assert count.soft_value("7", notices, _quote) == 7
    assert notices == ["N='10' is not a positive whole number up to 9; using 1"]
    worded = Variable("W", "w", "w", kind="choice", default="a", choices=("a", "b", "c"))
    worded = dataclasses.replace(worded, unreadable="c", fallback="the safe one")
    notices.clear()
    assert worded.soft_value("z", notices, _quote) == "c"
    assert notices == ["W='z' is not one of a, b, c; using the safe one"]


def test_without_unreadable_a_bad_value_means_the_default() -> None:
    notices: list[str] = []
    assert env.LOG_LEVEL.unreadable is None
    assert env.LOG_LEVEL.soft_value("loud", notices, _quote) == env.LOG_LEVEL.default
    assert len(notices) == 1


def test_a_text_variable_is_not_a_soft_setting() -> None:
    with pytest.raises(TypeError, match="COPILOT_MODEL is not a soft setting"):
        env.MODEL.soft_value("m", [], _quote)
