"""ScriptedModelServer itself: the request record, loopback, concurrency, the
stream options, and a close() that ends every request thread."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from copilot_driver.testing.model_server import ScriptedModelServer
from helpers.model_server_client import (
    NON_ASCII_ARGS,
    R_SCRIPT,
    SCRIPT,
    TOOL_ARGS,
    chat,
    get,
    http_post,
    post,
    raw_exchange,
    raw_stream,
    sse_events,
    tool_arguments,
    user,
)


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


def test_binds_loopback_only(server: ScriptedModelServer) -> None:
    assert server._httpd.server_address[0] == "127.0.0.1"
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


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


@pytest.mark.parametrize(
    "options", [{"chunk_bytes": 0}, {"chunk_bytes": -1}, {"argument_fragments": 0}]
)
def test_stream_options_are_validated(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ScriptedModelServer(R_SCRIPT, **options)


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
