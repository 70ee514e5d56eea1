"""One streamed chat-completions call: fragments reassembled, failures classified."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.adapters.core.agent_events import TokenUsage
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.tool_loop.options import ToolLoopOptions
from copilot_driver.adapters.tool_loop.stream import (
    ChatClient,
    Completion,
    CompletionAccumulator,
    ToolCallRequest,
    completion_from_json,
    http_error,
    request_body,
)
from copilot_driver.vocabulary import AdapterErrorKind

BASE_URL = "http://model.test/v1"
OPTIONS = ToolLoopOptions(base_url=BASE_URL, model="gpt-test")


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def call_fragment(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if "name" in fields:
        function["name"] = fields.pop("name")
    return delta(tool_calls=[{"index": index, **fields, "function": function}])


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


USAGE_CHUNK = {
    "choices": [],
    "model": "gpt-test-2024",
    "usage": {
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 100},
    },
}

# The spec's example, plus a second call interleaved with the first and text with
# multi-byte characters: everything a stream may legally do.
CHUNKS: list[dict[str, Any]] = [
    delta(role="assistant", content=""),
    delta(content="Lecture du fichier "),
    delta(content="« main.rs » 🚀"),
    call_fragment(0, "", id="call_abc", type="function", name="read_file"),
    call_fragment(0, '{"path":'),
    call_fragment(1, "", id="call_def", type="function", name="list_directory"),
    call_fragment(0, '"src/main.rs"}'),
    call_fragment(1, "{}"),
    finish("tool_calls"),
    USAGE_CHUNK,
]

EXPECTED = Completion(
    text="Lecture du fichier « main.rs » 🚀",
    tool_calls=(
        ToolCallRequest("call_abc", "read_file", '{"path":"src/main.rs"}'),
        ToolCallRequest("call_def", "list_directory", "{}"),
    ),
    usage=TokenUsage(120, 30, 100, "gpt-test-2024"),
    finish_reason="tool_calls",
)


def sse_body(chunks: Sequence[dict[str, Any]], *, done: bool = True) -> bytes:
    frames = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def pieces(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    """`data` cut at the given offsets (each network read is one piece)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


class Server:
    """An httpx MockTransport answering every POST with a scripted response."""

    def __init__(self, respond: Callable[[httpx.Request], httpx.Response]) -> None:
        self.respond = respond
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.respond(request)

    def client(
        self, *, api_key: str | None = None, options: ToolLoopOptions = OPTIONS
    ) -> ChatClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handler))
        return ChatClient(options, http, api_key=api_key)


def streaming(body_pieces: Sequence[bytes], content_type: str = "text/event-stream") -> Server:
    async def stream() -> AsyncIterator[bytes]:
        for piece in body_pieces:
            yield piece

    return Server(
        lambda request: httpx.Response(
            200, headers={"content-type": content_type}, content=stream()
        )
    )


async def complete(client: ChatClient) -> tuple[Completion, list[str]]:
    tokens: list[str] = []
    async with client.http:
        result = await client.complete([{"role": "user", "content": "hi"}], tokens.append)
    return result, tokens


# -- the accumulator (pure) ---------------------------------------------------


def test_fragments_are_gathered_by_index_and_text_is_concatenated() -> None:
    accumulator = CompletionAccumulator()
    added = [accumulator.feed(chunk) for chunk in CHUNKS]
    assert accumulator.completion() == EXPECTED
    assert "".join(added) == EXPECTED.text


def test_id_and_name_are_taken_once_and_arguments_keep_growing() -> None:
    accumulator = CompletionAccumulator()
    accumulator.feed(call_fragment(0, '{"a"', id="call_1", name="read_file"))
    # A server repeating id and name in later fragments must not change them.
    accumulator.feed(call_fragment(0, ": 1}", id="call_1", name="read_file"))
    assert accumulator.completion().tool_calls == (
        ToolCallRequest("call_1", "read_file", '{"a": 1}'),
    )


