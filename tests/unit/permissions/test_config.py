"""Unit tests for `copilot_driver.permissions.config` (spec 5.1, 5.2) and its
wiring into `load_config` (GH_AW_COPILOT_SDK_PERMISSIONS, GH_AW_MAX_TOOL_DENIALS,
GITHUB_ACTIONS).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.driver.config import ConfigError, load_config
from copilot_driver.driver.settings import parse_max_tool_denials
from copilot_driver.json_input import json_object, json_syntax_problem
from copilot_driver.permissions.config import (
    EXPLICIT_EXAMPLE,
    EXPLICIT_VARIABLE,
    SERVER_ARGS_VARIABLE,
    PermissionConfig,
    ServerArgsError,
    parse_explicit,
    parse_server_args,
    read_server_args,
)
from copilot_driver.permissions.inputs import resolve_permissions
from copilot_driver.variable import DEFAULT_MAX_TOOL_DENIALS

TOKEN = "tok-PERM-SECRET-5e1f7a"
DEEP = "[" * 100_000
DEEP_CLOSED = "[" * 100_000 + "]" * 100_000


def _args(*args: object) -> str:
    return json.dumps(list(args))


# --- GH_AW_COPILOT_SDK_SERVER_ARGS -------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--allow-all-tools"],
        ["--allow-all-tools", "--allow-tool", "write"],
        ["--allow-tool", "write", "--allow-all-tools"],
        ["--model", "gpt-4.1", "--allow-tool=read", "--allow-all-tools", "--log-level", "all"],
    ],
)
def test_server_args_allow_all_tools_wins_anywhere(args: list[str]) -> None:
    config = parse_server_args(json.dumps(args))
    assert config == PermissionConfig(True, (), SERVER_ARGS_VARIABLE)
    assert config.mode == "allow-all"


def test_server_args_allow_tool_pairs_and_equals_form_in_order() -> None:
    raw = _args(
        "--headless",
        "--allow-tool",
        "shell(git:*)",
        "--port",
        "3002",
        "--allow-tool=write",
        "--allow-tool",
        "github(get_file_contents)",
        "--allow-tool=shell(ls)",
    )
    config = parse_server_args(raw)
    assert config is not None
    assert config.allowed_tools == (
        "shell(git:*)",
        "write",
        "github(get_file_contents)",
        "shell(ls)",
    )
    assert config.allow_all is False
    assert config.source == SERVER_ARGS_VARIABLE
    assert config.mode == "scoped"


@pytest.mark.parametrize("flag", ["--allow-tool", "--deny-tool"])
def test_server_args_ending_with_a_flag_without_its_value_are_refused(flag: str) -> None:
    with pytest.raises(ServerArgsError, match=f"ends with {flag}, which needs a value"):
        parse_server_args(_args("--allow-tool", "write", flag))


@pytest.mark.parametrize(
    "raw",
    [None, "", "   ", "\n\t", "[]", _args("--model", "gpt-4.1", "--log-level", "debug")],
)
def test_server_args_without_allow_or_deny_flags_is_no_configuration(raw: str | None) -> None:
    assert parse_server_args(raw) is None
    env = {} if raw is None else {SERVER_ARGS_VARIABLE: raw}
    resolved = resolve_permissions(env)
    assert resolved == PermissionConfig()
    assert resolved.mode == "unrestricted"
    assert resolved.source == "none"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("not json", "is not valid JSON: line 1 column 1: expected a value, found `n`"),
        ("[", "is not valid JSON: line 1 column 2: expected a value, found the end of the text"),
        ("['--allow-all-tools']", "JSON strings take double quotes, not single quotes"),
        (
            '["--allow-all-tools",]',
            "line 1 column 22: expected a value, found `]`; it has a trailing comma",
        ),
        ('{"allowAllTools": true}', "is an object, not a JSON array of strings"),
        ('"--allow-all-tools"', "is a string, not a JSON array of strings"),
        ("42", "is a number, not a JSON array of strings"),
        ("null", "is null, not a JSON array of strings"),
        (_args("--allow-tool", 5), "element 2 is a number"),
        (_args("--allow-tool", None), "element 2 is null"),
        (_args("--allow-all-tools", ["nested"]), "element 2 is an array"),
        (_args("--allow-all-tools", True), "element 2 is a boolean"),
        (DEEP, "is nested too deeply"),
        (DEEP_CLOSED, "is nested too deeply"),
    ],
)
def test_unreadable_server_args_are_refused_never_no_configuration(raw: str, why: str) -> None:
    """Fail closed: "no configuration" approves everything, so a value that is set but
    unreadable is an error that names the fix, even beside an explicit policy."""
    for env in (
        {SERVER_ARGS_VARIABLE: raw},
        {SERVER_ARGS_VARIABLE: raw, EXPLICIT_VARIABLE: '{"allowedTools": ["read"]}'},
    ):
        with pytest.raises(ServerArgsError) as caught:
            resolve_permissions(env)
        message = str(caught.value)
        assert message.startswith(SERVER_ARGS_VARIABLE)
        assert why in message, message
        assert "write the sidecar's arguments as a JSON array of strings" in message


def test_deny_flags_are_kept_in_every_mode() -> None:
    allow_all = parse_server_args(_args("--allow-all-tools", "--deny-tool", " shell(rm) "))
    assert allow_all == PermissionConfig(True, (), SERVER_ARGS_VARIABLE, ("shell(rm)",))
    only_deny = parse_server_args(_args("--headless", "--deny-tool=write"))
    assert only_deny == PermissionConfig(False, (), SERVER_ARGS_VARIABLE, ("write",))
    assert only_deny.mode == "unrestricted"
    assert "1 deny rule: write" in only_deny.describe()
    scoped = parse_server_args(
        _args("--allow-tool", "shell(git:*)", "--deny-tool", "shell(git push)")
    )
    assert scoped is not None
    assert scoped.describe() == (
        "1 rule: shell(git:*); 1 deny rule: shell(git push) (from GH_AW_COPILOT_SDK_SERVER_ARGS)"
    )


def test_deny_flags_of_the_server_args_apply_beside_an_explicit_policy() -> None:
    """The sidecar was given them: an explicit allowlist never drops them."""
    env = {
        SERVER_ARGS_VARIABLE: _args("--allow-all-tools", "--deny-tool", "shell(rm)"),
        EXPLICIT_VARIABLE: '{"allowedTools": ["shell"], "deniedTools": ["write", "shell(rm)"]}',
    }
    config = resolve_permissions(env)
    assert config.allowed_tools == ("shell",)
    assert config.allow_all is False
    assert config.denied_tools == ("write", "shell(rm)")
    assert config.source == EXPLICIT_VARIABLE


def test_server_args_entries_are_trimmed() -> None:
    raw = _args("--allow-tool", "  write  ", "--allow-tool=\tread\n")
    config = parse_server_args(raw)
    assert config is not None
    assert config.allowed_tools == ("write", "read")


@pytest.mark.parametrize(
    "args",
    [
        ["--allow-tool", ""],
        ["--allow-tool="],
        ["--allow-tool", " "],
        ["--allow-tool", "read", "--allow-tool", "\t\n"],
        ["--deny-tool", ""],
        ["--allow-all-tools", "--deny-tool= "],
    ],
)
def test_a_blank_rule_in_the_server_args_is_refused_never_an_empty_allowlist(
    args: list[str],
) -> None:
    """Dropped, a blank rule would leave an empty allowlist: approve everything."""
    with pytest.raises(ServerArgsError, match="a blank rule, which names no tool"):
        parse_server_args(_args(*args))


def test_no_configuration_is_unrestricted() -> None:
    assert PermissionConfig().mode == "unrestricted"
    assert resolve_permissions({}) == PermissionConfig()
    assert resolve_permissions({"UNRELATED": "x"}).mode == "unrestricted"


# --- GH_AW_COPILOT_SDK_PERMISSIONS -------------------------------------------------------------


def test_explicit_allow_all() -> None:
    config = parse_explicit('{"allowAllTools": true, "allowedTools": ["read"]}')
    assert config.allow_all is True
    assert config.mode == "allow-all"
    assert config.source == EXPLICIT_VARIABLE


def test_explicit_allowed_tools_trimmed() -> None:
    raw = json.dumps({"allowAllTools": False, "allowedTools": [" read ", "write"]})
    config = parse_explicit(raw)
    assert config == PermissionConfig(False, ("read", "write"), EXPLICIT_VARIABLE)
    assert config.mode == "scoped"


@pytest.mark.parametrize("key", ["allowedTools", "deniedTools"])
@pytest.mark.parametrize("blank", ["", "  ", "\n"])
def test_an_explicit_blank_rule_is_refused(key: str, blank: str) -> None:
    with pytest.raises(ValueError, match=f"{key} holds a blank rule"):
        parse_explicit(json.dumps({key: ["read", blank]}))


@pytest.mark.parametrize(
    "raw",
    [
        '{"allowedTools": ["read"], "allowedTools": []}',
        '{"allowAllTools": false, "allowAllTools": true}',
    ],
)
def test_a_key_given_twice_is_refused_never_the_last_one_kept(raw: str) -> None:
    with pytest.raises(ValueError, match="twice in one object") as raised:
        parse_explicit(raw)
    assert str(raised.value).startswith(EXPLICIT_VARIABLE)


def test_a_key_given_twice_in_the_server_args_or_any_json_input_is_refused() -> None:
    with pytest.raises(ServerArgsError, match="twice"):
        parse_server_args('[{"a": 1, "a": 2}]')
    with pytest.raises(ValueError, match="twice"):
        json_object('{"providers": [], "providers": [1]}', "providers", "{}")


def test_a_number_of_thousands_of_digits_names_the_variable_and_the_fix() -> None:
    with pytest.raises(ValueError, match="digits") as raised:
        parse_explicit('{"allowAllTools": ' + "1" * 5000 + "}")
    message = str(raised.value)
    assert message.startswith(f"{EXPLICIT_VARIABLE} holds a number of 5000 digits")
    assert "write a shorter number" in message
    assert "set_int_max_str_digits" not in message
    with pytest.raises(ServerArgsError, match=f"{SERVER_ARGS_VARIABLE} holds a number"):
        parse_server_args("[" + "9" * 5000 + "]")


@pytest.mark.parametrize("key", ["allowedTools", "deniedTools"])
@pytest.mark.parametrize("entry", [5, None, ["x"], {}])
def test_explicit_rules_that_are_not_strings_are_refused(key: str, entry: object) -> None:
    with pytest.raises(ValueError, match=f"{key} must be an array of strings"):
        parse_explicit(json.dumps({key: ["read", entry]}))


def test_explicit_denied_tools() -> None:
    config = parse_explicit('{"allowAllTools": true, "deniedTools": [" shell(rm) "]}')
    assert config == PermissionConfig(True, (), EXPLICIT_VARIABLE, ("shell(rm)",))


@pytest.mark.parametrize("raw", ["{}", '{"allowedTools": []}'])
def test_explicit_without_rules_is_unrestricted(raw: str) -> None:
    config = parse_explicit(raw)
    assert config.allow_all is False
    assert config.allowed_tools == ()
    assert config.mode == "unrestricted"


@pytest.mark.parametrize(
    ("raw", "mentions"),
    [
        ("not json", "not valid JSON"),
        ("{", "not valid JSON"),
        ("[]", "not a JSON object"),
        ('["read"]', "not a JSON object"),
        ('"read"', "not a JSON object"),
        ("null", "not a JSON object"),
        ("true", "not a JSON object"),
        ('{"allowAllTools": "true"}', "allowAllTools"),
        ('{"allowAllTools": 1}', "allowAllTools"),
        ('{"allowAllTools": null}', "allowAllTools"),
        ('{"allowedTools": "read"}', "allowedTools"),
        ('{"allowedTools": {"read": true}}', "allowedTools"),
        ('{"allowedTools": null}', "allowedTools"),
        ('{"allowedTool": ["read"]}', "allowedTool"),
        ('{"allowAllTools": false, "allowedTools": [], "extra": 1}', "extra"),
    ],
)
def test_explicit_invalid_is_a_value_error(raw: str, mentions: str) -> None:
    with pytest.raises(ValueError, match=EXPLICIT_VARIABLE) as caught:
        parse_explicit(raw)
    assert mentions in str(caught.value)
    with pytest.raises(ValueError, match=EXPLICIT_VARIABLE):
        resolve_permissions({EXPLICIT_VARIABLE: raw})


def test_explicit_unknown_key_error_names_the_key() -> None:
    with pytest.raises(ValueError, match="unknown key") as caught:
        parse_explicit('{"allowedTool": ["read"], "allowedTools": ["write"]}')
    assert 'unknown key(s) "allowedTool":' in str(caught.value)


@pytest.mark.parametrize(
    "raw", [DEEP, DEEP_CLOSED, '{"allowedTools": ' + DEEP, '{"allowedTools": ' + DEEP_CLOSED + "}"]
)
def test_explicit_deep_nesting_is_a_value_error_not_recursion(raw: str) -> None:
    with pytest.raises(ValueError, match=EXPLICIT_VARIABLE):
        parse_explicit(raw)


def test_explicit_takes_precedence_over_server_args() -> None:
    env = {
        EXPLICIT_VARIABLE: '{"allowedTools": ["read"]}',
        SERVER_ARGS_VARIABLE: _args("--allow-all-tools"),
    }
    assert resolve_permissions(env) == PermissionConfig(False, ("read",), EXPLICIT_VARIABLE)
    env[EXPLICIT_VARIABLE] = '{"allowAllTools": true}'
    env[SERVER_ARGS_VARIABLE] = _args("--allow-tool", "read")
    assert resolve_permissions(env) == PermissionConfig(True, (), EXPLICIT_VARIABLE)


def test_explicit_empty_allowlist_still_wins_over_server_args() -> None:
    env = {EXPLICIT_VARIABLE: "{}", SERVER_ARGS_VARIABLE: _args("--allow-tool", "read")}
    config = resolve_permissions(env)
    assert config.source == EXPLICIT_VARIABLE
    assert config.mode == "unrestricted"


@pytest.mark.parametrize("blank", ["", "  ", "\n"])
def test_blank_explicit_falls_back_to_server_args(blank: str) -> None:
    env = {EXPLICIT_VARIABLE: blank, SERVER_ARGS_VARIABLE: _args("--allow-tool", "write")}
    assert resolve_permissions(env) == PermissionConfig(False, ("write",), SERVER_ARGS_VARIABLE)


def test_invalid_explicit_never_falls_back_to_server_args() -> None:
    env = {EXPLICIT_VARIABLE: '{"allowAllTools": "yes"}', SERVER_ARGS_VARIABLE: "[]"}
    with pytest.raises(ValueError, match=EXPLICIT_VARIABLE):
        resolve_permissions(env)


# --- describe() --------------------------------------------------------------------------------


def test_describe_allow_all() -> None:
    assert (
        PermissionConfig(True, (), SERVER_ARGS_VARIABLE).describe()
        == f"allow-all: every tool request is approved (from {SERVER_ARGS_VARIABLE})"
    )
    assert PermissionConfig(True).describe() == "allow-all: every tool request is approved"


def test_describe_unrestricted() -> None:
    assert PermissionConfig().describe() == (
        "none (unrestricted): no permission configuration, every tool request is approved"
    )
    assert PermissionConfig(False, (), EXPLICIT_VARIABLE).describe() == (
        "none (unrestricted): an empty allowlist, every tool request is approved"
        f" (from {EXPLICIT_VARIABLE})"
    )


def test_describe_scoped_lists_only_the_rules() -> None:
    env = {
        "COPILOT_CONNECTION_TOKEN": TOKEN,
        EXPLICIT_VARIABLE: json.dumps({"allowedTools": ["shell(git:*)", " write ", "github"]}),
    }
    config = resolve_permissions(env)
    assert config.describe() == f"3 rules: shell(git:*), write, github (from {EXPLICIT_VARIABLE})"
    assert TOKEN not in config.describe()
    assert PermissionConfig(False, ("read",)).describe() == "1 rule: read"


# --- through load_config -----------------------------------------------------------------------


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Say hello.\n", encoding="utf-8")
    return {
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "127.0.0.1:3002",
        "COPILOT_CONNECTION_TOKEN": TOKEN,
        "COPILOT_MODEL": "gpt-4.1",
    }


def test_load_config_defaults(env: dict[str, str], tmp_path: Path) -> None:
    config = load_config(env, cwd=tmp_path)
    assert config.permissions == PermissionConfig()
    assert config.max_tool_denials == DEFAULT_MAX_TOOL_DENIALS == 5
    assert config.github_actions is False
    assert config.notices == ()


def test_load_config_reads_both_permission_variables(env: dict[str, str], tmp_path: Path) -> None:
    env[SERVER_ARGS_VARIABLE] = _args("--allow-tool", "shell(git:*)", "--allow-tool=write")
    config = load_config(env, cwd=tmp_path)
    assert config.permissions == PermissionConfig(
        False, ("shell(git:*)", "write"), SERVER_ARGS_VARIABLE
    )
    env[EXPLICIT_VARIABLE] = '{"allowAllTools": true}'
    assert load_config(env, cwd=tmp_path).permissions.mode == "allow-all"


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[]",
        '{"allowAllTools": "true"}',
        '{"allowedTools": "read"}',
        '{"allowedTool": ["read"]}',
        DEEP,
    ],
)
def test_load_config_invalid_permissions_is_a_config_error(
    env: dict[str, str], tmp_path: Path, raw: str
) -> None:
    env[EXPLICIT_VARIABLE] = raw
    env[SERVER_ARGS_VARIABLE] = _args("--allow-all-tools")
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert EXPLICIT_VARIABLE in problem
    assert "never widened to allow-all" in problem
    assert TOKEN not in problem


def test_load_config_invalid_permissions_problem_is_one_bounded_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Config problems are printed one per line and quote user input shortened
    (config.py: "Quote user input in an error without flooding the log (or a newline)").
    An unknown key is echoed verbatim by parse_explicit."""
    env[EXPLICIT_VARIABLE] = json.dumps({"allowedTools": [], "typo\n" + "x" * 5000: 1})
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert EXPLICIT_VARIABLE in problem
    assert "\n" not in problem
    assert len(problem) < 500


