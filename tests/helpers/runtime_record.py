"""What the real runtime recorded of a run's permission requests, and what the model was told."""

from __future__ import annotations

from typing import Any

from copilot_driver.testing import ScriptedModelServer


def decisions(events: list[dict[str, Any]]) -> dict[str, str]:
    """toolCallId -> the runtime's record of the answer (`approved`, `denied-...`).

    Each request is answered exactly once, after it was asked, and each tool
    call asked once: the events file shows no lost, doubled or reordered answer.
    """
    asked: dict[str, str] = {}
    answered: dict[str, str] = {}
    for index, record in enumerate(events):
        data = record.get("data") or {}
        if record["type"] == "permission.requested":
            request_id = data["requestId"]
            assert request_id not in asked, f"request {request_id} asked twice"
            asked[request_id] = data["permissionRequest"]["toolCallId"]
        elif record["type"] == "permission.completed":
            request_id = data["requestId"]
            assert request_id in asked, f"event {index}: {request_id} answered before it was asked"
            assert request_id not in answered, f"request {request_id} answered twice"
            answered[request_id] = data["result"]["kind"]
    assert answered.keys() == asked.keys(), f"unanswered: {sorted(asked.keys() - answered)[:5]}"
    found = {asked[request_id]: kind for request_id, kind in answered.items()}
    assert len(found) == len(asked), "a tool call asked more than once"
    return found


def tool_results(model: ScriptedModelServer) -> dict[str, str]:
    """tool_call_id -> what the runtime told the model, from its last request."""
    last = model.chat_requests()[-1]
    return {
        str(message["tool_call_id"]): str(message["content"])
        for message in last.body["messages"]
        if message.get("role") == "tool"
    }
