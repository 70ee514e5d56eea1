"""Where the allowlist comes from (spec 5.1), resolved before anything runs.

Two inputs, in order of precedence:

- `GH_AW_COPILOT_SDK_PERMISSIONS`: an explicit JSON object
  `{"allowAllTools": bool, "allowedTools": [str, ...]}`. When set it must be
  valid: a policy the user wrote never silently widens to "allow all", so
  invalid JSON, a wrong type or an unknown key is a configuration error.
- `GH_AW_COPILOT_SDK_SERVER_ARGS`: the sidecar's CLI arguments as a JSON
  array (the interoperable input): `--allow-all-tools` anywhere means allow
  all; each `--allow-tool VALUE` (or `--allow-tool=VALUE`) adds VALUE in
  order. Unset, blank, invalid, not an array of strings, or no allow flags:
  no configuration (this mirrors what the sidecar itself was given).

Entries are trimmed; empty and non-string entries are dropped. No
configuration, allow-all, or an empty list all mean: approve every request
(the SDK's approve-all behaviour, spec 5.2 "defer to the SDK default policy").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

EXPLICIT_VARIABLE = "GH_AW_COPILOT_SDK_PERMISSIONS"
SERVER_ARGS_VARIABLE = "GH_AW_COPILOT_SDK_SERVER_ARGS"
_EXPLICIT_KEYS = frozenset({"allowAllTools", "allowedTools"})

Mode = Literal["allow-all", "unrestricted", "scoped"]


@dataclass(frozen=True)
class PermissionConfig:
    allow_all: bool = False
    allowed_tools: tuple[str, ...] = ()
    source: str = "none"
    """The variable it came from, or "none"."""

    @property
    def mode(self) -> Mode:
        if self.allow_all:
            return "allow-all"
        if not self.allowed_tools:
            return "unrestricted"
        return "scoped"

    def describe(self) -> str:
        """The configuration in words, for the start-up log."""
        origin = f" (from {self.source})" if self.source != "none" else ""
        if self.mode == "allow-all":
            return f"allow-all: every tool request is approved{origin}"
        if self.mode == "unrestricted":
            why = "no permission configuration" if self.source == "none" else "an empty allowlist"
            return f"none (unrestricted): {why}, every tool request is approved{origin}"
        count = len(self.allowed_tools)
        rules = ", ".join(self.allowed_tools)
        return f"{count} rule{'s' if count != 1 else ''}: {rules}{origin}"


def resolve_permissions(env: Mapping[str, str]) -> PermissionConfig:
    """The effective configuration; raises ValueError for an invalid explicit one."""
    explicit = env.get(EXPLICIT_VARIABLE)
    if explicit is not None and explicit.strip():
        return parse_explicit(explicit)
    server_args = env.get(SERVER_ARGS_VARIABLE)
    return parse_server_args(server_args) or PermissionConfig()


def parse_explicit(raw: str) -> PermissionConfig:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{EXPLICIT_VARIABLE} is not valid JSON ({error.msg})") from None
    except RecursionError:
        raise ValueError(f"{EXPLICIT_VARIABLE} is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(
            f"{EXPLICIT_VARIABLE} must be a JSON object "
            '{"allowAllTools": bool, "allowedTools": [str, ...]}'
        )
    unknown = sorted(_quoted(key) for key in value if key not in _EXPLICIT_KEYS)
    if unknown:
        shown = ", ".join(unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise ValueError(
            f"{EXPLICIT_VARIABLE} has unknown key(s) {shown}: "
            "only allowAllTools and allowedTools are understood"
        )
    allow_all = value.get("allowAllTools", False)
    if not isinstance(allow_all, bool):
        raise ValueError(f"{EXPLICIT_VARIABLE}: allowAllTools must be true or false")
    tools = value.get("allowedTools", [])
    if not isinstance(tools, list):
        raise ValueError(f"{EXPLICIT_VARIABLE}: allowedTools must be an array of strings")
    return PermissionConfig(allow_all, _normalise(tools), EXPLICIT_VARIABLE)


def parse_server_args(raw: str | None) -> PermissionConfig | None:
    """The allow flags of the sidecar's arguments, or None for "no configuration"."""
    if raw is None or not raw.strip():
        return None
    try:
        args = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return None
    if "--allow-all-tools" in args:
        return PermissionConfig(True, (), SERVER_ARGS_VARIABLE)
    tools: list[Any] = []
    for index, arg in enumerate(args):
        if arg == "--allow-tool" and index + 1 < len(args):
            tools.append(args[index + 1])
        elif arg.startswith("--allow-tool="):
            tools.append(arg.removeprefix("--allow-tool="))
    if not tools:
        return None
    return PermissionConfig(False, _normalise(tools), SERVER_ARGS_VARIABLE)


def server_args_problem(raw: str | None) -> str | None:
    """Why a set GH_AW_COPILOT_SDK_SERVER_ARGS gives no configuration, if it is unreadable.

    Unreadable arguments mean "no configuration" (what the sidecar given them
    would do, and what the reference driver does), which approves every
    request: the driver says so at start rather than widening silently.
    """
    if raw is None or not raw.strip():
        return None
    try:
        args = json.loads(raw)
    except (ValueError, RecursionError):
        return "is not valid JSON"
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return "is not a JSON array of strings"
    return None


def _normalise(tools: list[Any]) -> tuple[str, ...]:
    return tuple(tool.strip() for tool in tools if isinstance(tool, str) and tool.strip())


def _quoted(key: str) -> str:
    """A key as JSON, on one line and bounded (it is echoed in an error)."""
    text = json.dumps(key)
    return text if len(text) <= 40 else text[:36] + '..."'