def test_parse_max_tool_denials_unset_or_empty_is_default_without_notice() -> None:
    notices: list[str] = []
    assert parse_max_tool_denials(None, notices) == 5
    assert parse_max_tool_denials("", notices) == 5
    assert notices == []


@pytest.mark.parametrize(
    ("raw", "expected"), [("3", 3), ("1", 1), (" 7 ", 7), ("999999999", 999_999_999)]
)
def test_max_tool_denials_valid(
    env: dict[str, str], tmp_path: Path, raw: str, expected: int
) -> None:
    env["GH_AW_MAX_TOOL_DENIALS"] = raw
    config = load_config(env, cwd=tmp_path)
    assert config.max_tool_denials == expected
    assert config.notices == ()


@pytest.mark.parametrize(
    "raw", ["0", "-1", "abc", "1.5", "9" * 50, "1000000000", "+3", "3 4", "0x10", "\uff13"]
)
def test_max_tool_denials_invalid_falls_back_with_notice(
    env: dict[str, str], tmp_path: Path, raw: str
) -> None:
    env["GH_AW_MAX_TOOL_DENIALS"] = raw
    config = load_config(env, cwd=tmp_path)
    assert config.max_tool_denials == 5
    (notice,) = config.notices
    assert "GH_AW_MAX_TOOL_DENIALS" in notice
    assert "using 5" in notice
    assert len(notice) < 200  # the value is quoted shortened