def test_calls_come_out_in_index_order_whatever_order_they_arrived_in() -> None:
    accumulator = CompletionAccumulator()
    accumulator.feed(call_fragment(2, "{}", id="c", name="list_directory"))
    accumulator.feed(call_fragment(0, "{}", id="a", name="read_file"))
    assert [c.id for c in accumulator.completion().tool_calls] == ["a", "c"]


def test_whole_calls_without_an_index_are_placed_one_after_another() -> None:
    accumulator = CompletionAccumulator()
    accumulator.feed(
        delta(
            tool_calls=[
                {"id": "a", "function": {"name": "read_file", "arguments": {"path": "x"}}},
                {"id": "b", "function": {"name": "list_directory", "arguments": "{}"}},
            ]
        )
    )
    calls = accumulator.completion().tool_calls
    assert [(c.id, c.name) for c in calls] == [("a", "read_file"), ("b", "list_directory")]
    assert json.loads(calls[0].arguments) == {"path": "x"}


@pytest.mark.parametrize(
    "chunk",
    [None, "text", [], {"choices": "nope"}, {"choices": [None, 3]}, {"choices": [{"delta": 5}]}],
)
def test_odd_chunks_are_ignored(chunk: Any) -> None:
    accumulator = CompletionAccumulator()
    assert accumulator.feed(chunk) == ""
    assert accumulator.completion() == Completion()


def test_only_the_first_choice_is_used() -> None:
    accumulator = CompletionAccumulator()
    accumulator.feed({"choices": [{"index": 1, "delta": {"content": "other"}}]})
    accumulator.feed(delta(content="mine"))
    assert accumulator.completion().text == "mine"


def test_an_error_object_in_the_stream_is_a_response_error() -> None:
    accumulator = CompletionAccumulator()
    with pytest.raises(AgentError) as caught:
        accumulator.feed({"error": {"message": "context too long", "code": "context_length"}})
    assert caught.value.kind is AdapterErrorKind.RESPONSE_ERROR
    assert "context too long (context_length)" in caught.value.message


