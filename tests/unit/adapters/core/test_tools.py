"""ToolRegistry: the dynamic tools the orchestrator offers Codex."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.adapters.core.tools import DynamicTool, ToolOutput, ToolRegistry

FULL_SESSION = (
    Path(__file__).resolve().parents[3]
    / "data"
    / "codex-app-server"
    / "full-session-hi-dynamic-tool-shell.jsonl"
)


async def _answer(arguments: Any) -> ToolOutput:
    return ToolOutput("42")


def _recorded_dynamic_tools() -> list[dict[str, Any]]:
    """`dynamicTools` of the thread/start the real client sent in the full session."""
    for line in FULL_SESSION.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["dir"] == "out" and row["msg"].get("method") == "thread/start":
            tools: list[dict[str, Any]] = row["msg"]["params"]["dynamicTools"]
            return tools
    raise AssertionError("no thread/start in the full-session transcript")


LOOKUP_ANSWER = DynamicTool(
    name="lookup_answer",
    description="Look up the answer to a question. Returns a short string.",
    run=_answer,
    input_schema={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
        "additionalProperties": False,
    },
)


def test_specs_match_the_dynamic_tools_the_real_client_sent() -> None:
    assert ToolRegistry([LOOKUP_ANSWER]).specs() == _recorded_dynamic_tools()


def test_specs_keep_the_registration_order_and_default_schema() -> None:
    first = DynamicTool("b_tool", "second letter", _answer)
    second = DynamicTool("a_tool", "first letter", _answer)
    specs = ToolRegistry([first, second]).specs()
    assert [spec["name"] for spec in specs] == ["b_tool", "a_tool"]
    assert specs[0] == {
        "type": "function",
        "name": "b_tool",
        "description": "second letter",
        "inputSchema": {"type": "object", "properties": {}},
    }
    for spec in specs:
        assert set(spec) == {"type", "name", "description", "inputSchema"}


def test_specs_are_copies_of_the_schema() -> None:
    registry = ToolRegistry([LOOKUP_ANSWER])
    registry.specs()[0]["inputSchema"]["type"] = "mutated"
    assert registry.specs()[0]["inputSchema"]["type"] == "object"
    assert LOOKUP_ANSWER.input_schema["type"] == "object"


def test_the_default_schemas_are_not_shared() -> None:
    one, two = DynamicTool("one", "", _answer), DynamicTool("two", "", _answer)
    assert one.input_schema == two.input_schema
    assert one.input_schema is not two.input_schema


def test_duplicate_names_are_rejected() -> None:
    other = DynamicTool("lookup_answer", "another one", _answer)
    with pytest.raises(ValueError, match="two tools are named 'lookup_answer'"):
        ToolRegistry([LOOKUP_ANSWER, other])


def test_lookup_and_length() -> None:
    registry = ToolRegistry([LOOKUP_ANSWER])
    assert len(registry) == 1
    assert registry.get("lookup_answer") is LOOKUP_ANSWER
    assert registry.get("missing") is None
    empty = ToolRegistry()
    assert len(empty) == 0
    assert empty.specs() == []


async def test_a_tool_runs_to_a_text_output() -> None:
    tool = ToolRegistry([LOOKUP_ANSWER]).get("lookup_answer")
    assert tool is not None
    assert await tool.run({"question": "meaning of life"}) == ToolOutput("42", success=True)


def test_tool_output_defaults_to_success() -> None:
    assert ToolOutput("x").success is True
    assert ToolOutput("x", success=False).success is False