@pytest.mark.parametrize("raw", ["", " ", "\t"])
def test_max_tool_denials_blank_is_default(env: dict[str, str], tmp_path: Path, raw: str) -> None:
    env["GH_AW_MAX_TOOL_DENIALS"] = raw
    config = load_config(env, cwd=tmp_path)
    assert config.max_tool_denials == 5
    # Like COPILOT_SDK_SEND_TIMEOUT_MS: only the empty string is silent.
    assert len(config.notices) == (0 if raw == "" else 1)


def test_max_tool_denials_notice_masks_the_token(env: dict[str, str], tmp_path: Path) -> None:
    env["GH_AW_MAX_TOOL_DENIALS"] = TOKEN
    (notice,) = load_config(env, cwd=tmp_path).notices
    assert TOKEN not in notice
    assert "***" in notice


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, False),
        ("true", True),
        ("TRUE", True),
        (" true ", True),
        ("false", False),
        ("1", False),
        ("", False),
        ("yes", False),
    ],
)
def test_github_actions(
    env: dict[str, str], tmp_path: Path, raw: str | None, expected: bool
) -> None:
    if raw is not None:
        env["GITHUB_ACTIONS"] = raw
    assert load_config(env, cwd=tmp_path).github_actions is expected


@pytest.mark.parametrize(
    "args", [["--allow-tool", "--port"], ["--deny-tool", "--allow-all-tools", "x"]]
)
def test_a_policy_flag_followed_by_a_flag_is_refused(args: list[str]) -> None:
    """The sidecar would take the flag as the rule: neither the harness nor the driver
    guesses which was meant."""
    with pytest.raises(ServerArgsError, match="a flag, not a rule"):
        read_server_args(json.dumps(args))


