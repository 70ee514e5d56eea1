"""The Chat Completions API (what the Copilot runtime speaks): a scripted
reply as one `chat.completion`, or streamed as `chat.completion.chunk`
frames ending in `data: [DONE]`."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

from copilot_driver.testing.model_server import sse
from copilot_driver.testing.script import Reply

_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def completion(reply: Reply, model: str) -> dict[str, Any]:
    """The non-streamed answer."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls_payload(reply, with_index=False)
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _USAGE,
    }


def stream_frames(
    reply: Reply, model: str, argument_fragments: int, *, ascii_only: bool
) -> Iterator[bytes]:
    """The streamed answer as SSE frames, `data: [DONE]` last."""
    frames = (
        sse.frame(chunk, ascii_only=ascii_only)
        for chunk in stream_chunks(reply, model, argument_fragments)
    )
    return itertools.chain(frames, [b"data: [DONE]\n\n"])


def stream_chunks(
    reply: Reply, model: str, argument_fragments: int = 1
) -> Iterator[dict[str, Any]]:
    """The streamed answer's chunks: the role, the text, the tool calls (the
    arguments in `argument_fragments` deltas each), the finish reason, then
    the usage."""
    base = {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    if reply.text:
        yield chunk({"content": reply.text})
    calls = _tool_calls_payload(reply, with_index=True)
    if calls and argument_fragments == 1:
        yield chunk({"tool_calls": calls})
    else:
        # As real servers stream calls: the first delta names the call, the
        # later ones carry only its index and more of the arguments.
        for call in calls:
            first, *rest = sse.split(call["function"]["arguments"], argument_fragments)
            header = {**call, "function": {"name": call["function"]["name"], "arguments": first}}
            yield chunk({"tool_calls": [header]})
            for piece in rest:
                more = {"index": call["index"], "function": {"arguments": piece}}
                yield chunk({"tool_calls": [more]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield {**base, "choices": [], "usage": _USAGE}


def _tool_calls_payload(reply: Reply, *, with_index: bool) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(reply.tool_calls):
        item: dict[str, Any] = {
            "id": call.call_id or f"call_{index + 1}_{int(time.time() * 1000)}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json()},
        }
        if with_index:
            item["index"] = index
        calls.append(item)
    return calls
