"""gh-aw's compiler-owned tool contract, `GH_AW_COPILOT_SDK_TOOL_CONFIG`; pure.

    {"version": 1,
     "capabilities": {"bash": true, "edit": false, "webFetch": false,
                      "webSearch": false, "mcp": true, "cliProxy": false},
     "permissions": {"allowedTools": ["github", "read", "shell(git:*)"]},
     "explicitlyDisabledTools": ["edit"],
     "maxToolCalls": 200}

The workflow's compiler derives it from the front matter; the driver checks
it as a whole before any session exists and refuses it, with one line naming
what is wrong, when anything is missing, mistyped or contradictory. A
contract is never repaired or widened: its allowlist is the permission
policy, and its capabilities decide which built-in tools the model sees.
Keys it does not know are tolerated (newer compilers add them); version 2,
the `go-repository` profile, needs a tool this driver does not provide and
is refused, and so is `webSearch: true`, as gh-aw's newer driver refuses it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from copilot_driver.env import TOOL_CONFIG
from copilot_driver.errors import CopilotDriverError
from copilot_driver.json_input import json_object

CAPABILITIES = ("bash", "edit", "webFetch", "webSearch", "mcp", "cliProxy")
"""The six capabilities every version-1 contract states, each a boolean."""

DISABLED_CAPABILITY = {
    "bash": "bash",
    "edit": "edit",
    "web-fetch": "webFetch",
    "web-search": "webSearch",
    "cli-proxy": "cliProxy",
}
"""Front-matter tool names, as `explicitlyDisabledTools` lists them, and the
capability each one turns off."""

NO_NATIVE_WEB_SEARCH = (
    "Copilot native web_search is unavailable in offline BYOK mode; configure an MCP "
    "search server instead"
)
"""gh-aw's reason for refusing `webSearch: true` (its newer driver throws it): gh-aw runs
the CLI in offline BYOK mode, where the CLI's native web tools are off, so a session would
offer a search tool that never works."""

_BUILT_IN_GRANTS = frozenset({"read", "write", "web_fetch", "web_search", "shell", "workflow"})
"""Allowlist entries that name a built-in permission rather than an MCP server."""


ALWAYS_AVAILABLE = (
    "task_complete",
    "exit_plan_mode",
    "task",
    "read_agent",
    "write_agent",
    "list_agents",
    "skill",
    "view",
    "rg",
    "grep",
    "glob",
    "sql",
)
"""Built-in tools every session keeps: the agent's own bookkeeping and read-only search.
(The runtime names its search tool `rg` or `grep` depending on the model; names it does
not offer are ignored.)"""
CAPABILITY_TOOLS = {
    "bash": ("bash", "read_bash", "stop_bash", "list_bash"),
    "edit": ("apply_patch", "edit", "create", "delete", "move"),
    "webFetch": ("web_fetch",),
    "mcp": ("mcp:*",),
    "dynamicWorkflows": ("run_dynamic_workflow", "dynamic_workflows_manage"),
}
"""The built-in tools (and, for `mcp`, every MCP server's tools) each capability makes
visible to the model. `cliProxy` adds none: its commands are reached through bash."""


EXAMPLE = (
    '{"version": 1, "capabilities": {"bash": true, "edit": false, "webFetch": false, '
    '"webSearch": false, "mcp": false, "cliProxy": false}, '
    '"permissions": {"allowedTools": ["read", "shell(git:*)"]}}'
)
"""A complete version-1 contract, shown when the given one is not JSON or not an object."""


class ToolContractError(CopilotDriverError, ValueError):
    """The contract cannot be used; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class ToolContract:
    capabilities: dict[str, bool]
    """The six capabilities, plus `dynamicWorkflows` (false when absent)."""
    allowed_tools: tuple[str, ...]
    explicitly_disabled: tuple[str, ...] = ()
    max_tool_calls: int | None = None
    """The run-wide tool-call budget, when the workflow sets one."""

    def can(self, capability: str) -> bool:
        return self.capabilities.get(capability, False)

    def available_tools(self) -> list[str]:
        """The session's tool allowlist: what the model may see at all."""
        tools = list(ALWAYS_AVAILABLE)
        for capability, names in CAPABILITY_TOOLS.items():
            if self.can(capability):
                tools += names
        if self.can("bash") and self.can("edit"):
            tools.append("write_bash")  # writes to a running shell: needs both
        return tools


def parse_tool_contract(raw: str | None) -> ToolContract | None:
    """The contract, or None when the variable is unset or blank (1.0.2 behaviour).

    Raises ToolContractError for anything else that is not a consistent
    version-1 contract.
    """
    if raw is None or not raw.strip():
        return None
    try:
        value = json_object(raw, "version, capabilities and permissions", EXAMPLE)
    except ValueError as problem:
        raise _error(str(problem)) from None
    _check_version(value)
    contract = ToolContract(
        capabilities=_capabilities(value.get("capabilities")),
        allowed_tools=_allowed_tools(value.get("permissions")),
        explicitly_disabled=_explicitly_disabled(value.get("explicitlyDisabledTools")),
        max_tool_calls=_max_tool_calls(value.get("maxToolCalls")),
    )
    _check_consistency(contract)
    if contract.can("webSearch"):
        raise ToolContractError(
            f"{TOOL_CONFIG.name} turns webSearch on: {NO_NATIVE_WEB_SEARCH} (take "
            "tools.web-search out of the workflow, or give the agent an MCP server that "
            "searches)"
        )
    return contract


def _error(what: str) -> ToolContractError:
    return ToolContractError(
        f"{TOOL_CONFIG.name} {what}; the workflow's compiler writes this contract: "
        "recompile the workflow (gh aw compile) rather than editing it"
    )


def _check_version(value: dict[str, Any]) -> None:
    version = value.get("version")
    if version == 2 and not isinstance(version, bool):
        raise _error(
            "is version 2 (the go-repository profile), which needs a go_repository tool this "
            "driver does not provide: use gh-aw's built-in driver for that profile"
        )
    if version != 1 or isinstance(version, bool):
        raise _error(f"has version {json.dumps(version)[:40]}; this driver reads version 1")
    if "profile" in value:
        raise _error("names a profile, which only version 2 has")


def _capabilities(value: Any) -> dict[str, bool]:
    if not isinstance(value, dict):
        raise _error(f"needs a capabilities object with the booleans {', '.join(CAPABILITIES)}")
    for name in CAPABILITIES:
        if not isinstance(value.get(name), bool):
            raise _error(f"capabilities.{name} must be true or false")
    dynamic = value.get("dynamicWorkflows", False)
    if not isinstance(dynamic, bool):
        raise _error("capabilities.dynamicWorkflows must be true or false")
    return {**{name: value[name] for name in CAPABILITIES}, "dynamicWorkflows": dynamic}


def _allowed_tools(value: Any) -> tuple[str, ...]:
    tools = value.get("allowedTools") if isinstance(value, dict) else None
    if not isinstance(tools, list) or not tools:
        raise _error("needs permissions.allowedTools, a non-empty array of tool rules")
    seen: set[str] = set()
    for index, tool in enumerate(tools, start=1):
        if not isinstance(tool, str) or not tool or tool != tool.strip():
            raise _error(
                f"permissions.allowedTools entry {index} is not a non-empty, trimmed string"
            )
        if tool in seen:
            raise _error(f"permissions.allowedTools lists {tool!r} twice")
        seen.add(tool)
    return tuple(tools)


def _explicitly_disabled(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise _error("explicitlyDisabledTools must be an array of tool names")
    return tuple(value)


def _max_tool_calls(value: Any) -> int | None:
    """A positive whole number, as a JSON number or a string of digits; None when absent."""
    if value is None:
        return None
    number: object = value
    if isinstance(value, str):
        digits = value.strip()
        if digits.isascii() and digits.isdigit() and len(digits) <= 9:
            number = int(digits)
    if isinstance(number, bool) or not isinstance(number, int) or not 0 < number <= 999_999_999:
        raise _error(f"maxToolCalls must be a positive whole number, not {json.dumps(value)[:40]}")
    return number


def _check_consistency(contract: ToolContract) -> None:
    """Each capability agrees with the grants, and nothing disabled is visible."""
    allowed = contract.allowed_tools
    has_shell = any(tool == "shell" or tool.startswith("shell(") for tool in allowed)
    pairs = (
        ("bash", has_shell, "a shell or shell(...) rule"),
        ("edit", "write" in allowed, "write"),
        ("webFetch", "web_fetch" in allowed, "web_fetch"),
        ("webSearch", "web_search" in allowed, "web_search"),
        ("dynamicWorkflows", "workflow" in allowed, "workflow"),
    )
    for capability, granted, grant in pairs:
        if contract.can(capability) != granted:
            state = "on" if contract.can(capability) else "off"
            which = "no" if contract.can(capability) else "a"
            raise _error(f"turns {capability} {state} but grants {which} {grant}")
    mcp_grants = [tool for tool in allowed if _is_mcp_grant(tool)]
    if mcp_grants and not contract.can("mcp"):
        raise _error(f"turns mcp off but grants the MCP rule {mcp_grants[0]!r}")
    if contract.can("cliProxy") and not contract.can("bash"):
        raise _error("turns cliProxy on without bash (the CLI proxy is reached through bash)")
    for name in contract.explicitly_disabled:
        turned_off = DISABLED_CAPABILITY.get(name)
        if turned_off is not None and contract.can(turned_off):
            raise _error(f"disables {name} explicitly but turns {turned_off} on")
        visible = [tool for tool in allowed if tool == name or tool.startswith(f"{name}(")]
        if visible:
            raise _error(f"disables {name} explicitly but grants {visible[0]!r}")


def _is_mcp_grant(tool: str) -> bool:
    """An MCP server rule: anything but a built-in grant or a scoped read/shell rule
    (a scoped `web_fetch(...)` names an MCP tool, so it counts)."""
    if tool in _BUILT_IN_GRANTS:
        return False
    return not tool.startswith(("read(", "shell("))