# --- JSON syntax errors: where, what was found, the usual mistake ---------------------------


def _syntax_problem(raw: str) -> str:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(raw)
    return json_syntax_problem(raw, caught.value)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            '{"allowedTools": ["read"],}',
            "line 1 column 27: expected a key in double quotes, found `}`; it has a trailing "
            "comma before `}`: remove that comma",
        ),
        ("['read']", "line 1 column 2: expected a value, found `'`; JSON strings take double"),
        ("{allowedTools: []}", "found `a`; keys take double quotes"),
        ('{"allowedTools": ["read"]', "found the end of the text; the text ends early"),
        ('{"allowedTools":\n  ["read",\n]}', "line 3 column 1: expected a value, found `]`"),
        ('{"a": 1} x', "line 1 column 10: expected nothing more after the value, found `x`"),
        ('{"a": "b', 'line 1 column 7: a string starts here and is never closed, found `"`'),
        ('{"a" 1}', "line 1 column 6: expected `:` after the key, found `1`"),
        ('["a" "b"]', 'line 1 column 6: expected `,` or a closing bracket, found `"`'),
        ('["a\tb"]', "a raw tab or line break inside a string (write \\t or \\n), found a tab"),
        ('["\\q"]', "line 1 column 3: an invalid backslash escape, found `\\`"),
    ],
)
def test_a_json_syntax_error_says_where_and_what_was_found(raw: str, said: str) -> None:
    assert said in _syntax_problem(raw)


