"""ScriptedModelServer over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

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
