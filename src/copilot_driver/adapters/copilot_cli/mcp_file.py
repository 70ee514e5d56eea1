"""The `mcp_config` option checked before a session: the Copilot CLI would only
refuse it once started (`Failed to read MCP config file ...`, `Invalid JSON ...`),
which a run reports as a failed turn after the agent was spawned.
"""

from __future__ import annotations

import json
from pathlib import Path

from copilot_driver.adapters.copilot_cli.options import CopilotCliOptions


def mcp_config_problem(options: CopilotCliOptions, workspace: Path | None) -> str | None:
    """Why the CLI would refuse `mcp_config`, or None. Inline JSON must parse; a path
    (with or without the CLI's `@`) is read where the CLI reads it, relative to the
    workspace it runs in; on an SSH host (`workspace` None) only inline JSON is checked."""
    value = options.mcp_config
    if not value:
        return None
    field = f"{options.block}.mcp_config"
    stripped = value.lstrip()
    if stripped.startswith("{"):
        return _json_problem(stripped, f"{field}: the inline JSON")
    if workspace is None:
        return None
    path = workspace / stripped.removeprefix("@")
    fix = "give a readable JSON file (a relative path is read from the workspace) or inline JSON"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return f"{field}: {path} is not UTF-8 text; {fix}"
    except OSError as exc:
        return f"{field}: cannot read {path} ({exc.strerror or exc}); {fix}"
    return _json_problem(text, f"{field}: {path}")


def _json_problem(text: str, what: str) -> str | None:
    try:
        json.loads(text)
    except ValueError as exc:
        return f"{what} is not valid JSON ({exc}); the Copilot CLI would refuse it"
    return None