@given(st.text(max_size=80))
def test_any_json_error_is_placed_inside_the_text(raw: str) -> None:
    try:
        json.loads(raw)
    except json.JSONDecodeError as error:
        problem = json_syntax_problem(raw, error)
    else:
        return
    where = re.match(r"line (\d+) column (\d+): ", problem)
    assert where is not None, problem
    line, column = int(where.group(1)), int(where.group(2))
    lines = raw.split("\n")
    assert 1 <= line <= len(lines)
    assert 1 <= column <= len(lines[line - 1]) + 1
    assert ", found " in problem


@given(st.text(min_size=20, max_size=40, alphabet=st.characters(codec="ascii")))
def test_a_json_error_shows_one_character_of_the_text_at_most(secret: str) -> None:
    """A secret pasted into a JSON variable by mistake is never echoed by the position."""
    raw = "[" + secret
    try:
        json.loads(raw)
    except json.JSONDecodeError as error:
        problem = json_syntax_problem(raw, error)
    else:
        return
    found = problem.split(", found ", 1)[1].split(";")[0]
    assert len(found) < len(secret)  # one character, or a few words for an invisible one


@pytest.mark.parametrize(
    "raw", ['{"allowedTools": ["read"],}', "{'allowedTools': ['read']}", "[", '"read"']
)
def test_an_unreadable_explicit_policy_shows_a_valid_value(raw: str) -> None:
    with pytest.raises(ValueError, match=EXPLICIT_VARIABLE) as caught:
        parse_explicit(raw)
    assert str(caught.value).endswith(f"a valid value looks like {EXPLICIT_EXAMPLE}")
    assert parse_explicit(EXPLICIT_EXAMPLE).mode == "scoped"


def test_the_unknown_key_error_lists_every_key_understood() -> None:
    with pytest.raises(ValueError, match="only allowAllTools, allowedTools and deniedTools"):
        parse_explicit('{"deniedTool": ["write"]}')
