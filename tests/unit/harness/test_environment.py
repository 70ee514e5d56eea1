"""The harness's pure decisions: the driver's environment and the sidecar's arguments."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copilot_driver.env_commands import GITHUB_CREDENTIALS, PROXY_VARIABLES
from copilot_driver.harness.environment import (
    SIDECAR_PASSED,
    SIDECAR_PASSED_PREFIXES,
    driver_environment,
    login_arguments,
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


# -- how the sidecar signs in, and what reaches it ----------------------------------------


def test_with_a_token_the_cli_is_told_which_variable_holds_it() -> None:
    credentials = {"COPILOT_GITHUB_TOKEN": "github_pat_x"}
    assert login_arguments(credentials, stored_login=False) == [
        "--no-auto-login",
        "--auth-token-env",
        "COPILOT_GITHUB_TOKEN",
    ]
    assert login_arguments(credentials, stored_login=True)[0] == "--no-auto-login"


def test_a_stored_login_is_the_clis_own_sign_in_and_nothing_else_none() -> None:
    assert login_arguments({}, stored_login=True) == []
    assert login_arguments({"COPILOT_PROVIDER_API_KEY": "k"}, stored_login=False) == [
        "--no-auto-login"
    ]


PROXIES = {
    "HTTPS_PROXY": "http://me:pw@proxy:3128",
    "https_proxy": "http://me:pw@proxy:3128",
    "HTTP_PROXY": "http://proxy:3128",
    "NO_PROXY": ".internal",
}
GITHUB_PLACES = {
    "GH_HOST": "acme.ghe.com",
    "COPILOT_GH_HOST": "acme.ghe.com",
    "COPILOT_API_URL": "https://copilot-api.acme.ghe.com",
    "COPILOT_DEBUG_GITHUB_API_URL": "http://127.0.0.1:1",
    "NODE_EXTRA_CA_CERTS": "/etc/corp-ca.pem",
    "SSL_CERT_FILE": "/etc/corp-ca.pem",
}


def test_without_the_sandbox_the_proxies_travel_with_the_credentials() -> None:
    plain, credentials = sidecar_environment({**PROXIES, **GITHUB_PLACES}, sandboxed=False)

    assert {name: credentials[name] for name in PROXIES} == PROXIES
    assert not set(PROXIES) & set(plain)
    assert {name: plain[name] for name in GITHUB_PLACES} == GITHUB_PLACES


def test_in_the_sandbox_no_proxy_reaches_the_cli_from_the_harness() -> None:
    plain, credentials = sidecar_environment({**PROXIES, **GITHUB_PLACES})

    assert not set(PROXIES) & (set(plain) | set(credentials))
    assert {name: plain[name] for name in GITHUB_PLACES} == GITHUB_PLACES


def test_the_harness_owns_the_sign_in_flags() -> None:
    args = json.dumps(["--no-auto-login", "--auth-token-env", "MY_TOKEN", "--allow-tool", "x"])
    kept, _, _ = sidecar_arguments(args)
    assert kept == ["--allow-tool", "x"]


@pytest.mark.parametrize("name", PROXY_VARIABLES)
@pytest.mark.parametrize("sandboxed", [True, False])
def test_each_proxy_variable_is_a_credential_outside_the_sandbox_and_absent_in_it(
    name: str, sandboxed: bool
) -> None:
    value = "http://me:canary-proxy-password@proxy:3128"
    plain, credentials = sidecar_environment({**RUNNER, name: value}, sandboxed=sandboxed)

    assert name not in plain
    assert value not in plain.values()
    assert credentials == ({} if sandboxed else {name: value})


def test_every_proxy_variable_travels_beside_the_token_and_the_key() -> None:
    proxies = {name: f"http://proxy-{index}:3128" for index, name in enumerate(PROXY_VARIABLES)}
    _, credentials = sidecar_environment(
        {**RUNNER, **TOKENS, **PROVIDER_KEY, **proxies, "no_proxy": ""}, sandboxed=False
    )

    assert credentials == {
        "COPILOT_GITHUB_TOKEN": "github_pat_first",
        "COPILOT_PROVIDER_API_KEY": "canary-provider-key",
        **{name: value for name, value in proxies.items() if name != "no_proxy"},
    }


def test_the_proxy_variables_are_both_cases_of_curls_names() -> None:
    assert set(PROXY_VARIABLES) == {
        "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
        "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
    }  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [
        "GH_HOST",
        "COPILOT_GH_HOST",
        "COPILOT_API_URL",
        "COPILOT_DEBUG_GITHUB_API_URL",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
    ],
)
@pytest.mark.parametrize("sandboxed", [True, False])
def test_where_github_is_and_whom_to_trust_reach_the_plain_part(name: str, sandboxed: bool) -> None:
    plain, credentials = sidecar_environment({name: "value"}, sandboxed=sandboxed)

    assert plain == {name: "value"}
    assert credentials == {}


@pytest.mark.parametrize(
    ("base", "stored", "expected"),
    [
        (
            {"GH_TOKEN": "gho_x"},
            False,
            ["--no-auto-login", "--auth-token-env", "COPILOT_GITHUB_TOKEN"],
        ),
        (
            {"GITHUB_TOKEN": "ghs_x"},
            True,
            ["--no-auto-login", "--auth-token-env", "COPILOT_GITHUB_TOKEN"],
        ),
        ({"GITHUB_TOKEN": "  "}, True, []),
        ({"GITHUB_TOKEN": "  "}, False, ["--no-auto-login"]),
        ({"COPILOT_PROVIDER_API_KEY": "k"}, False, ["--no-auto-login"]),
        ({"HTTPS_PROXY": "http://me:pw@proxy:3128"}, False, ["--no-auto-login"]),
        ({"GH_ENTERPRISE_TOKEN": "ghe"}, False, ["--no-auto-login"]),
    ],
)
def test_the_sign_in_follows_from_the_sidecars_credentials(
    base: dict[str, str], stored: bool, expected: list[str]
) -> None:
    _, credentials = sidecar_environment(base, sandboxed=False)
    assert login_arguments(credentials, stored_login=stored) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["--auth-token-env=MY_TOKEN", "--allow-tool", "x"],
        ["--allow-tool", "x", "--no-auto-login", "--auth-token-env", "MY_TOKEN"],
        ["--allow-tool", "x", "--auth-token-env"],
        ["--no-auto-login", "--no-auto-login", "--allow-tool", "x"],
    ],
)
def test_every_form_of_the_sign_in_flags_is_dropped(args: list[str]) -> None:
    kept, port, log_level = sidecar_arguments(json.dumps(args))
    assert (kept, port, log_level) == (["--allow-tool", "x"], None, None)


def test_a_look_alike_of_a_sign_in_flag_is_kept() -> None:
    args = ["--no-auto-login-please", "--auth-token-envs", "X", "--no-auto-update-x"]
    assert sidecar_arguments(json.dumps(args))[0] == args


@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abcXYZ_=-", max_size=8).filter(lambda arg: not arg.startswith("--")),
            st.sampled_from(
                ["--no-auto-login", "--auth-token-env", "--auth-token-env=T", "--model", "--yolo"]
            ),
        ),
        max_size=10,
    )
)
def test_the_sign_in_flags_never_survive(args: list[str]) -> None:
    kept, _, _ = sidecar_arguments(json.dumps(args))
    assert "--no-auto-login" not in kept
    assert not any(arg.startswith("--auth-token-env") for arg in kept)


@pytest.mark.parametrize("owned", ["--auth-token-env", "--port", "--log-level"])
def test_an_owned_flag_without_a_value_never_swallows_a_policy_flag(owned: str) -> None:
    args = ["--allow-all-tools", owned, "--deny-tool", "shell(rm)"]
    raw = json.dumps(args)

    kept, _, _ = sidecar_arguments(raw)
    denied = resolve_permissions({SERVER_ARGS_VARIABLE: raw}).denied_tools

    assert denied == ("shell(rm)",)  # the driver reads the deny rule...
    assert kept[-2:] == ["--deny-tool", "shell(rm)"]  # ...so the sidecar must get it


@given(
    st.dictionaries(
        st.one_of(
            st.sampled_from(PROXY_VARIABLES),
            st.sampled_from(sorted({*TOKENS, *PROVIDER_KEY})),
            st.sampled_from(["GH_HOST", "NODE_EXTRA_CA_CERTS", "PATH", "NPM_TOKEN"]),
        ),
        st.sampled_from(["", " ", "v", "http://me:pw@proxy:3128"]),
        max_size=12,
    ),
    st.booleans(),
)
def test_a_proxy_variable_is_a_credential_outside_the_sandbox_and_nowhere_in_it(
    base: dict[str, str], sandboxed: bool
) -> None:
    plain, credentials = sidecar_environment(base, sandboxed=sandboxed)
    proxies = {name: value for name, value in base.items() if name in PROXY_VARIABLES and value}

    assert not set(PROXY_VARIABLES) & set(plain)
    assert {n: v for n, v in credentials.items() if n in PROXY_VARIABLES} == (
        {} if sandboxed else proxies
    )
    assert set(credentials) <= {"COPILOT_GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY", *proxies}


@given(
    st.dictionaries(st.sampled_from(sorted({*TOKENS, *PROVIDER_KEY})), st.sampled_from(["", "t"])),
    st.booleans(),
)
def test_the_cli_is_named_the_token_variable_exactly_when_it_has_a_token(
    base: dict[str, str], stored: bool
) -> None:
    _, credentials = sidecar_environment(base)
    args = login_arguments(credentials, stored_login=stored)
    has_token = any(base.get(name) for name in TOKENS)

    assert (args[1:] == ["--auth-token-env", "COPILOT_GITHUB_TOKEN"]) is has_token
    assert (args == []) is (stored and not has_token)


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["--auth-token-env", "--no-auto-login", "--model", "m"], ["--model", "m"]),
        (["--auth-token-env=", "--model=m"], ["--model=m"]),
        (["--no-auto-login=true", "x"], ["x"]),
    ],
)
def test_a_sign_in_flag_takes_no_other_flag_as_its_value(args: list[str], kept: list[str]) -> None:
    assert sidecar_arguments(json.dumps(args))[0] == kept