def test_a_non_streamed_answer_is_read_too() -> None:
    body = {
        "model": "m",
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {"id": "x", "function": {"name": "read_file", "arguments": "{}"}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    completion = completion_from_json(body)
    assert completion.tool_calls == (ToolCallRequest("x", "read_file", "{}"),)
    assert completion.usage == TokenUsage(3, 4, 0, "m")


# -- the request -----------------------------------------------------------------


def test_the_request_is_the_specs_streamed_tool_request() -> None:
    body = request_body(OPTIONS, [{"role": "user", "content": "hi"}])
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["tool_choice"] == "auto"
    assert body["temperature"] == 0.1
    assert body["max_tokens"] == 4096
    assert body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in body["tools"]] == [
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
    ]


def test_optional_request_fields_can_be_left_out() -> None:
    options = ToolLoopOptions(base_url=BASE_URL, model="m", max_tokens=None, request_usage=False)
    body = request_body(options, [])
    assert "max_tokens" not in body
    assert "stream_options" not in body


async def test_the_client_posts_to_chat_completions_with_the_key_as_bearer() -> None:
    server = streaming([sse_body(CHUNKS)])
    await complete(server.client(api_key="sk-test"))
    (request,) = server.requests
    assert request.method == "POST"
    assert str(request.url) == f"{BASE_URL}/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["accept"] == "text/event-stream"
    assert json.loads(request.content)["messages"] == [{"role": "user", "content": "hi"}]


async def test_without_a_key_no_authorization_header_is_sent() -> None:
    server = streaming([sse_body(CHUNKS)])
    await complete(server.client(api_key=None))
    assert "authorization" not in server.requests[0].headers


# -- the stream, split at awkward places ----------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64])
async def test_a_stream_cut_into_tiny_reads_reassembles_the_same_answer(size: int) -> None:
    body = sse_body(CHUNKS)
    server = streaming(pieces(body, range(size, len(body), size)))
    completion, tokens = await complete(server.client())
    assert completion == EXPECTED
    assert "".join(tokens) == EXPECTED.text


@settings(max_examples=60, deadline=None)
@given(data=st.data())
async def test_a_stream_cut_anywhere_reassembles_the_same_answer(data: st.DataObject) -> None:
    body = sse_body(CHUNKS)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    completion, _ = await complete(streaming(pieces(body, cuts)).client())
    assert completion == EXPECTED


async def test_crlf_framed_events_are_read() -> None:
    body = sse_body(CHUNKS).replace(b"\n", b"\r\n")
    completion, _ = await complete(streaming(pieces(body, range(1, len(body), 3))).client())
    assert completion == EXPECTED


async def test_a_stream_ending_with_finish_reason_but_no_done_is_complete() -> None:
    completion, _ = await complete(streaming([sse_body(CHUNKS, done=False)]).client())
    assert completion == EXPECTED


async def test_a_stream_cut_before_its_end_is_a_retryable_port_exit() -> None:
    server = streaming([sse_body(CHUNKS[:5], done=False)])
    with pytest.raises(AgentError) as caught:
        await complete(server.client())
    assert caught.value.kind is AdapterErrorKind.PORT_EXIT
    assert caught.value.retryable


async def test_a_json_answer_to_a_streamed_request_is_accepted() -> None:
    body = json.dumps({"choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}]})
    server = streaming([body.encode()], content_type="application/json")
    completion, _ = await complete(server.client())
    assert completion.text == "plain"


async def test_a_stream_event_that_is_not_json_is_a_response_error() -> None:
    server = streaming([b"data: {not json\n\n"])
    with pytest.raises(AgentError) as caught:
        await complete(server.client())
    assert caught.value.kind is AdapterErrorKind.RESPONSE_ERROR
    assert "not JSON" in caught.value.message


async def test_an_unexpected_content_type_is_a_response_error() -> None:
    server = streaming([b"<html>proxy login</html>"], content_type="text/html")
    with pytest.raises(AgentError) as caught:
        await complete(server.client())
    assert caught.value.kind is AdapterErrorKind.RESPONSE_ERROR
    assert not caught.value.retryable


# -- HTTP and transport failures ---------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "retryable", "hint"),
    [
        (400, False, ""),
        (401, False, "api_key_env"),
        (404, False, "base_url and model"),
        (408, True, ""),
        (429, True, ""),
        (500, True, ""),
        (503, True, ""),
    ],
)
async def test_http_errors_quote_the_server_and_hint_at_the_cause(
    status: int, retryable: bool, hint: str
) -> None:
    payload = {"error": {"message": "the server says why", "type": "some_error"}}
    server = Server(lambda request: httpx.Response(status, json=payload))
    with pytest.raises(AgentError) as caught:
        await complete(server.client())
    error = caught.value
    assert error.kind is AdapterErrorKind.RESPONSE_ERROR
    assert error.retryable is retryable
    assert f"HTTP {status}" in error.message
    assert "the server says why (some_error)" in error.message
    assert hint in error.message


def test_a_non_json_error_body_is_quoted_as_text() -> None:
    error = http_error(502, b"Bad Gateway from the proxy", "http://x/chat/completions")
    assert "Bad Gateway from the proxy" in error.message
    assert error.retryable


@pytest.mark.parametrize(
    ("exception", "kind"),
    [
        (httpx.ConnectTimeout("slow"), AdapterErrorKind.RESPONSE_TIMEOUT),
        (httpx.ReadTimeout("slow"), AdapterErrorKind.RESPONSE_TIMEOUT),
        (httpx.ConnectError("refused"), AdapterErrorKind.PORT_EXIT),
        (httpx.RemoteProtocolError("peer closed"), AdapterErrorKind.PORT_EXIT),
    ],
)
async def test_transport_failures_are_retryable_and_named(
    exception: Exception, kind: AdapterErrorKind
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exception

    with pytest.raises(AgentError) as caught:
        await complete(Server(fail).client())
    assert caught.value.kind is kind
    assert caught.value.retryable
    assert BASE_URL in caught.value.message
