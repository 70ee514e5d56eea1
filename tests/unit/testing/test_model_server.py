"""ScriptedModelServer over real HTTP on 127.0.0.1."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from copilot_driver.testing import model_server
from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

TOOL_ARGS = {"command": "echo hi", "description": "say hi"}
SCRIPT = Script(
    rules=(
        Rule("TEXT", (Reply(text="Plain answer."),)),
        Rule(
            "TOOL",
            (
                Reply(tool_calls=(ToolCall("bash", TOOL_ARGS, call_id="call_fixed"),)),
                Reply(text="Tool done."),
            ),
        ),
        Rule("RAW", (Reply(tool_calls=(ToolCall("bash", "{not json"),)),)),
        Rule("SLOW", (Reply(text="slow answer", delay_s=0.5),)),
        Rule("STUCK", (Reply(text="never", delay_s=60),)),
        Rule(
            "PAIR",
            (Reply(text="pair step 0", delay_s=0.6), Reply(text="pair step 1", delay_s=0.6)),
        ),
    )
)

# Never route these requests through a proxy configured in the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(SCRIPT) as running:
        yield running


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def post(
    server: ScriptedModelServer, path: str, body: Any, timeout: float = 10
) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer test-key"},
        method="POST",
    )
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def get(server: ScriptedModelServer, path: str) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}")
    try:
        with _OPENER.open(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def chat(server: ScriptedModelServer, messages: list[dict[str, Any]], **extra: Any) -> Any:
    status, content_type, body = post(
        server, "/v1/chat/completions", {"model": "gpt-4.1", "messages": messages, **extra}
    )
    assert status == 200
    assert content_type.startswith("application/json")
    return json.loads(body)


def parse_sse(body: bytes) -> list[Any]:
    """The `data:` payloads of an SSE body; the final `[DONE]` kept as a string."""
    events = [block for block in body.decode().split("\n\n") if block.strip()]
    payloads: list[Any] = []
    for event in events:
        assert event.startswith("data: "), event
        data = event.removeprefix("data: ")
        payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


def stream(server: ScriptedModelServer, messages: list[dict[str, Any]]) -> list[Any]:
    status, content_type, body = post(
        server,
        "/v1/chat/completions",
        {
            "model": "gpt-4.1",
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    assert status == 200
    assert content_type.startswith("text/event-stream")
    payloads = parse_sse(body)
    assert payloads[-1] == "[DONE]"
    assert "[DONE]" not in payloads[:-1]
    return payloads[:-1]


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


def test_requests_are_recorded(server: ScriptedModelServer) -> None:
    body = {"model": "gpt-4.1", "messages": [user("TEXT")], "temperature": 0}
    status, _, _ = post(server, "/v1/chat/completions", body)
    assert status == 200
    status, _ = get(server, "/v1/models")
    assert status == 200
    requests = server.requests
    assert [(r.method, r.path) for r in requests] == [
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ]
    assert requests[0].body == body
    assert requests[0].headers.get("Authorization") == "Bearer test-key"
    assert requests[1].body is None
    chat_requests = server.chat_requests()
    assert len(chat_requests) == 1
    assert chat_requests[0].body == body
    # The list is a snapshot: callers cannot corrupt the record.
    server.requests.clear()
    assert len(server.requests) == 2


def test_get_models_answers(server: ScriptedModelServer) -> None:
    status, body = get(server, "/v1/models")
    assert status == 200
    listing = json.loads(body)
    assert listing["object"] == "list"
    assert listing["data"]
    assert all("id" in model for model in listing["data"])


def test_unknown_get_path_is_404(server: ScriptedModelServer) -> None:
    status, _ = get(server, "/v1/unknown")
    assert status == 404


def test_unknown_post_path_is_404(server: ScriptedModelServer) -> None:
    status, _, body = post(server, "/v1/embeddings", {"input": "x"})
    assert status == 404
    assert "error" in json.loads(body)
    assert server.requests[-1].path == "/v1/embeddings"


def test_post_with_a_non_object_body_is_404(server: ScriptedModelServer) -> None:
    status, _, _ = post(server, "/v1/chat/completions", ["not", "an", "object"])
    assert status == 404


def test_binds_loopback_only(server: ScriptedModelServer) -> None:
    assert server._httpd.server_address[0] == "127.0.0.1"
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


def test_scripted_delay_is_honoured(server: ScriptedModelServer) -> None:
    started = time.monotonic()
    completion = chat(server, [user("SLOW")])
    elapsed = time.monotonic() - started
    assert completion["choices"][0]["message"]["content"] == "slow answer"
    assert elapsed >= 0.45


def test_close_during_a_delay_returns_promptly() -> None:
    server = ScriptedModelServer(SCRIPT)
    outcome: list[object] = []

    def slow_request() -> None:
        try:
            outcome.append(
                post(
                    server,
                    "/v1/chat/completions",
                    {"model": "m", "messages": [user("STUCK")]},
                    timeout=30,
                )
            )
        except Exception as error:  # the connection is dropped on close
            outcome.append(error)

    client = threading.Thread(target=slow_request, daemon=True)
    client.start()
    deadline = time.monotonic() + 5
    while not server.chat_requests():
        assert time.monotonic() < deadline, "the request never reached the server"
        time.sleep(0.01)

    started = time.monotonic()
    closer = threading.Thread(target=server.close, daemon=True)
    closer.start()
    closer.join(timeout=5)
    assert not closer.is_alive(), "close() hung while a scripted delay was running"
    assert time.monotonic() - started < 3
    client.join(timeout=5)
    assert not client.is_alive(), "the delayed request was not released by close()"
    assert len(outcome) == 1
    assert not (isinstance(outcome[0], tuple) and outcome[0][0] == 200), (
        "a closing server must not deliver the delayed reply"
    )


def test_concurrent_conversations_each_get_their_own_step(
    server: ScriptedModelServer,
) -> None:
    conversations = {
        "fresh": [user("PAIR")],
        "advanced": [
            user("PAIR"),
            {"role": "assistant", "content": "pair step 0"},
            {"role": "tool", "tool_call_id": "x", "content": "ok"},
        ],
    }
    answers: dict[str, str] = {}
    barrier = threading.Barrier(len(conversations))

    def run(name: str) -> None:
        barrier.wait()
        answers[name] = chat(server, conversations[name])["choices"][0]["message"]["content"]

    threads = [threading.Thread(target=run, args=(name,)) for name in conversations]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    elapsed = time.monotonic() - started
    assert answers == {"fresh": "pair step 0", "advanced": "pair step 1"}
    # Both 0.6 s delays ran side by side rather than one after the other.
    assert elapsed < 1.15


# -- the Responses API (what Codex speaks) -----------------------------------

NON_ASCII_ARGS = '{"cmd": "echo ünï ✓ 日本", "why": "€"}'
R_SCRIPT = Script(
    rules=(
        Rule("TEXT", (Reply(text="Plain answer. ✓"),)),
        Rule(
            "TOOL",
            (
                Reply(tool_calls=(ToolCall("exec_command", TOOL_ARGS, call_id="call_fixed"),)),
                Reply(text="Tool done."),
            ),
        ),
        Rule(
            "BOTH",
            (
                Reply(
                    text="Two calls coming.",
                    tool_calls=(
                        ToolCall("exec_command", TOOL_ARGS, call_id="call_a"),
                        ToolCall("lookup", {"question": "why"}, call_id="call_b"),
                    ),
                ),
            ),
        ),
        Rule(
            "UNICODE",
            (Reply(tool_calls=(ToolCall("exec_command", NON_ASCII_ARGS, call_id="call_u"),)),),
        ),
        Rule("FAIL500", (Reply(http_status=500),)),
        Rule("FAIL429", (Reply(http_status=429, text="Slow down, scripted."),)),
    )
)

TEXT_EVENTS = [
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
]
CALL_EVENTS = [
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
]
CREATED = ["response.created", "response.in_progress"]

Event = tuple[str | None, Any]


@pytest.fixture
def r_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(R_SCRIPT) as running:
        yield running


def r_user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def http_post(server: ScriptedModelServer, path: str, body: Any) -> tuple[int, str, bytes]:
    with httpx.Client(trust_env=False, timeout=10) as client:
        response = client.post(f"http://127.0.0.1:{server.port}{path}", json=body)
        return response.status_code, response.headers.get("content-type", ""), response.content


def sse_events(body: bytes) -> list[Event]:
    """(event name, parsed data) per SSE frame, parsed as the spec says."""
    assert body.endswith(b"\n\n"), "the stream ends with a complete frame"
    events: list[Event] = []
    for frame in body.decode("utf-8").split("\n\n")[:-1]:
        name: str | None = None
        data: list[str] = []
        for line in frame.split("\n"):
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
            else:
                raise AssertionError(f"unexpected SSE line {line!r}")
        text = "\n".join(data)
        events.append((name, text if text == "[DONE]" else json.loads(text)))
    return events


def responses(
    server: ScriptedModelServer, input_items: Any, *, path: str = "/v1/responses", **extra: Any
) -> Any:
    body = {"model": "gpt-5.5", "input": input_items, **extra}
    status, content_type, raw = http_post(server, path, body)
    assert status == 200, raw
    assert content_type.startswith("application/json")
    return json.loads(raw)


def responses_stream(server: ScriptedModelServer, input_items: Any) -> list[Any]:
    body = {"model": "gpt-5.5", "input": input_items, "stream": True, "tools": []}
    status, content_type, data = http_post(server, "/v1/responses", body)
    assert status == 200, data
    assert content_type.startswith("text/event-stream")
    events = sse_events(data)
    for name, payload in events:
        assert name == payload["type"], "the event line names the data's type"
    return [payload for _, payload in events]


def event_types(events: list[Any]) -> list[str]:
    return [event["type"] for event in events]


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
        (Path(__file__).parents[2] / "data/codex-app-server/responses-inputs.json").read_text()
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


@pytest.mark.parametrize("path", ["/responses", "/v1/responses/", "/api/openai/v1/responses"])
def test_responses_route_accepts_any_prefix(r_server: ScriptedModelServer, path: str) -> None:
    assert responses(r_server, "TEXT", path=path)["output"][0]["type"] == "message"


def test_responses_requests_are_recorded(r_server: ScriptedModelServer) -> None:
    body = {"model": "gpt-5.5", "input": "TEXT", "stream": True}
    http_post(r_server, "/v1/responses", body)
    status, _ = get(r_server, "/v1/responses")  # a WebSocket upgrade attempt, say
    assert status == 404
    chat(r_server, [user("TEXT")])
    recorded = r_server.responses_requests()
    assert [(r.method, r.path, r.body) for r in recorded] == [("POST", "/v1/responses", body)]
    assert len(r_server.chat_requests()) == 1
    assert len(r_server.requests) == 3


# -- scripted HTTP errors -----------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("trigger", "status", "kind", "code", "message"),
    [
        ("FAIL500", 500, "server_error", None, "Scripted HTTP 500: Internal Server Error"),
        ("FAIL429", 429, "requests", "rate_limit_exceeded", "Slow down, scripted."),
    ],
)
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_http_status_replies_on_both_apis(
    r_server: ScriptedModelServer,
    api: str,
    trigger: str,
    status: int,
    kind: str,
    code: str | None,
    message: str,
    stream: bool,
) -> None:
    if api == "chat":
        path, body = "/v1/chat/completions", {"messages": [user(trigger)]}
    else:
        path, body = "/v1/responses", {"input": [r_user(trigger)]}
    got_status, content_type, raw = http_post(
        r_server, path, {"model": "m", "stream": stream, **body}
    )
    assert got_status == status
    assert content_type.startswith("application/json")
    assert json.loads(raw) == {
        "error": {"message": message, "type": kind, "param": None, "code": code}
    }


def test_http_status_follows_the_scripted_delay() -> None:
    script = Script(default=Reply(http_status=503, delay_s=0.3))
    with ScriptedModelServer(script) as server:
        started = time.monotonic()
        status, _, raw = http_post(server, "/v1/responses", {"input": "x"})
        assert time.monotonic() - started >= 0.25
    assert status == 503
    assert json.loads(raw)["error"]["type"] == "server_error"


# -- awkward streams ------------------------------------------------------------

_VOLATILE = {"id", "item_id", "created", "created_at"}


def normalized(events: list[Event]) -> list[Event]:
    """Events with the per-request ids and timestamps blanked."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: "*" if k in _VOLATILE else scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return [(name, scrub(data)) for name, data in events]


