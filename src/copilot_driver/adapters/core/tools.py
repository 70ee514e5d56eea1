"""Tools the orchestrator offers to an agent (Codex's dynamic tools).

A tool is a name, a description, a JSON schema for its arguments, and an
async function from the arguments to a text result. Failures are results
too (`success=False`): the agent sees them and can recover.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolOutput:
    text: str
    success: bool = True


ToolFunction = Callable[[Any], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class DynamicTool:
    name: str
    description: str
    run: ToolFunction
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


class ToolRegistry:
    def __init__(self, tools: Sequence[DynamicTool] = ()) -> None:
        self._tools: dict[str, DynamicTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> DynamicTool | None:
        return self._tools.get(name)

    def specs(self) -> list[dict[str, Any]]:
        """The tools as Codex's `thread/start` `dynamicTools` expects them."""
        return [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "inputSchema": dict(tool.input_schema),
            }
            for tool in self._tools.values()
        ]
