"""The Chat Completions API over real HTTP: completions, streamed chunks."""

from __future__ import annotations

import json

from copilot_driver.testing.model_server import ScriptedModelServer
from helpers.model_server_client import (
    TOOL_ARGS,
    chat,
    raw_stream,
    sse_events,
    stream,
    user,
)


def test_non_streaming_text_completion(server: ScriptedModelServer) -> None:
    completion = chat(server, [user("TEXT please")])
    assert completion["object"] == "chat.completion"
    assert completion["model"] == "gpt-4.1"
    (choice,) = completion["choices"]
    assert choice["message"] == {"role": "assistant", "content": "Plain answer."}
    assert choice["finish_reason"] == "stop"
    assert completion["usage"]["total_tokens"] > 0


def test_non_streaming_tool_call_completion(server: ScriptedModelServer) -> None:
    completion = chat(server, [user("run the TOOL")])
    (choice,) = completion["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant"
    (call,) = message["tool_calls"]
    assert call["id"] == "call_fixed"
    assert call["type"] == "function"
    assert call["function"]["name"] == "bash"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == TOOL_ARGS


def test_non_streaming_tool_step_advances_with_the_conversation(
    server: ScriptedModelServer,
) -> None:
    history = [
        user("run the TOOL"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_fixed",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps(TOOL_ARGS)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_fixed", "content": "hi"},
    ]
    completion = chat(server, history)
    assert completion["choices"][0]["message"]["content"] == "Tool done."
    assert completion["choices"][0]["finish_reason"] == "stop"


def test_raw_string_arguments_are_sent_verbatim(server: ScriptedModelServer) -> None:
    completion = chat(server, [user("RAW")])
    (call,) = completion["choices"][0]["message"]["tool_calls"]
    assert call["function"]["arguments"] == "{not json"
    assert call["id"], "a generated id when the script names none"


def test_default_reply_when_nothing_matches(server: ScriptedModelServer) -> None:
    completion = chat(server, [user("unscripted")])
    assert completion["choices"][0]["message"]["content"] == "Hello from the scripted model."


def test_streaming_text(server: ScriptedModelServer) -> None:
    chunks = stream(server, [user("TEXT")])
    choice_chunks = [c for c in chunks if c["choices"]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert choice_chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in choice_chunks)
    assert content == "Plain answer."
    finish = [c["choices"][0]["finish_reason"] for c in choice_chunks]
    assert finish[-1] == "stop"
    assert all(reason is None for reason in finish[:-1])
    usage = [c for c in chunks if c.get("usage")]
    assert len(usage) == 1
    assert usage[0]["choices"] == []
    assert usage[0]["usage"]["total_tokens"] > 0
    assert chunks[-1] is usage[0], "the usage chunk comes last, before [DONE]"


def test_streaming_tool_call(server: ScriptedModelServer) -> None:
    chunks = stream(server, [user("TOOL")])
    choice_chunks = [c for c in chunks if c["choices"]]
    calls: dict[int, dict[str, str]] = {}
    for chunk in choice_chunks:
        for delta in chunk["choices"][0]["delta"].get("tool_calls") or []:
            entry = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
            entry["id"] += delta.get("id") or ""
            function = delta.get("function") or {}
            entry["name"] += function.get("name") or ""
            entry["arguments"] += function.get("arguments") or ""
    assert list(calls) == [0]
    assert calls[0]["id"] == "call_fixed"
    assert calls[0]["name"] == "bash"
    assert json.loads(calls[0]["arguments"]) == TOOL_ARGS
    assert choice_chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert any(c.get("usage") for c in chunks)


def test_default_chat_stream_sends_all_calls_in_one_delta(r_server: ScriptedModelServer) -> None:
    events = sse_events(raw_stream(r_server, "chat", "BOTH"))
    with_calls = [
        data["choices"][0]["delta"]["tool_calls"]
        for _, data in events
        if data != "[DONE]" and data["choices"] and data["choices"][0]["delta"].get("tool_calls")
    ]
    assert len(with_calls) == 1
    assert [call["index"] for call in with_calls[0]] == [0, 1]
    raw = raw_stream(r_server, "chat", "TEXT")
    assert "✓".encode() not in raw, "the default chat stream stays ASCII-escaped"
