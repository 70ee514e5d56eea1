"""Talking to a ScriptedModelServer in the model server's tests.

The scripts they share (`SCRIPT` for Chat Completions, `R_SCRIPT` for the
Responses API, `LONG_TEXT` / `CUT` for broken connections), requests over
plain HTTP (urllib, httpx) or a bare socket (`raw_exchange`, which also
says how the connection ended), and SSE parsing.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import httpx

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


LONG_TEXT = "partial answer " * 200
"""Long enough that a cut at `CUT` bytes lands inside an event (or a JSON body)."""
CUT = 700


# Never route these requests through a proxy configured in the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def r_user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


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
