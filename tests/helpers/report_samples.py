"""Events files for the run report's tests, and readers of what it renders.

The two files under tests/data were captured from the real runtime (a scripted model,
a real Copilot CLI sidecar, this project's driver); `event` and `bash_call` write the
lines other drivers and crashed runs may leave behind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
TOOLS_AND_DENIAL = DATA / "events-tools-and-denial.jsonl"
GUARD_STOP = DATA / "events-guard-stop.jsonl"
ANSWER = "Git is installed; I was not allowed to remove victim.txt."

CALL_LINE = re.compile(
    r"^ +(?P<at>[+-]\d+\.\d\ds) +(?P<tool>\S+) +(?P<what>.+?) +"
    r"(?P<outcome>ok|DENIED|FAILED|no result)(?: +(?P<ms>\d+) ms)?$"
)
TASK_LINE = re.compile(
    r"^    (?P<label>[^:]+) :(?P<tag>done|crit|active), t(?P<n>\d+), (?P<start>\d+), (?P<end>\d+)$"
)
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def event(event_type: str, data: dict[str, Any], second: float = 0.0) -> str:
    """One events-file line, `second` seconds after 07:35:10 UTC."""
    timestamp = f"2026-11-21T07:35:{10 + second:06.3f}+00:00"
    return json.dumps({"type": event_type, "timestamp": timestamp, "data": data})


def bash_call(call_id: str, command: str, second: float, *, ok: bool = True) -> list[str]:
    return [
        event(
            "tool.execution_start",
            {"toolCallId": call_id, "toolName": "bash", "arguments": {"command": command}},
            second,
        ),
        event("tool.execution_complete", {"toolCallId": call_id, "success": ok}, second + 0.05),
    ]


def call_lines(text: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := CALL_LINE.match(line))]


def mermaid_block(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("```mermaid")
    return lines[start + 1 : lines.index("```", start)]


def table_rows(markdown: str, header: str) -> list[str]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows
