"""The `copilot-cli` option block and the argv it turns into (spec: "Copilot CLI adapter")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.adapters.copilot_cli.options import (
    DEFAULT_MAX_AUTOPILOT_CONTINUES,
    CopilotCliOptions,
    build_args,
    mcp_config_argument,
)

ALWAYS = ["-p", "PROMPT", "--output-format", "json", "-s", "--autopilot", "--no-ask-user"]
SCOPING_FIELDS = ("allowed_tools", "denied_tools", "available_tools", "excluded_tools")
SCOPING_FLAGS = ("--allow-tool", "--deny-tool", "--available-tools", "--excluded-tools")
KNOWN_FIELDS = (
    "agent",
    "allowed_tools",
    "available_tools",
    "denied_tools",
    "disable_builtin_mcps",
    "excluded_tools",
    "experimental",
    "max_autopilot_continues",
    "mcp_config",
    "model",
    "no_custom_instructions",
)


def args_for(raw: dict[str, Any] | None = None, prompt: str = "PROMPT", **kwargs: Any) -> list[str]:
    return build_args(CopilotCliOptions.from_mapping(raw), prompt, **kwargs)


def flag_value(args: list[str], flag: str) -> str:
    """The argument right after `flag` (which must occur exactly once)."""
    assert args.count(flag) == 1, args
    return args[args.index(flag) + 1]


# -- the always-present flags ----------------------------------------------


def test_every_turn_starts_with_prompt_json_silent_autopilot_and_no_ask_user() -> None:
    assert args_for()[:7] == ALWAYS


def test_default_options_give_the_fixed_flags_allow_all_and_the_continuation_cap() -> None:
    assert args_for() == [*ALWAYS, "--allow-all", "--max-autopilot-continues", "50"]


@pytest.mark.parametrize(
    "raw",
    [
        {"allowed_tools": "shell"},
        {"model": "gpt-4.1", "experimental": True},
        {"mcp_config": "./m.json", "denied_tools": ["write"]},
    ],
)
def test_fixed_flags_stay_first_and_in_order_whatever_the_options(raw: dict[str, Any]) -> None:
    args = args_for(raw, resume_session_id="abc", usage_file="/tmp/u.json")
    assert args[:7] == ALWAYS


# -- tool scoping and --allow-all -------------------------------------------


@pytest.mark.parametrize("field", SCOPING_FIELDS)
@pytest.mark.parametrize("value", ["shell", ["shell"], ["shell", "write"]])
def test_any_tool_scoping_field_drops_allow_all(field: str, value: Any) -> None:
    assert "--allow-all" not in args_for({field: value})


@pytest.mark.parametrize("field", SCOPING_FIELDS)
@pytest.mark.parametrize("empty", ["", [], [""], None])
def test_empty_tool_scoping_values_count_as_unset(field: str, empty: Any) -> None:
    args = args_for({field: empty})
    assert "--allow-all" in args
    assert not any(arg.startswith(SCOPING_FLAGS) for arg in args)


def test_allow_all_is_present_exactly_once_without_scoping() -> None:
    assert args_for({"model": "m", "agent": "a"}).count("--allow-all") == 1


def test_scopes_tools_property_matches_the_spec_rule() -> None:
    assert not CopilotCliOptions().scopes_tools
    assert not CopilotCliOptions(allowed_tools="", denied_tools=()).scopes_tools
    assert CopilotCliOptions(excluded_tools=("", "x")).scopes_tools


# -- pass-through fields -----------------------------------------------------


@pytest.mark.parametrize(
    ("field", "flag"),
    [
        ("allowed_tools", "--allow-tool"),
        ("denied_tools", "--deny-tool"),
        ("available_tools", "--available-tools"),
        ("excluded_tools", "--excluded-tools"),
    ],
)
@pytest.mark.parametrize(
    ("value", "expected_items"),
    [
        ("shell(git:*)", ["shell(git:*)"]),
        (["shell", "write"], ["shell", "write"]),
        (["-dash-tool"], ["-dash-tool"]),
        (["a", "", "b"], ["a", "b"]),
    ],
)
def test_tool_lists_become_one_flag_equals_value_per_item(
    field: str, flag: str, value: Any, expected_items: list[str]
) -> None:
    args = args_for({field: value})
    produced = [arg for arg in args if arg.startswith(flag)]
    assert produced == [f"{flag}={item}" for item in expected_items]
    assert flag not in args  # never a bare flag with a separate value


def test_all_four_tool_lists_are_emitted_together() -> None:
    args = args_for(
        {
            "allowed_tools": "a",
            "denied_tools": ["d1", "d2"],
            "available_tools": ["v"],
            "excluded_tools": "x",
        }
    )
    assert [a for a in args if "=" in a] == [
        "--allow-tool=a",
        "--deny-tool=d1",
        "--deny-tool=d2",
        "--available-tools=v",
        "--excluded-tools=x",
    ]


def test_model_is_passed_with_its_flag() -> None:
    assert flag_value(args_for({"model": "gpt-4.1"}), "--model") == "gpt-4.1"


def test_no_model_flag_when_model_unset_or_empty() -> None:
    assert "--model" not in args_for()
    assert "--model" not in args_for({"model": ""})


def test_max_autopilot_continues_defaults_to_fifty_not_the_cli_default() -> None:
    assert DEFAULT_MAX_AUTOPILOT_CONTINUES == 50
    assert flag_value(args_for(), "--max-autopilot-continues") == "50"


@pytest.mark.parametrize("value", [0, 1, 100])
def test_max_autopilot_continues_is_passed_as_given(value: int) -> None:
    args = args_for({"max_autopilot_continues": value})
    assert flag_value(args, "--max-autopilot-continues") == str(value)


def test_agent_is_passed_with_its_flag() -> None:
    assert flag_value(args_for({"agent": "coding-agent"}), "--agent") == "coding-agent"
    assert "--agent" not in args_for()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("./mcp-servers.json", "@./mcp-servers.json"),
        ("/abs/mcp.json", "@/abs/mcp.json"),
        ("@/already/prefixed.json", "@/already/prefixed.json"),
        ('{"mcpServers": {}}', '{"mcpServers": {}}'),
        ('  {"mcpServers": {}}', '  {"mcpServers": {}}'),
    ],
)
def test_mcp_config_path_gets_an_at_sign_but_inline_json_and_at_paths_do_not(
    value: str, expected: str
) -> None:
    assert mcp_config_argument(value) == expected
    assert flag_value(args_for({"mcp_config": value}), "--additional-mcp-config") == expected


def test_no_mcp_flag_without_mcp_config() -> None:
    assert "--additional-mcp-config" not in args_for()


@pytest.mark.parametrize(
    ("field", "flag"),
    [
        ("disable_builtin_mcps", "--disable-builtin-mcps"),
        ("no_custom_instructions", "--no-custom-instructions"),
        ("experimental", "--experimental"),
    ],
)
def test_boolean_fields_add_their_flag_only_when_true(field: str, flag: str) -> None:
    assert args_for({field: True}).count(flag) == 1
    assert flag not in args_for({field: False})
    assert flag not in args_for()


def test_spec_example_block_builds_the_expected_arguments() -> None:
    args = args_for(
        {
            "model": "gpt-4.1",
            "max_autopilot_continues": 100,
            "agent": "coding-agent",
            "mcp_config": "./mcp-servers.json",
            "disable_builtin_mcps": True,
        }
    )
    assert args == [
        *ALWAYS,
        "--allow-all",
        "--model",
        "gpt-4.1",
        "--max-autopilot-continues",
        "100",
        "--agent",
        "coding-agent",
        "--additional-mcp-config",
        "@./mcp-servers.json",
        "--disable-builtin-mcps",
    ]


# -- session flags and the usage file --------------------------------------


def test_first_turn_has_neither_resume_nor_continue() -> None:
    args = args_for()
    assert "--resume" not in args
    assert "--continue" not in args


def test_known_session_id_resumes_it() -> None:
    args = args_for(resume_session_id="d28a6049-3cdb")
    assert flag_value(args, "--resume") == "d28a6049-3cdb"
    assert "--continue" not in args


def test_continue_latest_without_an_id_continues() -> None:
    args = args_for(continue_latest=True)
    assert args.count("--continue") == 1
    assert "--resume" not in args


def test_resume_wins_over_continue() -> None:
    args = args_for(resume_session_id="sid", continue_latest=True)
    assert flag_value(args, "--resume") == "sid"
    assert "--continue" not in args


def test_empty_resume_id_falls_back_to_continue() -> None:
    args = args_for(resume_session_id="", continue_latest=True)
    assert "--resume" not in args
    assert "--continue" in args


def test_usage_output_file_is_passed_only_when_given() -> None:
    assert flag_value(args_for(usage_file="/tmp/u.json"), "--usage-output-file") == "/tmp/u.json"
    assert "--usage-output-file" not in args_for()


# -- the prompt is one argv element ----------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        "say hi",
        "quote \"double\" and 'single'",
        "line one\nline two\n",
        "-starts-with-dash",
        "--allow-all",
        "$(rm -rf /) `x` ; | &",
        "",
        "   ",
    ],
)
def test_prompt_stays_a_single_argument_verbatim(prompt: str) -> None:
    args = args_for(prompt=prompt)
    assert args[0] == "-p"
    assert args[1] == prompt
    assert args[2:7] == ALWAYS[2:]


# -- option validation -------------------------------------------------------


@pytest.mark.parametrize("raw", [None, {}])
def test_missing_or_empty_block_gives_the_defaults(raw: dict[str, Any] | None) -> None:
    options = CopilotCliOptions.from_mapping(raw)
    assert options == CopilotCliOptions()
    assert options.max_autopilot_continues == 50
    assert options.model is None
    assert not options.experimental


def test_lists_are_stored_as_tuples() -> None:
    options = CopilotCliOptions.from_mapping({"allowed_tools": ["a", "b"], "denied_tools": "c"})
    assert options.allowed_tools == ("a", "b")
    assert options.denied_tools == "c"


def test_unknown_field_is_rejected_naming_it_and_listing_known_fields() -> None:
    with pytest.raises(ValueError, match="max_autopilot_continue") as info:
        CopilotCliOptions.from_mapping({"max_autopilot_continue": 5})
    message = str(info.value)
    assert "copilot-cli.max_autopilot_continue: unknown field" in message
    for name in KNOWN_FIELDS:
        assert name in message


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"max_autopilot_continues": "5"}, "max_autopilot_continues"),
        ({"max_autopilot_continues": True}, "max_autopilot_continues"),
        ({"max_autopilot_continues": 5.0}, "max_autopilot_continues"),
        ({"experimental": 1}, "experimental"),
        ({"disable_builtin_mcps": "yes"}, "disable_builtin_mcps"),
        ({"no_custom_instructions": 0}, "no_custom_instructions"),
        ({"model": 4.1}, "model"),
        ({"agent": ["a"]}, "agent"),
        ({"mcp_config": {"mcpServers": {}}}, "mcp_config"),
        ({"allowed_tools": [1, 2]}, "allowed_tools"),
        ({"denied_tools": ["ok", None]}, "denied_tools"),
        ({"available_tools": 3}, "available_tools"),
        ({"excluded_tools": [["nested"]]}, "excluded_tools"),
    ],
)
def test_wrong_types_are_rejected_naming_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=rf"copilot-cli\.{field}: expected"):
        CopilotCliOptions.from_mapping(raw)


def test_several_problems_are_reported_in_one_error() -> None:
    with pytest.raises(ValueError, match="; ") as info:
        CopilotCliOptions.from_mapping(
            {"modle": "x", "experimental": "yes", "max_autopilot_continues": "10"}
        )
    message = str(info.value)
    assert "copilot-cli.modle: unknown field" in message
    assert "copilot-cli.experimental: expected a boolean" in message
    assert "copilot-cli.max_autopilot_continues: expected an integer" in message


@pytest.mark.parametrize("value", [-1, -50])
def test_negative_max_autopilot_continues_is_rejected(value: int) -> None:
    with pytest.raises(ValueError, match=r"copilot-cli: max_autopilot_continues must be 0 or more"):
        CopilotCliOptions.from_mapping({"max_autopilot_continues": value})


def test_zero_max_autopilot_continues_is_allowed() -> None:
    options = CopilotCliOptions.from_mapping({"max_autopilot_continues": 0})
    assert options.max_autopilot_continues == 0


def test_a_block_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(ValueError, match="copilot-cli: expected a mapping of options, got list"):
        CopilotCliOptions.from_mapping(["model", "gpt-4.1"])  # type: ignore[arg-type]


# -- properties --------------------------------------------------------------

tool_value = st.one_of(
    st.none(),
    st.text(max_size=8),
    st.lists(st.text(max_size=8), max_size=3),
)


@given(
    prompt=st.text(),
    tools=st.fixed_dictionaries({name: tool_value for name in SCOPING_FIELDS}),
    resume=st.one_of(st.none(), st.text(alphabet="0123456789abcdef-", min_size=1, max_size=8)),
    continue_latest=st.booleans(),
)
def test_prompt_is_argument_two_and_allow_all_iff_no_scoping(
    prompt: str, tools: dict[str, Any], resume: str | None, continue_latest: bool
) -> None:
    args = args_for(tools, prompt=prompt, resume_session_id=resume, continue_latest=continue_latest)
    scoped = any(
        (value != "") if isinstance(value, str) else any(value)
        for value in tools.values()
        if value is not None
    )
    assert args[0] == "-p"
    assert args[1] == prompt
    # args[2:]: the prompt itself may be the text "--allow-all"
    assert ("--allow-all" in args[2:]) is (not scoped)
