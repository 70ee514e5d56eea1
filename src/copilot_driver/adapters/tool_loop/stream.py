"""One streamed chat-completions call: the request, and the answer put back together.

`CompletionAccumulator` (pure) takes the parsed `data:` chunks of one
stream in order and rebuilds the answer: text deltas are concatenated, and
tool-call fragments are gathered by their `index` (the id and the name
arrive once, in the first fragment; the `arguments` JSON arrives in pieces
that are concatenated). `ChatClient` does the I/O: it posts the request
with httpx and reads the Server-Sent Events with httpx-sse, which also
copes with events split at any byte (a multi-byte character across two
network reads included).

How failures are reported (an orchestrator decides on retries from these):

| failure | kind | retryable |
|---|---|---|
| HTTP 408, 409, 429, 5xx | `response_error` | yes |
| any other HTTP status >= 400 (401 bad key, 404 wrong URL or model, ...) | `response_error` | no |
| an error object inside the stream, a body that is not a completion | `response_error` | no |
| no connection within, or no bytes for, `request_timeout_ms` | `response_timeout` | yes |
| connection refused or dropped, a stream cut before its end | `port_exit` | yes |

`port_exit` is the adapters' kind for "the channel to the agent broke":
for a subprocess that is its pipe, here it is the HTTP connection.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse

from copilot_driver.adapters.core.agent_events import TokenUsage, shorten
from copilot_driver.adapters.core.errors import AgentError
from copilot_driver.adapters.core.payload import as_count
from copilot_driver.adapters.tool_loop.options import ToolLoopOptions
from copilot_driver.adapters.tool_loop.tool_calls import TOOL_DEFINITIONS
from copilot_driver.redaction import mask_url_userinfo
from copilot_driver.vocabulary import AdapterErrorKind

log = logging.getLogger(__name__)

Message = dict[str, Any]
TokenCallback = Callable[[str], None]

RETRYABLE_STATUS = frozenset({408, 409, 429})
_ERROR_BODY_LIMIT = 64 * 1024


@dataclass(frozen=True)
class ToolCallRequest:
    """One complete tool call of the model's answer."""

    id: str
    name: str
    arguments: str
    """The raw JSON text, as the model wrote it (it may be invalid)."""


@dataclass(frozen=True)
class Completion:
    """The model's whole answer to one request."""

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: TokenUsage | None = None
    """The token counts of this one call, when the server reported them."""
    finish_reason: str | None = None


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class CompletionAccumulator:
    """Rebuilds one answer from its stream chunks (pure; never raises on odd shapes
    except for an error object the server put in the stream)."""

    model: str = ""
    _text: list[str] = field(default_factory=list)
    _calls: dict[int, _PartialCall] = field(default_factory=dict)
    _usage: TokenUsage | None = None
    _finish_reason: str | None = None

    def feed(self, chunk: Any) -> str:
        """Take one parsed chunk; returns the text it adds ("" when none)."""
        if not isinstance(chunk, Mapping):
            return ""
        error = chunk.get("error")
        if error is not None:
            raise AgentError(
                AdapterErrorKind.RESPONSE_ERROR,
                f"the model server reported an error in the stream: {_error_text(error)}",
                retryable=False,
            )
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        usage = _usage(chunk.get("usage"), self.model)
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return ""
        # Only the first choice is used (`n` is never asked for).
        return "".join(
            self._choice(choice)
            for choice in choices
            if isinstance(choice, Mapping) and choice.get("index", 0) == 0
        )

    def _choice(self, choice: Mapping[str, Any]) -> str:
        """Take the first choice of one chunk; returns the text it adds."""
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            return ""
        content = delta.get("content")
        added = content if isinstance(content, str) else ""
        if added:
            self._text.append(added)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, Mapping):
                    self._tool_call_fragment(call)
        return added

    def _tool_call_fragment(self, call: Mapping[str, Any]) -> None:
        raw_id = call.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        index = call.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            # Some servers send whole calls without an index: place by id, else append.
            known = [i for i, p in self._calls.items() if call_id and p.id == call_id]
            index = known[0] if known else max(self._calls, default=-1) + 1
        partial = self._calls.setdefault(index, _PartialCall())
        if call_id and not partial.id:
            partial.id = call_id
        function = call.get("function")
        if not isinstance(function, Mapping):
            return
        name = function.get("name")
        if isinstance(name, str) and name and not partial.name:
            partial.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments.append(arguments)
        elif isinstance(arguments, Mapping):  # a server that sends an object, not its JSON
            partial.arguments.append(json.dumps(arguments))

    @property
    def finished(self) -> bool:
        return self._finish_reason is not None

    def completion(self) -> Completion:
        """The answer so far; tool calls in index order."""
        calls = tuple(
            ToolCallRequest(id=p.id, name=p.name, arguments="".join(p.arguments))
            for _, p in sorted(self._calls.items())
        )
        return Completion(
            text="".join(self._text),
            tool_calls=calls,
            usage=self._usage,
            finish_reason=self._finish_reason,
        )


def completion_from_json(body: Any, model: str = "") -> Completion:
    """A non-streamed answer (a server that ignored `stream: true`)."""
    if not isinstance(body, Mapping):
        raise AgentError(
            AdapterErrorKind.RESPONSE_ERROR,
            "the model server's answer is not a JSON object",
            retryable=False,
        )
    if body.get("error") is not None:
        raise AgentError(
            AdapterErrorKind.RESPONSE_ERROR,
            f"the model server reported an error: {_error_text(body['error'])}",
            retryable=False,
        )
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(choice, Mapping) or not isinstance(message, Mapping):
        raise AgentError(
            AdapterErrorKind.RESPONSE_ERROR,
            "the model server's answer has no choices[0].message",
            retryable=False,
        )
    accumulator = CompletionAccumulator(model=model)
    delta = {"content": message.get("content"), "tool_calls": message.get("tool_calls")}
    accumulator.feed(
        {
            "model": body.get("model"),
            "usage": body.get("usage"),
            "choices": [{"delta": delta, "finish_reason": choice.get("finish_reason")}],
        }
    )
    return accumulator.completion()


