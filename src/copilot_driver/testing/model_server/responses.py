"""The Responses API (what Codex speaks, `wire_api = "responses"`): a
scripted reply as one `response` object, or streamed as typed events from
`response.created` to `response.completed`."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from copilot_driver.testing.model_server import sse
from copilot_driver.testing.script import Reply

_USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


def stream_frames(reply: Reply, model: str, argument_fragments: int) -> Iterator[bytes]:
    """The streamed answer as SSE frames, each `event:` line naming its type;
    JSON goes out as raw UTF-8."""
    return (
        sse.frame(event, ascii_only=False, event=event["type"])
        for event in response_events(reply, model, argument_fragments)
    )


def response_object(
    reply: Reply,
    model: str,
    *,
    response_id: str | None = None,
    created_at: int | None = None,
    status: str = "completed",
    output: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A `response` object: the non-streamed answer, and the payload of the
    stream's `response.created` / `.in_progress` / `.completed` events."""
    done = status == "completed"
    return {
        "id": response_id or f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()) if created_at is None else created_at,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": model,
        "output": _output_items(reply) if output is None else output,
        "usage": _USAGE if done else None,
    }


def response_events(
    reply: Reply, model: str, argument_fragments: int = 1
) -> Iterator[dict[str, Any]]:
    """The streamed response as event payloads, each with `type` and an
    increasing `sequence_number` (the SSE `event:` line repeats `type`)."""
    items = _output_items(reply)
    response_id = f"resp_{uuid.uuid4().hex}"
    created_at = int(time.time())

    def response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return response_object(
            reply,
            model,
            response_id=response_id,
            created_at=created_at,
            status=status,
            output=output,
        )

    def events() -> Iterator[tuple[str, dict[str, Any]]]:
        yield "response.created", {"response": response("in_progress", [])}
        yield "response.in_progress", {"response": response("in_progress", [])}
        for index, item in enumerate(items):
            at = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                part = item["content"][0]
                text = part["text"]
                started = {**item, "status": "in_progress", "content": []}
                yield "response.output_item.added", {"output_index": index, "item": started}
                empty = {**part, "text": ""}
                yield "response.content_part.added", {**at, "content_index": 0, "part": empty}
                delta = {**at, "content_index": 0, "delta": text, "logprobs": []}
                yield "response.output_text.delta", delta
                done = {**at, "content_index": 0, "text": text, "logprobs": []}
                yield "response.output_text.done", done
                yield "response.content_part.done", {**at, "content_index": 0, "part": part}
            else:
                started = {**item, "arguments": "", "status": "in_progress"}
                yield "response.output_item.added", {"output_index": index, "item": started}
                for piece in sse.split(item["arguments"], argument_fragments):
                    yield "response.function_call_arguments.delta", {**at, "delta": piece}
                finished = {**at, "name": item["name"], "arguments": item["arguments"]}
                yield "response.function_call_arguments.done", finished
            yield "response.output_item.done", {"output_index": index, "item": item}
        yield "response.completed", {"response": response("completed", items)}

    for sequence_number, (kind, payload) in enumerate(events()):
        yield {"type": kind, "sequence_number": sequence_number, **payload}


def _output_items(reply: Reply) -> list[dict[str, Any]]:
    """A reply as completed Responses output items: the message (if any)
    first, then one `function_call` per tool call, as the real API orders
    them. A reply with neither still yields an (empty) message, so every
    response has output."""
    token = uuid.uuid4().hex[:16]
    items: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        items.append(
            {
                "type": "message",
                "id": f"msg_{token}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}],
            }
        )
    for index, call in enumerate(reply.tool_calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{token}_{index + 1}",
                "call_id": call.call_id or f"call_{token}_{index + 1}",
                "name": call.name,
                "arguments": call.arguments_json(),
                "status": "completed",
            }
        )
    return items
