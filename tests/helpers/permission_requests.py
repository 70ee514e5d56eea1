"""The runtime's permission requests of every kind, built from their wire form with the
real request classes of `copilot.session_events`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from copilot.session_events import (
    PermissionRequestCustomTool,
    PermissionRequestExtensionEnvAccess,
    PermissionRequestExtensionManagement,
    PermissionRequestExtensionPermissionAccess,
    PermissionRequestHook,
    PermissionRequestMcp,
    PermissionRequestMemory,
    PermissionRequestRead,
    PermissionRequestShell,
    PermissionRequestUrl,
    PermissionRequestWorkflow,
    PermissionRequestWrite,
)


def shell(
    command: str,
    identifiers: Sequence[str] | None = None,
    commands: Sequence[str] | None = None,
) -> PermissionRequestShell:
    """A shell request; `identifiers` are the runtime's commandSegments (command names)."""
    wire: dict[str, Any] = {
        "kind": "shell",
        "canOfferSessionApproval": False,
        "commands": [{"identifier": c, "readOnly": False} for c in (commands or [command])],
        "fullCommandText": command,
        "hasWriteFileRedirection": False,
        "intention": "run a command",
        "possiblePaths": [],
        "possibleUrls": [],
    }
    if identifiers is not None:
        wire["commandSegments"] = [
            {"fullCommandText": command, "identifier": i} for i in identifiers
        ]
    return PermissionRequestShell.from_dict(wire)


def write(file_name: str = "/work/repo/out.txt") -> PermissionRequestWrite:
    return PermissionRequestWrite.from_dict(
        {
            "kind": "write",
            "canOfferSessionApproval": False,
            "diff": "+hello\n",
            "fileName": file_name,
            "intention": "create a file",
            "newFileContents": "hello\n",
        }
    )


def read(path: str = "/etc/hostname") -> PermissionRequestRead:
    return PermissionRequestRead.from_dict({"kind": "read", "intention": "read", "path": path})


def url(address: str = "https://example.com/page") -> PermissionRequestUrl:
    return PermissionRequestUrl.from_dict({"kind": "url", "intention": "fetch", "url": address})


def custom_tool(name: str = "lookup_weather") -> PermissionRequestCustomTool:
    return PermissionRequestCustomTool.from_dict(
        {
            "kind": "custom-tool",
            "toolName": name,
            "toolDescription": "a tool the SDK defines",
            "args": {"city": "Paris"},
        }
    )


def mcp(server: str = "fake", tool: str = "add", title: str | None = None) -> PermissionRequestMcp:
    """As the Copilot CLI 1.0.102 sends it (measured): `toolName` is the server key, `-`
    and the raw tool name with every character outside [A-Za-z0-9_-] replaced by `-`;
    `toolTitle` is the tool's title, or its raw name when it has none."""
    return PermissionRequestMcp.from_dict(
        {
            "kind": "mcp",
            "serverName": server,
            "toolName": f"{server}-{re.sub(r'[^A-Za-z0-9_-]', '-', tool)}",
            "toolTitle": tool if title is None else title,
            "readOnly": False,
            "args": {"a": 1, "b": 2},
        }
    )


def memory() -> PermissionRequestMemory:
    return PermissionRequestMemory.from_dict(
        {"kind": "memory", "fact": "the repo uses uv", "action": "store", "subject": "tooling"}
    )


def hook() -> PermissionRequestHook:
    return PermissionRequestHook.from_dict(
        {"kind": "hook", "toolName": "bash", "hookMessage": "pre-tool hook", "toolArgs": {}}
    )


def workflow() -> PermissionRequestWorkflow:
    return PermissionRequestWorkflow.from_dict(
        {
            "kind": "workflow",
            "approvalKey": "k",
            "canPersistApproval": False,
            "description": "run a workflow",
            "name": "nightly",
            "operation": "run",
            "phases": [{"title": "build"}],
        }
    )


def extension_management() -> PermissionRequestExtensionManagement:
    return PermissionRequestExtensionManagement.from_dict(
        {"kind": "extension-management", "operation": "install", "extensionName": "ext"}
    )


def extension_permission_access() -> PermissionRequestExtensionPermissionAccess:
    return PermissionRequestExtensionPermissionAccess.from_dict(
        {
            "kind": "extension-permission-access",
            "capabilities": ["shell"],
            "extensionName": "ext",
        }
    )


def extension_env_access() -> PermissionRequestExtensionEnvAccess:
    return PermissionRequestExtensionEnvAccess.from_dict(
        {
            "kind": "extension-env-access",
            "environmentVariables": ["HOME"],
            "extensionName": "ext",
        }
    )


def every_kind() -> list[Any]:
    return [
        shell("rm -rf /", ["rm"]),
        write(),
        read(),
        url(),
        custom_tool(),
        mcp(),
        memory(),
        hook(),
        workflow(),
        extension_management(),
        extension_permission_access(),
        extension_env_access(),
    ]
