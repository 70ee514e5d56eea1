"""A minimal stdio MCP server with one tool, `add`, for real `mcp` permission requests.

`python -m copilot_driver.testing.mcp_server` speaks MCP's stdio transport
(newline-delimited JSON-RPC 2.0): `initialize`, `tools/list`, `tools/call`,
`ping`. Configure it as a local MCP server of a session, e.g.

    mcp_servers={"fake": {"type": "local", "command": sys.executable,
                          "args": ["-m", "copilot_driver.testing.mcp_server"],
                          "tools": ["*"]}}

and the runtime offers the model a tool `fake-add`, asks the driver for an
`mcp` permission before each call, and runs it here.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PROTOCOL_VERSION = "2025-06-18"
ADD_TOOL = {
    "name": "add",
    "description": "Add two numbers and return the sum.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one JSON-RPC message (None for notifications)."""
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result: Any = {
            "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "copilot-driver-test-mcp", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [ADD_TOOL]}
    elif method == "tools/call" and params.get("name") == "add":
        arguments = params.get("arguments") or {}
        try:
            total = float(arguments["a"]) + float(arguments["b"])
            text, is_error = f"{total:g}", False
        except (KeyError, TypeError, ValueError):
            text, is_error = "add needs two numbers, a and b", True
        result = {"content": [{"type": "text", "text": text}], "isError": is_error}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            response = handle(message)
            if response is not None:
                sys.stdout.write(json.dumps(response) + "\n")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
