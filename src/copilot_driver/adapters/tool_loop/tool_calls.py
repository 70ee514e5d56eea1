"""What passes between the round loop and the tools: the four tools' JSON schemas, a call's
JSON arguments read into values, and its result (ToolOutcome) cut to the result limit.

A bad argument raises ToolError, which the toolbox turns into an error result the model
reads (`error: ...`) and can correct itself from. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from copilot_driver.errors import CopilotDriverError

NOTE_RESERVE = 160
"""Room kept for a truncation note, so a cut result still fits its limit."""


@dataclass(frozen=True)
class ToolOutcome:
    result: str
    """What the model receives (already within the size limit)."""
    is_error: bool = False
    modified: str | None = None
    """The project-relative path of a file this call wrote, if any."""


class ToolError(CopilotDriverError):
    """Raised inside a tool; becomes an error result for the model."""


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_PATH = {"type": "string", "description": "A path relative to the project root."}

TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _function(
        "read_file",
        "Read a text file of the project. Returns its lines numbered (`   1<TAB>text`). "
        "Long files are cut; use start_line/end_line to read a range.",
        {
            "path": _PATH,
            "start_line": {"type": "integer", "description": "First line to show (1-based)."},
            "end_line": {"type": "integer", "description": "Last line to show (inclusive)."},
        },
        ["path"],
    ),
    _function(
        "write_file",
        "Write a complete file (a new file or a full rewrite); creates missing directories.",
        {"path": _PATH, "content": {"type": "string", "description": "The whole new content."}},
        ["path", "content"],
    ),
    _function(
        "edit_file",
        "Replace one exact piece of text in a file. old_str must occur exactly once: "
        "include enough surrounding lines to make it unique. No line numbers in old_str.",
        {
            "path": _PATH,
            "old_str": {"type": "string", "description": "The exact text to replace."},
            "new_str": {"type": "string", "description": "The text to put in its place."},
        },
        ["path", "old_str", "new_str"],
    ),
    _function(
        "list_directory",
        "List a directory's immediate children, sorted; directories end with `/`.",
        {"path": {**_PATH, "description": "A directory relative to the project root (. = root)."}},
        [],
    ),
]

TOOL_NAMES = tuple(d["function"]["name"] for d in TOOL_DEFINITIONS)


def truncate(text: str, limit: int) -> str:
    """`text` within `limit` characters: cut, with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - NOTE_RESERVE)
    cut = len(text) - keep
    note = (
        f"\n[truncated: {cut} of {len(text)} characters not shown; "
        f"the tool result limit is {limit} characters]"
    )
    return text[:keep] + note


def parse_arguments(raw: str) -> dict[str, Any]:
    """The model's JSON argument string as an object; ToolError if it is not one."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ToolError(
            f"the arguments are not valid JSON ({exc}); send one JSON object, "
            'e.g. {"path": "README.md"}'
        ) from None
    if not isinstance(value, dict):
        raise ToolError(f"the arguments must be a JSON object, got {type(value).__name__}")
    return value


def path_argument(raw: str) -> str | None:
    """The `path` argument for display (a tool start's summary), if there is one."""
    try:
        value = parse_arguments(raw).get("path")
    except ToolError:
        return None
    return value if isinstance(value, str) else None


def path_value(args: Mapping[str, Any]) -> object:
    if "path" not in args:
        raise ToolError("the path argument is missing")
    return args["path"]


def string_argument(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        what = "missing" if value is None else f"a {type(value).__name__}, not a string"
        raise ToolError(f"the {name} argument is {what}")
    return value


def optional_int(args: Mapping[str, Any], name: str, *, minimum: int) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolError(f"{name} must be an integer of {minimum} or more, got {value!r}")
    return value
