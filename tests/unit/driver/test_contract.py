"""gh-aw's tool contract: every rule of its shape and consistency, failing closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.driver.config import ConfigError, load_config
from copilot_driver.permissions.tool_contract import EXAMPLE, ToolContractError, parse_tool_contract

NO_CAPABILITIES = {
    "bash": False,
    "edit": False,
    "webFetch": False,
    "webSearch": False,
    "mcp": False,
    "cliProxy": False,
}


def contract(**overrides: Any) -> dict[str, Any]:
    """A valid contract (read only), changed by `overrides`."""
    value: dict[str, Any] = {
        "version": 1,
        "capabilities": dict(NO_CAPABILITIES),
        "permissions": {"allowedTools": ["read"]},
    }
    value.update(overrides)
    return value


def capabilities(**on: bool) -> dict[str, bool]:
    return {**NO_CAPABILITIES, **on}


def refused(value: Any) -> str:
    raw = value if isinstance(value, str) else json.dumps(value)
    with pytest.raises(ToolContractError) as caught:
        parse_tool_contract(raw)
    message = str(caught.value)
    assert message.startswith("GH_AW_COPILOT_SDK_TOOL_CONFIG ")
    assert "recompile the workflow" in message
    return message


# -- absent, and the shape -------------------------------------------------------------


@pytest.mark.parametrize("raw", [None, "", "  \n"])
def test_an_absent_contract_keeps_the_1_0_2_behaviour(raw: str | None) -> None:
    assert parse_tool_contract(raw) is None


def test_a_valid_contract_is_read_whole() -> None:
    parsed = parse_tool_contract(
        json.dumps(
            contract(
                capabilities=capabilities(bash=True, mcp=True),
                permissions={"allowedTools": ["github", "read", "shell(git:*)"]},
                explicitlyDisabledTools=["edit"],
                maxToolCalls=40,
            )
        )
    )
    assert parsed is not None
    assert parsed.allowed_tools == ("github", "read", "shell(git:*)")
    assert parsed.can("bash")
    assert parsed.can("mcp")
    assert not parsed.can("edit")
    assert not parsed.can("dynamicWorkflows")
    assert parsed.explicitly_disabled == ("edit",)
    assert parsed.max_tool_calls == 40


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{'version': 1}", "is not valid JSON"),
        ('{"version": 1,}', "is not valid JSON"),
        ("[" * 100_000, "nested too deeply"),
        ("[1]", "must be a JSON object"),
        ('"read"', "must be a JSON object"),
    ],
)
def test_unreadable_json_is_refused(raw: str, says: str) -> None:
    assert says in refused(raw)


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"version": 1,}', "line 1 column 15: expected a key in double quotes, found `}`"),
        ("{'version': 1}", "line 1 column 2: expected a key in double quotes, found `'`"),
        ('{"version":\n 1 2}', "line 2 column 4: expected `,` or a closing bracket, found `2`"),
    ],
)
def test_unreadable_json_says_where_and_shows_a_valid_contract(raw: str, where: str) -> None:
    message = refused(raw)
    assert where in message
    assert f"a valid value looks like {EXAMPLE}" in message
    assert parse_tool_contract(EXAMPLE) is not None


# -- version ----------------------------------------------------------------------------


def test_version_2_the_go_repository_profile_is_refused_with_its_reason() -> None:
    message = refused(contract(version=2, profile="go-repository"))
    assert "version 2 (the go-repository profile)" in message
    assert "go_repository tool this driver does not provide" in message


@pytest.mark.parametrize("version", [None, 0, 3, "1", 1.5, True])
def test_other_versions_are_refused(version: Any) -> None:
    value = contract()
    if version is None:
        del value["version"]
    else:
        value["version"] = version
    assert "this driver reads version 1" in refused(value)


def test_a_profile_needs_version_2() -> None:
    assert "names a profile" in refused(contract(profile="go-repository"))


# -- capabilities -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bash", "edit", "webFetch", "webSearch", "mcp", "cliProxy"])
@pytest.mark.parametrize("bad", ["missing", None, "true", 1])
def test_each_of_the_six_capabilities_must_be_a_boolean(name: str, bad: Any) -> None:
    caps: dict[str, Any] = dict(NO_CAPABILITIES)
    if bad == "missing":
        del caps[name]
    else:
        caps[name] = bad
    assert f"capabilities.{name} must be true or false" in refused(contract(capabilities=caps))


def test_capabilities_must_be_an_object() -> None:
    assert "needs a capabilities object" in refused(contract(capabilities=["bash"]))


def test_dynamic_workflows_must_be_a_boolean_when_present() -> None:
    caps: dict[str, Any] = {**NO_CAPABILITIES, "dynamicWorkflows": "yes"}
    assert "dynamicWorkflows must be true or false" in refused(contract(capabilities=caps))


def test_unknown_newer_keys_are_tolerated() -> None:
    value = contract(futureField={"x": 1})
    value["capabilities"]["futureCapability"] = True
    value["permissions"]["futurePermission"] = []
    parsed = parse_tool_contract(json.dumps(value))
    assert parsed is not None
    assert not parsed.can("futureCapability"), "an unknown capability never grants anything"


# -- the allowlist ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("permissions", "says"),
    [
        (None, "non-empty array"),
        ({}, "non-empty array"),
        ({"allowedTools": []}, "non-empty array"),
        ({"allowedTools": "read"}, "non-empty array"),
        ({"allowedTools": ["read", ""]}, "entry 2 is not a non-empty, trimmed string"),
        ({"allowedTools": [" read"]}, "entry 1 is not a non-empty, trimmed string"),
        ({"allowedTools": ["read", 5]}, "entry 2 is not a non-empty, trimmed string"),
        ({"allowedTools": ["read", "read"]}, "lists 'read' twice"),
    ],
)
def test_the_allowlist_is_non_empty_trimmed_and_duplicate_free(permissions: Any, says: str) -> None:
    value = contract()
    if permissions is None:
        del value["permissions"]
    else:
        value["permissions"] = permissions
    assert says in refused(value)


def test_explicitly_disabled_tools_is_a_list_of_names_or_null() -> None:
    parsed = parse_tool_contract(json.dumps(contract(explicitlyDisabledTools=None)))
    assert parsed is not None
    assert parsed.explicitly_disabled == ()
    assert "array of tool names" in refused(contract(explicitlyDisabledTools="bash"))
    assert "array of tool names" in refused(contract(explicitlyDisabledTools=[1]))


# -- consistency ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capability", "grant"),
    [
        ("bash", "shell"),
        ("bash", "shell(git:*)"),
        ("edit", "write"),
        ("webFetch", "web_fetch"),
        ("dynamicWorkflows", "workflow"),
    ],
)
def test_each_capability_and_its_grant_come_together(capability: str, grant: str) -> None:
    both = contract(
        capabilities=capabilities(**{capability: True}),
        permissions={"allowedTools": ["read", grant]},
    )
    assert parse_tool_contract(json.dumps(both)) is not None
    on_without = contract(capabilities=capabilities(**{capability: True}))
    assert f"turns {capability} on but grants no" in refused(on_without)
    off_with = contract(permissions={"allowedTools": ["read", grant]})
    assert f"turns {capability} off but grants a" in refused(off_with)


def test_native_web_search_is_refused_with_gh_aws_reason() -> None:
    """gh-aw runs the CLI in offline BYOK mode, where its native web_search is
    unavailable: gh-aw's newer driver refuses `webSearch: true` with this reason, and so
    does ours (instead of a session whose search tool never appears)."""
    on = contract(
        capabilities=capabilities(webSearch=True),
        permissions={"allowedTools": ["read", "web_search"]},
    )
    with pytest.raises(ToolContractError) as caught:
        parse_tool_contract(json.dumps(on))
    said = str(caught.value)
    assert said.startswith("GH_AW_COPILOT_SDK_TOOL_CONFIG turns webSearch on: ")
    assert "Copilot native web_search is unavailable in offline BYOK mode" in said
    assert "configure an MCP search server instead" in said
    assert "tools.web-search" in said, "the fix names what to take out of the workflow"
    off_with = contract(permissions={"allowedTools": ["read", "web_search"]})
    assert "turns webSearch off but grants a web_search" in refused(off_with)
    on_without = contract(capabilities=capabilities(webSearch=True))
    assert "turns webSearch on but grants no web_search" in refused(on_without)


@pytest.mark.parametrize("grant", ["github", "github(get_me)", "safeoutputs", "web_fetch(x)"])
def test_mcp_off_allows_no_mcp_grant(grant: str) -> None:
    caps = capabilities(webFetch=grant == "web_fetch(x)")
    tools = ["read", grant] + (["web_fetch"] if grant == "web_fetch(x)" else [])
    assert "turns mcp off but grants the MCP rule" in refused(
        contract(capabilities=caps, permissions={"allowedTools": tools})
    )
    on = contract(capabilities={**caps, "mcp": True}, permissions={"allowedTools": tools})
    assert parse_tool_contract(json.dumps(on)) is not None


@pytest.mark.parametrize("grant", ["read", "read(/tmp)", "write", "web_fetch", "shell(ls)"])
def test_built_in_grants_are_not_mcp_grants(grant: str) -> None:
    caps = capabilities(
        edit=grant == "write", webFetch=grant == "web_fetch", bash=grant.startswith("shell")
    )
    tools = list(dict.fromkeys(["read", grant]))
    assert parse_tool_contract(
        json.dumps(contract(capabilities=caps, permissions={"allowedTools": tools}))
    )


def test_cli_proxy_needs_bash() -> None:
    assert "cliProxy on without bash" in refused(contract(capabilities=capabilities(cliProxy=True)))
    with_bash = contract(
        capabilities=capabilities(cliProxy=True, bash=True),
        permissions={"allowedTools": ["read", "shell"]},
    )
    assert parse_tool_contract(json.dumps(with_bash)) is not None


@pytest.mark.parametrize(
    ("disabled", "capability", "grant"),
    [
        ("bash", "bash", "shell"),
        ("edit", "edit", "write"),
        ("web-fetch", "webFetch", "web_fetch"),
        ("web-search", "webSearch", "web_search"),
    ],
)
def test_an_explicitly_disabled_tool_is_never_visible(
    disabled: str, capability: str, grant: str
) -> None:
    value = contract(
        capabilities=capabilities(**{capability: True}),
        permissions={"allowedTools": ["read", grant]},
        explicitlyDisabledTools=[disabled],
    )
    assert f"disables {disabled} explicitly but turns {capability} on" in refused(value)


def test_an_explicitly_disabled_cli_proxy_is_never_visible() -> None:
    value = contract(
        capabilities=capabilities(cliProxy=True, bash=True),
        permissions={"allowedTools": ["read", "shell"]},
        explicitlyDisabledTools=["cli-proxy"],
    )
    assert "disables cli-proxy explicitly but turns cliProxy on" in refused(value)


@pytest.mark.parametrize("grant", ["github", "github(get_me)"])
def test_an_explicitly_disabled_mcp_server_is_never_granted(grant: str) -> None:
    value = contract(
        capabilities=capabilities(mcp=True),
        permissions={"allowedTools": ["read", grant]},
        explicitlyDisabledTools=["github"],
    )
    assert f"disables github explicitly but grants {grant!r}" in refused(value)


# -- the budget -------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "read"), [(1, 1), (200, 200), ("35", 35), (" 7 ", 7)])
def test_max_tool_calls_is_a_positive_whole_number(given: Any, read: int) -> None:
    parsed = parse_tool_contract(json.dumps(contract(maxToolCalls=given)))
    assert parsed is not None
    assert parsed.max_tool_calls == read


@pytest.mark.parametrize("given", [0, -1, 1.5, "1e3", "", "x", True, [5], 10**12])
def test_max_tool_calls_refuses_anything_else(given: Any) -> None:
    assert "maxToolCalls must be a positive whole number" in refused(contract(maxToolCalls=given))


# -- in the configuration -------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    prompt = tmp_path / "prompt.md"
    prompt.write_text("hello", encoding="utf-8")
    return {
        "GH_AW_PROMPT": str(prompt),
        "COPILOT_SDK_URI": "3002",
        "COPILOT_CONNECTION_TOKEN": "t" * 64,
        "COPILOT_MODEL": "gpt-4.1",
        **extra,
    }


def test_the_contract_is_the_policy_and_takes_precedence(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        GH_AW_COPILOT_SDK_TOOL_CONFIG=json.dumps(
            contract(
                capabilities=capabilities(bash=True),
                permissions={"allowedTools": ["read", "shell(git:*)"]},
            )
        ),
        GH_AW_COPILOT_SDK_SERVER_ARGS=json.dumps(
            ["--allow-all-tools", "--deny-tool", "shell(git push)"]
        ),
    )
    config = load_config(env, cwd=tmp_path)
    assert config.tool_contract is not None
    permissions = config.permissions
    assert permissions.mode == "scoped"
    assert permissions.allowed_tools == ("read", "shell(git:*)")
    assert permissions.source == "GH_AW_COPILOT_SDK_TOOL_CONFIG"
    assert permissions.denied_tools == ("shell(git push)",), "deny rules still narrow it"


def test_a_broken_contract_is_a_configuration_error_never_a_wider_policy(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        GH_AW_COPILOT_SDK_TOOL_CONFIG='{"version": 1}',
        GH_AW_COPILOT_SDK_SERVER_ARGS='["--allow-all-tools"]',
    )
    with pytest.raises(ConfigError) as caught:
        load_config(env, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert problem.startswith("GH_AW_COPILOT_SDK_TOOL_CONFIG needs a capabilities object")


# -- what the model may see -------------------------------------------------------------


def _tools(**on: bool) -> list[str]:
    tools = ["read"]
    grants = {"bash": "shell", "edit": "write", "webFetch": "web_fetch", "webSearch": "web_search"}
    tools += [grants[name] for name, value in on.items() if value and name in grants]
    if on.get("mcp"):
        tools.append("github")
    parsed = parse_tool_contract(
        json.dumps(contract(capabilities=capabilities(**on), permissions={"allowedTools": tools}))
    )
    assert parsed is not None
    return parsed.available_tools()


def test_a_read_only_contract_shows_only_the_agent_and_search_tools() -> None:
    tools = _tools()
    assert {"view", "glob", "grep", "rg", "task", "skill"} <= set(tools)
    assert not {"bash", "edit", "create", "apply_patch", "web_fetch", "mcp:*"} & set(tools)


@pytest.mark.parametrize(
    ("capability", "shown"),
    [
        ("bash", {"bash", "read_bash", "stop_bash", "list_bash"}),
        ("edit", {"apply_patch", "edit", "create", "delete", "move"}),
        ("webFetch", {"web_fetch"}),
        ("mcp", {"mcp:*"}),
    ],
)
def test_each_capability_shows_its_tools(capability: str, shown: set[str]) -> None:
    assert shown <= set(_tools(**{capability: True}))
    assert not shown & set(_tools())
    assert "write_bash" not in _tools(**{capability: True})


def test_writing_to_a_shell_needs_both_bash_and_edit() -> None:
    assert "write_bash" in _tools(bash=True, edit=True)
