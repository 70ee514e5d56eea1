"""The Responses API (what Codex speaks) over real HTTP: response objects, typed events."""

from __future__ import annotations

import json
from pathlib import Path

from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall
from helpers.model_server_client import (
    CALL_EVENTS,
    CREATED,
    TEXT_EVENTS,
    TOOL_ARGS,
    event_types,
    r_user,
    responses,
    responses_stream,
)


def test_responses_non_streaming_text(r_server: ScriptedModelServer) -> None:
    response = responses(r_server, [r_user("TEXT please")])
    assert response["object"] == "response"
    assert response["id"].startswith("resp_")
    assert response["status"] == "completed"
    assert response["model"] == "gpt-5.5"
    (item,) = response["output"]
    assert item["type"] == "message"
    assert item["id"].startswith("msg_")
    assert item["role"] == "assistant"
    assert item["status"] == "completed"
    assert item["content"] == [
        {"type": "output_text", "text": "Plain answer. ✓", "annotations": []}
    ]
    usage = response["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert usage["input_tokens_details"]["cached_tokens"] == 0
    assert usage["output_tokens_details"]["reasoning_tokens"] == 0


def test_responses_non_streaming_tool_call(r_server: ScriptedModelServer) -> None:
    (call,) = responses(r_server, [r_user("run the TOOL")])["output"]
    assert call["type"] == "function_call"
    assert call["id"].startswith("fc_")
    assert call["call_id"] == "call_fixed"
    assert call["name"] == "exec_command"
    assert call["status"] == "completed"
    assert isinstance(call["arguments"], str)
    assert json.loads(call["arguments"]) == TOOL_ARGS


def test_responses_non_streaming_text_and_tool_calls(r_server: ScriptedModelServer) -> None:
    output = responses(r_server, "BOTH")["output"]
    assert [item["type"] for item in output] == ["message", "function_call", "function_call"]
    assert output[0]["content"][0]["text"] == "Two calls coming."
    assert [item["call_id"] for item in output[1:]] == ["call_a", "call_b"]
    assert len({item["id"] for item in output}) == 3, "item ids are distinct"
    assert json.loads(output[2]["arguments"]) == {"question": "why"}


def test_responses_streaming_text(r_server: ScriptedModelServer) -> None:
    events = responses_stream(r_server, [r_user("TEXT")])
    assert event_types(events) == [*CREATED, *TEXT_EVENTS, "response.completed"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    created, in_progress = events[0]["response"], events[1]["response"]
    assert created["status"] == in_progress["status"] == "in_progress"
    assert created["output"] == []
    added, part_added, delta, text_done, part_done, item_done = events[2:8]
    assert added["output_index"] == 0
    assert added["item"]["status"] == "in_progress"
    assert added["item"]["content"] == []
    item_id = added["item"]["id"]
    for event in (part_added, delta, text_done, part_done):
        assert event["item_id"] == item_id
        assert event["output_index"] == 0
        assert event["content_index"] == 0
    assert part_added["part"] == {"type": "output_text", "text": "", "annotations": []}
    assert delta["delta"] == text_done["text"] == "Plain answer. ✓"
    assert part_done["part"]["text"] == "Plain answer. ✓"
    assert item_done["item"] == {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Plain answer. ✓", "annotations": []}],
    }
    completed = events[-1]["response"]
    assert completed["id"] == created["id"]
    assert completed["status"] == "completed"
    assert completed["output"] == [item_done["item"]]
    assert completed["usage"]["total_tokens"] > 0
    assert set(completed["usage"]) >= {
        "input_tokens",
        "input_tokens_details",
        "output_tokens",
        "output_tokens_details",
        "total_tokens",
    }


def test_responses_streaming_tool_call(r_server: ScriptedModelServer) -> None:
    events = responses_stream(r_server, [r_user("TOOL")])
    assert event_types(events) == [*CREATED, *CALL_EVENTS, "response.completed"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    added, delta, args_done, item_done = events[2:6]
    assert added["item"]["type"] == "function_call"
    assert added["item"]["arguments"] == ""
    assert added["item"]["status"] == "in_progress"
    assert added["item"]["call_id"] == "call_fixed"
    assert added["item"]["name"] == "exec_command"
    item_id = added["item"]["id"]
    assert delta["item_id"] == args_done["item_id"] == item_id
    assert json.loads(delta["delta"]) == TOOL_ARGS
    assert args_done["arguments"] == delta["delta"]
    assert item_done["item"] == {
        "type": "function_call",
        "id": item_id,
        "call_id": "call_fixed",
        "name": "exec_command",
        "arguments": args_done["arguments"],
        "status": "completed",
    }
    assert events[-1]["response"]["output"] == [item_done["item"]]


def test_responses_streaming_text_and_tool_calls(r_server: ScriptedModelServer) -> None:
    events = responses_stream(r_server, [r_user("BOTH")])
    expected = [*CREATED, *TEXT_EVENTS, *CALL_EVENTS, *CALL_EVENTS, "response.completed"]
    assert event_types(events) == expected
    sequence = [e["sequence_number"] for e in events]
    assert sequence == list(range(len(events)))
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert [e["output_index"] for e in done] == [0, 1, 2]
    assert [e["item"]["type"] for e in done] == ["message", "function_call", "function_call"]
    for event in events[2:-1]:
        index = event["output_index"]
        item_id = event["item"]["id"] if "item" in event else event["item_id"]
        assert item_id == done[index]["item"]["id"]
    assert events[-1]["response"]["output"] == [e["item"] for e in done]


def test_responses_step_is_stateless_across_function_call_output(
    r_server: ScriptedModelServer,
) -> None:
    first = responses(r_server, [r_user("TOOL")])["output"]
    history = [
        r_user("TOOL"),
        *first,
        {"type": "function_call_output", "call_id": "call_fixed", "output": "hi"},
    ]
    assert responses(r_server, history)["output"][0]["content"][0]["text"] == "Tool done."
    # Re-sending the shorter conversation gives the first reply again.
    assert responses(r_server, [r_user("TOOL")])["output"][0]["type"] == "function_call"
    events = responses_stream(r_server, history)
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "Tool done."


def test_responses_real_codex_request_is_answered(r_server: ScriptedModelServer) -> None:
    # The input Codex 0.169 really sent after running its shell call.
    inputs = json.loads(
        (Path(__file__).parents[3] / "data/codex-app-server/responses-inputs.json").read_text()
    )["inputs"]
    r_server.script = Script(
        rules=(
            Rule("RUNSHELL", (Reply(tool_calls=(ToolCall("exec_command"),)), Reply(text="ran"))),
        )
    )
    events = responses_stream(r_server, inputs["runshell_after_tool_output"]["input"])
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "ran"


def test_responses_instructions_are_not_matched(r_server: ScriptedModelServer) -> None:
    response = responses(r_server, [r_user("hello")], instructions="TEXT TOOL BOTH")
    assert response["output"][0]["content"][0]["text"] == "Hello from the scripted model."