def raw_stream(server: ScriptedModelServer, api: str, trigger: str) -> bytes:
    if api == "chat":
        path, body = "/v1/chat/completions", {"messages": [user(trigger)]}
    else:
        path, body = "/v1/responses", {"input": [r_user(trigger)]}
    status, content_type, data = http_post(server, path, {"model": "m", "stream": True, **body})
    assert status == 200
    assert content_type.startswith("text/event-stream")
    return data


def tool_arguments(api: str, events: list[Event]) -> dict[int, str]:
    """Each call's arguments, reassembled from the deltas as a client must."""
    arguments: dict[int, str] = {}
    for _, data in events:
        if api == "chat":
            if data == "[DONE]" or not data["choices"]:
                continue
            for delta in data["choices"][0]["delta"].get("tool_calls") or []:
                piece = (delta.get("function") or {}).get("arguments") or ""
                arguments[delta["index"]] = arguments.get(delta["index"], "") + piece
        elif data["type"] == "response.function_call_arguments.delta":
            index = data["output_index"]
            arguments[index] = arguments.get(index, "") + data["delta"]
    return arguments


@pytest.mark.parametrize("chunk_bytes", [1, 7])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_chunked_stream_reassembles_to_the_same_events(
    api: str, chunk_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[bytes] = []
    emit = model_server._ChunkedWriter._emit

    def recording_emit(self: Any, piece: bytes) -> None:
        writes.append(piece)
        emit(self, piece)

    monkeypatch.setattr(model_server._ChunkedWriter, "_emit", recording_emit)
    with ScriptedModelServer(R_SCRIPT) as plain:
        expected = {t: sse_events(raw_stream(plain, api, t)) for t in ("TEXT", "BOTH", "UNICODE")}
    assert not writes, "without chunk_bytes frames are written whole"
    with ScriptedModelServer(R_SCRIPT, chunk_bytes=chunk_bytes) as chunked:
        for trigger, events in expected.items():
            writes.clear()
            body = raw_stream(chunked, api, trigger)
            assert b"".join(writes) == body, "the body is exactly the chunked writes"
            assert all(len(piece) <= chunk_bytes for piece in writes)
            assert len(writes) == -(-len(body) // chunk_bytes)
            assert normalized(sse_events(body)) == normalized(events)
            if trigger == "UNICODE":
                assert tool_arguments(api, sse_events(body)) == {0: NON_ASCII_ARGS}
                # Raw UTF-8 went out; one byte per write splits every character.
                assert "日本".encode() in body
                if chunk_bytes == 1:
                    assert any(not _decodes(piece) for piece in writes)


def _decodes(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_chunked_writer_splits_across_frames_and_flushes_each_piece() -> None:
    class Sink(io.BytesIO):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[str, bytes]] = []

        def write(self, data: Any) -> int:
            self.log.append(("write", bytes(data)))
            return super().write(data)

        def flush(self) -> None:
            self.log.append(("flush", b""))

    sink = Sink()
    writer = model_server._ChunkedWriter(sink, 4)
    writer.write(b"data: 1\n\n")
    writer.write(b"data: \xc3\xbc\n\n")
    writer.finish()
    assert sink.log == [
        ("write", b"data"),
        ("flush", b""),
        ("write", b": 1\n"),
        ("flush", b""),
        ("write", b"\ndat"),
        ("flush", b""),
        ("write", b"a: \xc3"),  # the piece ends inside "ü"
        ("flush", b""),
        ("write", b"\xbc\n\n"),
        ("flush", b""),
        ("flush", b""),
    ]


def test_stream_connections_use_tcp_nodelay(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    init = model_server._ChunkedWriter.__init__

    def spy(self: Any, out: Any, chunk_bytes: int | None) -> None:
        sock = out._sock  # the handler's unbuffered socket writer
        seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        init(self, out, chunk_bytes)

    monkeypatch.setattr(model_server._ChunkedWriter, "__init__", spy)
    with ScriptedModelServer(R_SCRIPT, chunk_bytes=3) as server:
        raw_stream(server, "responses", "TEXT")
    assert seen
    assert all(seen)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_argument_fragments_split_each_call(api: str) -> None:
    with ScriptedModelServer(R_SCRIPT, argument_fragments=3) as server:
        events = sse_events(raw_stream(server, api, "BOTH"))
        unicode_events = sse_events(raw_stream(server, api, "UNICODE"))
    expected_args = json.dumps(TOOL_ARGS), json.dumps({"question": "why"})
    if api == "chat":
        deltas = [
            delta
            for _, data in events
            if data != "[DONE]" and data["choices"]
            for delta in data["choices"][0]["delta"].get("tool_calls") or []
        ]
        assert len(deltas) == 6, "three deltas per call"
        for index, call_id, name in ((0, "call_a", "exec_command"), (1, "call_b", "lookup")):
            first, *rest = [d for d in deltas if d["index"] == index]
            assert first["id"] == call_id
            assert first["type"] == "function"
            assert first["function"]["name"] == name
            assert first["function"]["arguments"]
            assert len(rest) == 2
            for later in rest:
                assert set(later) == {"index", "function"}
                assert set(later["function"]) == {"arguments"}
        assert tool_arguments(api, events) == dict(enumerate(expected_args))
    else:
        payloads = [data for _, data in events]
        for index, arguments in enumerate(expected_args, start=1):
            deltas = [
                p["delta"]
                for p in payloads
                if p["type"] == "response.function_call_arguments.delta"
                and p["output_index"] == index
            ]
            assert len(deltas) == 3
            assert all(deltas), "each piece carries part of the arguments"
            assert "".join(deltas) == arguments
            (done,) = [
                p
                for p in payloads
                if p["type"] == "response.function_call_arguments.done"
                and p["output_index"] == index
            ]
            assert done["arguments"] == arguments
    assert tool_arguments(api, unicode_events) == {0: NON_ASCII_ARGS}


def test_non_ascii_arguments_in_fragments_and_tiny_writes() -> None:
    with ScriptedModelServer(R_SCRIPT, chunk_bytes=1, argument_fragments=5) as server:
        for api in ("chat", "responses"):
            events = sse_events(raw_stream(server, api, "UNICODE"))
            assert tool_arguments(api, events) == {0: NON_ASCII_ARGS}


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


@pytest.mark.parametrize(
    "options", [{"chunk_bytes": 0}, {"chunk_bytes": -1}, {"argument_fragments": 0}]
)
def test_stream_options_are_validated(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ScriptedModelServer(R_SCRIPT, **options)


# -- broken connections: cut bodies and responses that never end -----------------

LONG_TEXT = "partial answer " * 200
"""Long enough that a cut at `CUT` bytes lands inside an event (or a JSON body)."""
CUT = 700


@dataclass
class RawExchange:
    """One request over a bare socket: what came back and how the connection ended."""

    status: int
    headers: dict[str, str]
    body: bytes
    ending: str
    """`reset` (RST), `eof` (orderly close), `complete` (the whole Content-Length
    came; the connection stays open), or `silent` (nothing more within the wait)."""


def raw_exchange(
    server: ScriptedModelServer,
    api: str,
    trigger: str,
    *,
    stream: bool,
    wait_s: float = 5.0,
    keep: list[socket.socket] | None = None,
) -> RawExchange:
    """POST `trigger` and read until the server ends the connection or `wait_s` of silence."""
    if api == "chat":
        path, body = "/v1/chat/completions", {"messages": [user(trigger)]}
    else:
        path, body = "/v1/responses", {"input": [r_user(trigger)]}
    data = json.dumps({"model": "m", "stream": stream, **body}).encode()
    client = socket.create_connection(("127.0.0.1", server.port), timeout=wait_s)
    if keep is not None:
        keep.append(client)
    client.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    received = b""
    try:
        while not _complete(received):
            piece = client.recv(65536)
            if not piece:
                ending = "eof"
                break
            received += piece
        else:
            ending = "complete"
    except ConnectionResetError:
        ending = "reset"
    except TimeoutError:
        ending = "silent"
    finally:
        if keep is None:
            client.close()
    head, _, rest = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawExchange(int(status_line.split()[1]), headers, rest, ending)


def _complete(received: bytes) -> bool:
    """A response whose Content-Length is all there (the connection may stay open)."""
    head, found, body = received.partition(b"\r\n\r\n")
    for line in head.decode("latin-1").split("\r\n")[1:] if found else ():
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            return len(body) >= int(value)
    return False


def _uncut_length(api: str, stream: bool) -> int:
    """How long the same reply's body is when nothing cuts it."""
    script = Script(default=Reply(text=LONG_TEXT))
    with ScriptedModelServer(script) as whole:
        return len(raw_exchange(whole, api, "any", stream=stream).body)


@pytest.fixture
def broken_server() -> Iterator[ScriptedModelServer]:
    script = Script(
        rules=(
            Rule("CUTZERO", (Reply(text=LONG_TEXT, cut_after_bytes=0),)),
            Rule("CUTERROR", (Reply(http_status=500, cut_after_bytes=10),)),
            Rule("CUTLATE", (Reply(text="short", cut_after_bytes=1_000_000),)),
            Rule("CUT", (Reply(text=LONG_TEXT, cut_after_bytes=CUT),)),
            Rule("ENDLESSCHUNK", (Reply(text=LONG_TEXT, never_ends=True, cut_after_bytes=CUT),)),
            Rule("ENDLESS", (Reply(text=LONG_TEXT, never_ends=True),)),
            Rule("RETRYAFTER", (Reply(http_status=429, retry_after_s=3),)),
        )
    )
    with ScriptedModelServer(script) as running:
        yield running


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_cut_body_stops_at_the_byte_and_resets_the_connection(
    broken_server: ScriptedModelServer, api: str, stream: bool
) -> None:
    got = raw_exchange(broken_server, api, "CUT", stream=stream)
    assert got.status == 200
    assert got.ending == "reset", "an abrupt end, not an orderly close"
    assert len(got.body) == CUT
    full = _uncut_length(api, stream)
    assert full > CUT
    if stream:
        assert got.headers["content-type"] == "text/event-stream"
        # The cut falls inside an event: its frame is never terminated.
        assert not got.body.endswith(b"\n\n")
        assert got.body.startswith(b"data: {" if api == "chat" else b"event: response.created")
    else:
        assert got.headers["content-length"] == str(full), "the length promised the whole body"
        assert got.body.startswith(b"{")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_cut_body_fails_a_real_client(
    broken_server: ScriptedModelServer, api: str, stream: bool
) -> None:
    path = "/v1/chat/completions" if api == "chat" else "/v1/responses"
    body: dict[str, Any] = {"model": "m", "stream": stream}
    body.update({"messages": [user("CUT")]} if api == "chat" else {"input": [r_user("CUT")]})
    with (
        httpx.Client(trust_env=False, timeout=10) as client,
        pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)),
    ):
        client.post(f"http://127.0.0.1:{broken_server.port}{path}", json=body).read()


def test_a_cut_at_zero_sends_the_headers_only(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "chat", "CUTZERO", stream=True)
    assert (got.status, got.body, got.ending) == (200, b"", "reset")


def test_an_error_body_can_be_cut_too(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "responses", "CUTERROR", stream=False)
    assert got.status == 500
    assert got.body == b'{"error": '
    assert got.ending == "reset"


@pytest.mark.parametrize("stream", [True, False])
def test_a_cut_past_the_end_sends_the_whole_body_normally(
    broken_server: ScriptedModelServer, stream: bool
) -> None:
    got = raw_exchange(broken_server, "chat", "CUTLATE", stream=stream, wait_s=2)
    if stream:
        assert got.ending == "eof"
        assert got.body.endswith(b"data: [DONE]\n\n")
    else:
        assert got.ending == "complete"
        assert json.loads(got.body)["choices"][0]["message"]["content"] == "short"


def test_a_cut_with_tiny_writes_still_stops_at_the_byte() -> None:
    script = Script(default=Reply(text=LONG_TEXT, cut_after_bytes=CUT))
    with ScriptedModelServer(script, chunk_bytes=7) as server:
        for api in ("chat", "responses"):
            got = raw_exchange(server, api, "any", stream=True)
            assert (len(got.body), got.ending) == (CUT, "reset")


@pytest.mark.parametrize(
    ("trigger", "sent"), [("ENDLESS", 0), ("ENDLESSCHUNK", CUT)], ids=["headers", "first-chunk"]
)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_response_that_never_ends_holds_the_connection_until_close(
    api: str, stream: bool, trigger: str, sent: int
) -> None:
    server = ScriptedModelServer(
        Script(
            rules=(
                Rule(
                    "ENDLESSCHUNK", (Reply(text=LONG_TEXT, never_ends=True, cut_after_bytes=CUT),)
                ),
                Rule("ENDLESS", (Reply(text=LONG_TEXT, never_ends=True),)),
            )
        )
    )
    try:
        held: list[socket.socket] = []
        got = raw_exchange(server, api, trigger, stream=stream, wait_s=0.3, keep=held)
        assert got.status == 200
        assert got.ending == "silent"
        assert len(got.body) == sent
        assert server.active_requests() == 1
        (client,) = held
        started = time.monotonic()
        server.close()
        assert time.monotonic() - started < 2, "close() waited on the endless reply"
        assert server.active_requests() == 0, "the request's thread outlived the server"
        client.settimeout(2)
        with pytest.raises(ConnectionResetError):
            client.recv(65536)
        client.close()
    finally:
        server.close()


def test_close_ends_every_request_thread(broken_server: ScriptedModelServer) -> None:
    """Endless replies and an idle keep-alive connection alike: none outlives close()."""
    before = threading.active_count()
    held: list[socket.socket] = []
    for api in ("chat", "responses"):
        raw_exchange(broken_server, api, "ENDLESS", stream=True, wait_s=0.2, keep=held)
    # A complete non-streamed answer leaves an idle keep-alive connection.
    got = raw_exchange(broken_server, "chat", "CUTLATE", stream=False, keep=held)
    assert got.ending == "complete"
    assert broken_server.active_requests() == 3
    assert threading.active_count() >= before + 3
    broken_server.close()
    assert broken_server.active_requests() == 0
    assert threading.active_count() <= before
    for client in held:
        client.close()


def test_retry_after_is_sent_with_an_error(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "chat", "RETRYAFTER", stream=False)
    assert got.status == 429
    assert got.headers["retry-after"] == "3"
    status, _, raw = http_post(broken_server, "/v1/responses", {"input": "RETRYAFTER"})
    assert status == 429
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"


def test_replies_without_faults_send_no_retry_after(r_server: ScriptedModelServer) -> None:
    got = raw_exchange(r_server, "chat", "FAIL500", stream=False)
    assert got.status == 500
    assert "retry-after" not in got.headers


def test_a_json_script_can_break_connections() -> None:
    raw = {"default": {"text": LONG_TEXT, "cut_after_bytes": CUT}}
    script = Script.from_dict(json.loads(json.dumps(raw)))
    with ScriptedModelServer(script) as server:
        got = raw_exchange(server, "responses", "any", stream=True)
    assert (len(got.body), got.ending) == (CUT, "reset")
