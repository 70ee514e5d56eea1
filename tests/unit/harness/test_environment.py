"""The harness's pure decisions: the driver's environment and the sidecar's arguments."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copilot_driver.env import GITHUB_CREDENTIALS
from copilot_driver.harness.environment import (
    SIDECAR_PASSED,
    SIDECAR_PASSED_PREFIXES,
    driver_environment,
    new_connection_token,
    send_timeout_from_minutes,
    sidecar_arguments,
    sidecar_environment,
)
from copilot_driver.permissions.config import (
    SERVER_ARGS_VARIABLE,
    ServerArgsError,
)
from copilot_driver.permissions.inputs import resolve_permissions

BASE = {
    "PATH": "/usr/bin",
    "HOME": "/home/runner",
    "GITHUB_TOKEN": "ghs_canary1",
    "GH_TOKEN": "gho_canary2",
    "COPILOT_GITHUB_TOKEN": "github_pat_canary3",
    "GH_ENTERPRISE_TOKEN": "canary4",
    "GITHUB_ENTERPRISE_TOKEN": "canary5",
    "COPILOT_MODEL": "gpt-4.1",
}


def test_t_csd_008_the_driver_environment_holds_no_github_credential() -> None:
    """T-CSD-008 (harness side, spec 3.4): platform tokens never reach the driver."""
    env = driver_environment(BASE, sdk_uri="http://127.0.0.1:4000", token="t" * 64)
    for name in GITHUB_CREDENTIALS:
        assert name not in env
    assert not any(value.startswith(("ghs_", "gho_", "github_pat_")) for value in env.values())
    assert env["PATH"] == "/usr/bin"
    assert env["COPILOT_MODEL"] == "gpt-4.1"


def test_the_driver_gets_the_sidecar_address_and_the_run_token() -> None:
    env = driver_environment(BASE, sdk_uri="http://127.0.0.1:4000", token="a" * 64)
    assert env["COPILOT_SDK_URI"] == "http://127.0.0.1:4000"
    assert env["COPILOT_CONNECTION_TOKEN"] == "a" * 64


def test_a_stale_token_in_the_harness_environment_is_replaced() -> None:
    env = driver_environment(
        {**BASE, "COPILOT_CONNECTION_TOKEN": "stale"}, sdk_uri="1", token="b" * 64
    )
    assert env["COPILOT_CONNECTION_TOKEN"] == "b" * 64


def test_the_base_environment_is_not_modified() -> None:
    base = dict(BASE)
    driver_environment(base, sdk_uri="1", token="c" * 64)
    assert base == BASE


@pytest.mark.parametrize(
    ("minutes", "expected"),
    [
        ("5", 270_000),
        ("1", 30_000),
        ("0.5", 1000),
        ("0.1", 1000),
        ("20", 1_170_000),
        (" 3 ", 150_000),
        ("0", None),
        ("-1", None),
        ("abc", None),
        ("", None),
        (None, None),
        ("nan", None),
        ("inf", None),
        ("1e9", None),
    ],
)
def test_send_timeout_is_derived_from_the_workflow_timeout(
    minutes: str | None, expected: int | None
) -> None:
    assert send_timeout_from_minutes(minutes) == expected


def test_a_derived_send_timeout_is_set_only_when_none_is_given() -> None:
    derived = driver_environment({**BASE, "GH_AW_TIMEOUT_MINUTES": "5"}, sdk_uri="1", token="t")
    assert derived["COPILOT_SDK_SEND_TIMEOUT_MS"] == "270000"
    given_value = driver_environment(
        {**BASE, "GH_AW_TIMEOUT_MINUTES": "5", "COPILOT_SDK_SEND_TIMEOUT_MS": "1234"},
        sdk_uri="1",
        token="t",
    )
    assert given_value["COPILOT_SDK_SEND_TIMEOUT_MS"] == "1234"
    neither = driver_environment(BASE, sdk_uri="1", token="t")
    assert "COPILOT_SDK_SEND_TIMEOUT_MS" not in neither


def test_tokens_are_64_hex_characters_and_fresh() -> None:
    tokens = {new_connection_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(re.fullmatch(r"[0-9a-f]{64}", token) for token in tokens)


def test_sidecar_arguments_drop_the_flags_the_harness_owns() -> None:
    raw = json.dumps(
        [
            "--headless",
            "--port",
            "3002",
            "--allow-tool",
            "shell(git:*)",
            "--no-auto-update",
            "--log-level",
            "debug",
            "--allow-tool=write",
            "--model",
            "gpt-4.1",
        ]
    )
    args, port, log_level = sidecar_arguments(raw)
    assert args == ["--allow-tool", "shell(git:*)", "--allow-tool=write", "--model", "gpt-4.1"]
    assert port == 3002
    assert log_level == "debug"


def test_sidecar_arguments_accept_the_equals_form_of_owned_flags() -> None:
    args, port, log_level = sidecar_arguments(json.dumps(["--port=4100", "--log-level=all"]))
    assert (args, port, log_level) == ([], 4100, "all")


@pytest.mark.parametrize("raw", [None, "", "  ", "[]"])
def test_unset_or_blank_sidecar_arguments_mean_none(raw: str | None) -> None:
    assert sidecar_arguments(raw) == ([], None, None)


@pytest.mark.parametrize(
    "raw",
    ["not json", "{}", '"--port"', "[", "[" * 5000, '["--allow-tool", 7, "write", null]'],
)
def test_unreadable_sidecar_arguments_are_refused(raw: str) -> None:
    """The sidecar never gets allow flags the driver would not read (one parser)."""
    with pytest.raises(ServerArgsError):
        sidecar_arguments(raw)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
FLAGS = st.sampled_from(["--allow-tool", "--deny-tool", "--allow-all-tools", "--port", "shell(ls)"])


@given(
    st.one_of(
        st.lists(st.one_of(FLAGS, JSON_VALUES), max_size=8).map(json.dumps),
        st.lists(FLAGS, max_size=6).map(lambda args: json.dumps(args)[:-1] + ",]"),
        st.lists(FLAGS, max_size=6).map(lambda args: json.dumps(args).replace('"', "'")),
        st.text(max_size=20),
    )
)
def test_the_harness_and_the_driver_read_the_arguments_the_same_way(raw: str) -> None:
    """Both accept a value, the sidecar then getting exactly the flags the driver reads,
    or both refuse it."""
    try:
        kept, _, _ = sidecar_arguments(raw)
    except ServerArgsError as error:
        harness_refusal = str(error)
    else:
        harness_refusal = ""
    if harness_refusal:
        with pytest.raises(ServerArgsError) as driver_error:
            resolve_permissions({SERVER_ARGS_VARIABLE: raw})
        assert str(driver_error.value) == harness_refusal
        return
    config = resolve_permissions({SERVER_ARGS_VARIABLE: raw})
    allow = [kept[i + 1] for i, arg in enumerate(kept[:-1]) if arg == "--allow-tool"]
    if "--allow-all-tools" in kept:
        assert config.allow_all
    else:
        assert config.allowed_tools == tuple(a.strip() for a in allow if a.strip())


@given(
    st.lists(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(
                [
                    "--port",
                    "--headless",
                    "--no-auto-update",
                    "--log-level",
                    "--port=1",
                    "--allow-tool",
                ]
            ),
        ),
        max_size=10,
    )
)
def test_owned_flags_never_survive(args: list[str]) -> None:
    # A policy flag without its rule (last, followed by a flag, or blank) is refused (above).
    assume(
        not any(
            arg in ("--allow-tool", "--deny-tool")
            and (
                index + 1 == len(args)
                or args[index + 1].startswith("--")
                or not args[index + 1].strip()
            )
            for index, arg in enumerate(args)
        )
    )
    kept, _, _ = sidecar_arguments(json.dumps(args))
    for flag in ("--headless", "--no-auto-update", "--port", "--log-level"):
        assert not any(arg == flag or arg.startswith(flag + "=") for arg in kept)


# -- the sidecar's environment -------------------------------------------------------------

RUNNER = {
    "PATH": "/usr/bin",
    "HOME": "/home/runner",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "JAVA_HOME": "/usr/lib/jvm/17",
    "JAVA_HOME_21_X64": "/usr/lib/jvm/21",
    "GITHUB_REPOSITORY": "owner/repo",
    "GITHUB_SHA": "abc123",
    "GITHUB_WORKSPACE": "/home/runner/work/repo",
    "RUNNER_OS": "Linux",
    "COPILOT_MODEL": "gpt-4.1",
    "COPILOT_PROVIDER_BASE_URL": "https://llm.example.com",
    "XDG_CACHE_HOME": "/home/runner/.cache",
}
KEPT_OUT = {
    "GITHUB_OUTPUT": "/home/runner/work/_temp/_runner_file_commands/set_output_1",
    "GITHUB_ENV": "/home/runner/work/_temp/_runner_file_commands/set_env_1",
    "GITHUB_PATH": "/home/runner/work/_temp/_runner_file_commands/add_path_1",
    "GITHUB_STEP_SUMMARY": "/home/runner/work/_temp/_runner_file_commands/summary_1",
    "GITHUB_EVENT_PATH": "/home/runner/work/_temp/_github_workflow/event.json",
    "ACTIONS_RUNTIME_TOKEN": "canary-actions-runtime",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://canary-oidc.example",
    "ACTIONS_CACHE_URL": "https://canary-cache.example",
    "SSH_AUTH_SOCK": "/tmp/ssh-canary/agent.1",
    "NPM_TOKEN": "canary-npm",
    "DEPLOY_KEY": "canary-deploy-key",
    "AWS_SECRET_ACCESS_KEY": "canary-aws",
    "OPENAI_API_KEY": "canary-openai",
    "PIP_INDEX_URL": "https://user:canary-pip@pypi.example/simple",
    "NPM_CONFIG_REGISTRY": "https://canary-npm.example",
    "npm_config__auth": "canary-npm-auth",
    "GH_ENTERPRISE_TOKEN": "canary-ghe",
    "GITHUB_ENTERPRISE_TOKEN": "canary-ghe2",
}
TOKENS = {
    "COPILOT_GITHUB_TOKEN": "github_pat_first",
    "GH_TOKEN": "gho_second",
    "GITHUB_TOKEN": "ghs_third",
}
PROVIDER_KEY = {"COPILOT_PROVIDER_API_KEY": "canary-provider-key"}


def test_the_sidecar_keeps_what_programs_need() -> None:
    plain, _ = sidecar_environment({**RUNNER, **KEPT_OUT, **TOKENS, **PROVIDER_KEY})
    assert plain == RUNNER


@pytest.mark.parametrize("name", sorted(KEPT_OUT))
def test_runner_files_and_secrets_stay_with_the_harness(name: str) -> None:
    plain, credentials = sidecar_environment({**RUNNER, name: KEPT_OUT[name]})
    assert name not in plain
    assert KEPT_OUT[name] not in plain.values()
    assert credentials == {}


def test_no_credential_is_plain() -> None:
    plain, credentials = sidecar_environment({**RUNNER, **TOKENS, **PROVIDER_KEY})
    for name in (*TOKENS, *PROVIDER_KEY):
        assert name not in plain
    assert not set(plain.values()) & {*TOKENS.values(), *PROVIDER_KEY.values()}
    assert credentials == {
        "COPILOT_GITHUB_TOKEN": "github_pat_first",
        "COPILOT_PROVIDER_API_KEY": "canary-provider-key",
    }


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (TOKENS, "github_pat_first"),
        ({"GH_TOKEN": "gho_second", "GITHUB_TOKEN": "ghs_third"}, "gho_second"),
        ({"GITHUB_TOKEN": "ghs_third"}, "ghs_third"),
        ({"COPILOT_GITHUB_TOKEN": "  ", "GH_TOKEN": "", "GITHUB_TOKEN": "ghs_third"}, "ghs_third"),
        ({"COPILOT_GITHUB_TOKEN": " ", "GH_TOKEN": "gho_second"}, "gho_second"),
        ({"COPILOT_GITHUB_TOKEN": "", "GH_TOKEN": "\t"}, None),
        ({"GH_ENTERPRISE_TOKEN": "ghe"}, None),
        ({}, None),
    ],
)
def test_the_sidecar_gets_one_platform_token_by_the_clis_preference(
    tokens: dict[str, str], expected: str | None
) -> None:
    _, credentials = sidecar_environment({**RUNNER, **tokens})
    assert credentials.get("COPILOT_GITHUB_TOKEN") == expected
    assert set(credentials) <= {"COPILOT_GITHUB_TOKEN"}


def test_an_empty_provider_key_is_no_credential() -> None:
    _, credentials = sidecar_environment({**RUNNER, "COPILOT_PROVIDER_API_KEY": ""})
    assert credentials == {}


def test_pass_env_adds_named_variables_even_secret_ones() -> None:
    base = {**RUNNER, **KEPT_OUT, **TOKENS}
    plain, credentials = sidecar_environment(
        base, pass_env=("NPM_TOKEN", "PIP_INDEX_URL", "GH_TOKEN", "NOT_SET_ANYWHERE")
    )
    assert plain == {
        **RUNNER,
        "NPM_TOKEN": "canary-npm",
        "PIP_INDEX_URL": "https://user:canary-pip@pypi.example/simple",
        "GH_TOKEN": "gho_second",
    }
    assert "NOT_SET_ANYWHERE" not in plain
    assert credentials == {"COPILOT_GITHUB_TOKEN": "github_pat_first"}


def test_the_base_is_not_modified_by_the_split() -> None:
    base = {**RUNNER, **KEPT_OUT, **TOKENS}
    copy = dict(base)
    sidecar_environment(base, pass_env=("NPM_TOKEN",))
    assert base == copy


NAMES = st.one_of(
    st.sampled_from(sorted(SIDECAR_PASSED)),
    st.sampled_from(sorted({*KEPT_OUT, *TOKENS, *PROVIDER_KEY})),
    st.from_regex(
        r"(LC_|JAVA_HOME_|GITHUB_|ACTIONS_|COPILOT_)?[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True
    ),
)


def is_passed(name: str, pass_env: tuple[str, ...]) -> bool:
    return name in SIDECAR_PASSED or name.startswith(SIDECAR_PASSED_PREFIXES) or name in pass_env


@given(st.lists(NAMES, unique=True, max_size=25), st.lists(NAMES, max_size=4))
def test_no_unlisted_value_ever_reaches_the_plain_part(
    names: list[str], pass_env: list[str]
) -> None:
    base = {name: f"value-{index}-of-{name}" for index, name in enumerate(names)}
    plain, credentials = sidecar_environment(base, pass_env=tuple(pass_env))
    for name, value in base.items():
        if is_passed(name, tuple(pass_env)):
            assert plain[name] == value
        else:
            assert value not in plain.values()
    assert set(plain) <= set(base)
    assert set(credentials) <= {"COPILOT_GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY"}