def request_body(options: ToolLoopOptions, messages: Sequence[Message]) -> dict[str, Any]:
    """The request: model, messages, tools, `tool_choice: auto`, streamed."""
    body: dict[str, Any] = {
        "model": options.model,
        "messages": list(messages),
        "tools": TOOL_DEFINITIONS,
        "tool_choice": "auto",
        "stream": True,
        "temperature": options.temperature,
    }
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    if options.request_usage:
        body["stream_options"] = {"include_usage": True}
    return body


def request_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def http_error(status: int, body: bytes, url: str) -> AgentError:
    """An HTTP error answer as an AgentError quoting the server's own message."""
    detail = ""
    try:
        parsed = json.loads(body)
        detail = _error_text(parsed.get("error", parsed) if isinstance(parsed, dict) else parsed)
    except (ValueError, RecursionError):
        detail = body.decode("utf-8", "replace").strip()
    hint = ""
    if status in (401, 403):
        hint = " (check the key in the variable named by api_key_env)"
    elif status == 404:
        hint = " (check base_url and model)"
    message = f"the model server answered HTTP {status} for POST {url}{hint}"
    if detail:
        message += f": {shorten(detail, 300)}"
    retryable = status in RETRYABLE_STATUS or status >= 500
    return AgentError(AdapterErrorKind.RESPONSE_ERROR, message, retryable=retryable)


class ChatClient:
    """Posts chat-completions requests for one turn, on one httpx client."""

    def __init__(
        self, options: ToolLoopOptions, http: httpx.AsyncClient, *, api_key: str | None
    ) -> None:
        self.options = options
        self.http = http
        self._headers = request_headers(api_key)

    async def complete(self, messages: Sequence[Message], on_token: TokenCallback) -> Completion:
        url = self.options.chat_completions_url
        body = request_body(self.options, messages)
        try:
            return await self._post(url, body, on_token)
        except (httpx.DecodingError, SSEError) as exc:  # SSEError is a TransportError: first
            raise AgentError(
                AdapterErrorKind.RESPONSE_ERROR,
                f"the model server's answer could not be read: {exc}",
                retryable=False,
            ) from None
        except httpx.TimeoutException as exc:
            raise AgentError(
                AdapterErrorKind.RESPONSE_TIMEOUT,
                f"the model server at {mask_url_userinfo(self.options.base_url)} "
                "did not answer within "
                f"request_timeout_ms ({self.options.request_timeout_ms} ms): "
                f"{type(exc).__name__}",
            ) from None
        except httpx.TransportError as exc:
            # httpx gives a reset connection no text of its own.
            detail = str(exc) or "the connection was closed or reset before the answer was complete"
            raise AgentError(
                AdapterErrorKind.PORT_EXIT,
                f"the connection to the model server at "
                f"{mask_url_userinfo(self.options.base_url)} failed: "
                f"{type(exc).__name__}: {detail}",
            ) from None

    async def _post(self, url: str, body: dict[str, Any], on_token: TokenCallback) -> Completion:
        async with aconnect_sse(
            self.http, "POST", url, json=body, headers=dict(self._headers)
        ) as source:
            response = source.response
            if response.status_code >= 400:
                raise http_error(response.status_code, await _read_limited(response), url)
            content_type = response.headers.get("content-type", "").partition(";")[0].strip()
            if content_type == "application/json":
                return completion_from_json(
                    _json_or_none(await _read_limited(response, limit=None)), self.options.model
                )
            accumulator = CompletionAccumulator(model=self.options.model)
            done = False
            async for event in source.aiter_sse():
                data = event.data.strip()
                if not data:
                    continue
                if data == "[DONE]":
                    done = True
                    break
                try:
                    chunk = json.loads(data)
                except (ValueError, RecursionError):
                    raise AgentError(
                        AdapterErrorKind.RESPONSE_ERROR,
                        "the model server sent a stream event that is not JSON: "
                        + shorten(data, 200),
                        retryable=False,
                    ) from None
                text = accumulator.feed(chunk)
                if text:
                    on_token(text)
            if not done and not accumulator.finished:
                raise AgentError(
                    AdapterErrorKind.PORT_EXIT,
                    "the model server's stream ended before the answer was complete "
                    "(no finish_reason, no [DONE])",
                )
            return accumulator.completion()


async def _read_limited(response: httpx.Response, limit: int | None = _ERROR_BODY_LIMIT) -> bytes:
    """The body, or its first `limit` bytes (an error page can be any size)."""
    if limit is None:
        return await response.aread()
    data = bytearray()
    async for piece in response.aiter_bytes():
        data += piece
        if len(data) >= limit:
            break
    return bytes(data[:limit])


def _json_or_none(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _usage(raw: Any, model: str) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return TokenUsage(
        input_tokens=as_count(raw.get("prompt_tokens")),
        output_tokens=as_count(raw.get("completion_tokens")),
        cached_input_tokens=as_count(cached),
        model=model,
    )


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        message = error.get("message")
        if isinstance(message, str) and message:
            code = error.get("code") or error.get("type")
            return f"{message} ({code})" if isinstance(code, str) and code else message
        return json.dumps(error)[:300]
    return str(error)[:300]
