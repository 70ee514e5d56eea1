"""`POST {api}/mcp/readonly`: a minimal stand-in for GitHub's remote MCP
server, spoken over MCP's streamable HTTP transport (one JSON-RPC message
per POST, answered with one JSON body).

CLI 1.0.102 opens it at session creation with `server/discover` (a newer
protocol's handshake, sent with `mcp-method: server/discover`), falls back
to `initialize` (protocol 2025-11-25) when that is refused as an unknown
method, then lists the tools and offers them to the model (as
`github-mcp-server-<tool>`). Like GitHub's server, `tools/list` honours the
`X-MCP-Tools` header (the CLI sends the read-only tools it wants), so of
the tools here the CLI gets `get_file_contents` and `search_repositories`,
not `get_me`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from copilot_driver.testing.github_api.account import LOGIN

SERVER_INFO = {"name": "github-mcp-server", "title": "GitHub MCP Server", "version": "0.30.0"}
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

USER_PROFILE: dict[str, Any] = {
    "login": LOGIN,
    "id": 583231,
    "name": "The Octocat",
    "html_url": f"https://github.com/{LOGIN}",
    "type": "User",
}
REPOSITORIES: dict[str, Any] = {
    "total_count": 1,
    "incomplete_results": False,
    "items": [
        {
            "full_name": f"{LOGIN}/Hello-World",
            "description": "My first repository on GitHub!",
            "html_url": f"https://github.com/{LOGIN}/Hello-World",
            "stargazers_count": 2500,
        }
    ],
}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_me",
        "description": "Get details of the authenticated GitHub user.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"title": "Get my user profile", "readOnlyHint": True},
    },
    {
        "name": "get_file_contents",
        "description": "Get the contents of a file or directory from a GitHub repository.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
                "path": {"type": "string", "description": "Path to file/directory"},
            },
            "required": ["owner", "repo"],
        },
        "annotations": {"title": "Get file or directory contents", "readOnlyHint": True},
    },
    {
        "name": "search_repositories",
        "description": "Search for GitHub repositories.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Search query"}},
            "required": ["query"],
        },
        "annotations": {"title": "Search repositories", "readOnlyHint": True},
    },
]
TOOL_NAMES = tuple(tool["name"] for tool in TOOLS)


@dataclass(frozen=True)
class McpAnswer:
    """The HTTP answer to one MCP message: no payload means 202 Accepted."""

    status: int
    payload: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


FILE_TEXT = "Hello World!\n"


def offered_tools(headers: Mapping[str, str], *, read_only: bool = True) -> list[dict[str, Any]]:
    """The tools `tools/list` gives: those the `x-mcp-tools` header names, or
    all; without their annotations when not `read_only`."""
    wanted = {name.strip() for name in headers.get("x-mcp-tools", "").split(",") if name.strip()}
    tools = [tool for tool in TOOLS if not wanted or tool["name"] in wanted]
    if read_only:
        return tools
    return [{key: value for key, value in tool.items() if key != "annotations"} for tool in tools]


def answer(message: Any, headers: Mapping[str, str], *, read_only: bool = True) -> McpAnswer:
    """The answer to one JSON-RPC message (requests, notifications, responses);
    `headers` are the request's, names lower-cased; `read_only` keeps the
    tools' `readOnlyHint`."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return McpAnswer(HTTPStatus.BAD_REQUEST, _error(None, -32600, "Invalid Request"))
    if "id" not in message or "method" not in message:
        return McpAnswer(HTTPStatus.ACCEPTED)  # a notification, or a response to us
    ident, method = message["id"], message["method"]
    params = _object(message.get("params"))
    if method == "initialize":
        return _initialize(ident, params)
    if method == "ping":
        return McpAnswer(HTTPStatus.OK, _result(ident, {}))
    if method == "tools/list":
        tools = offered_tools(headers, read_only=read_only)
        return McpAnswer(HTTPStatus.OK, _result(ident, {"tools": tools}))
    if method == "tools/call":
        return McpAnswer(HTTPStatus.OK, _call(ident, params))
    return McpAnswer(HTTPStatus.OK, _error(ident, METHOD_NOT_FOUND, f"Method not found: {method}"))


def _initialize(ident: Any, params: dict[str, Any]) -> McpAnswer:
    asked = params.get("protocolVersion")
    version = asked if asked in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[0]
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": SERVER_INFO,
    }
    return McpAnswer(HTTPStatus.OK, _result(ident, result), {"Mcp-Session-Id": str(uuid.uuid4())})


def _call(ident: Any, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    arguments = _object(params.get("arguments"))
    if name == "get_me":
        return _result(ident, _text(USER_PROFILE))
    if name == "get_file_contents":
        return _result(ident, {"content": [{"type": "text", "text": FILE_TEXT}], "isError": False})
    if name == "search_repositories":
        query = arguments.get("query")
        if not isinstance(query, str):
            return _error(ident, INVALID_PARAMS, "missing required parameter: query")
        return _result(ident, _text(REPOSITORIES))
    return _error(ident, INVALID_PARAMS, f"unknown tool {name!r}")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(payload: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(payload)}], "isError": False}


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
