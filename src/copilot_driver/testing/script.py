"""What the scripted model answers, decided from the conversation alone.

A script is a list of rules. Each rule names a trigger (a substring of the
user's prompt) and the replies the model gives, one per model call, while
it works on that prompt. The reply for a request is chosen statelessly:

    step = number of assistant messages after the last user message
           that contains the trigger

so the same script serves many concurrent sessions and a resumed
conversation without any server-side bookkeeping. Past the last reply the
final one repeats, which keeps a runaway agent loop bounded by its text.

The Responses API (what Codex speaks) sends a flat list of `input` items
instead of chat messages. `responses_input_as_messages` rewrites it into
the chat shape, so one rule means the same step on either API: a model
response there is a run of consecutive model-produced items (an assistant
`message`, `function_call`s, `reasoning`, ...), ended by a tool output or
a user/developer message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One function call the model makes.

    `arguments` may be a mapping (sent as JSON) or a raw string, so a test
    can send arguments that are not valid JSON on purpose.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class Reply:
    """One model response: text, tool calls, or both; optionally slow.

    With `http_status` set the model fails instead: the server answers that
    status with an OpenAI-style error body (`text`, when given, is its
    message), so a test can drive a client's real HTTP error handling;
    `retry_after_s` adds a `Retry-After` header to it (clients that honour
    it retry sooner than their own back-off).

    Two fields break the connection itself, on both APIs, streamed or not,
    error bodies included (what a crashed or wedged provider does):

    - `cut_after_bytes=N`: the status line and headers, then the first N
      bytes of the body (0: none; an SSE stream or a JSON body whose
      `Content-Length` promised more), then the socket is reset (RST, not
      an orderly close, so a client cannot mistake it for the end). A body
      shorter than N is sent whole and ends normally.
    - `never_ends=True`: the status line and headers (and the first
      `cut_after_bytes` bytes, when set), then nothing, for as long as the
      server runs; closing the server resets the connection and ends the
      request's thread.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    delay_s: float = 0.0
    http_status: int | None = None
    retry_after_s: int | None = None
    cut_after_bytes: int | None = None
    never_ends: bool = False

    def __post_init__(self) -> None:
        if self.cut_after_bytes is not None and self.cut_after_bytes < 0:
            raise ValueError(f"cut_after_bytes must be 0 or more, not {self.cut_after_bytes}")
        if self.retry_after_s is not None and self.retry_after_s < 0:
            raise ValueError(f"retry_after_s must be 0 or more, not {self.retry_after_s}")

    @property
    def body_limit(self) -> int | None:
        """How many body bytes the server sends before it stops, or None for all."""
        if self.cut_after_bytes is not None:
            return self.cut_after_bytes
        return 0 if self.never_ends else None


@dataclass(frozen=True)
class Rule:
    when: str
    replies: tuple[Reply, ...]


DEFAULT_REPLY = Reply(text="Hello from the scripted model.")


@dataclass(frozen=True)
class Script:
    rules: tuple[Rule, ...] = ()
    default: Reply = DEFAULT_REPLY

    def reply_for(self, messages: Sequence[Mapping[str, Any]]) -> Reply:
        """Pick the reply for a chat-completions `messages` list."""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            text = _content_text(message.get("content"))
            rule = next((r for r in self.rules if r.replies and r.when in text), None)
            if rule is None:
                continue
            step = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
            return rule.replies[min(step, len(rule.replies) - 1)]
        return self.default

    def reply_for_responses(self, input_items: Any) -> Reply:
        """Pick the reply for a Responses API `input` (a string or item list).

        `instructions` play no part, just as a chat system prompt plays none.
        """
        return self.reply_for(responses_input_as_messages(input_items))

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> Script:
        """Build a script from its JSON form (see `docs/testing.md`)."""
        rules = tuple(
            Rule(
                when=str(rule["when"]),
                replies=tuple(_reply_from_dict(r) for r in rule["replies"]),
            )
            for rule in raw.get("rules", ())
        )
        default = _reply_from_dict(raw["default"]) if "default" in raw else DEFAULT_REPLY
        return Script(rules=rules, default=default)


def _reply_from_dict(raw: Mapping[str, Any]) -> Reply:
    calls = tuple(
        ToolCall(
            name=str(call["name"]),
            arguments=call.get("arguments", {}),
            call_id=call.get("id"),
        )
        for call in raw.get("tool_calls", ())
    )
    status = raw.get("http_status")
    retry_after = raw.get("retry_after_s")
    cut = raw.get("cut_after_bytes")
    return Reply(
        text=raw.get("text"),
        tool_calls=calls,
        delay_s=float(raw.get("delay_s", 0.0)),
        http_status=None if status is None else int(status),
        retry_after_s=None if retry_after is None else int(retry_after),
        cut_after_bytes=None if cut is None else int(cut),
        never_ends=_flag(raw.get("never_ends", False), "never_ends"),
    )


def _flag(value: Any, name: str) -> bool:
    """A JSON boolean; anything else is refused rather than read as truthy."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, not {value!r}")
    return value


# Input items the client (not the model) produces besides messages: each
# ends the model response before it, as a chat `tool` message does.
_CLIENT_ITEM_TYPES = frozenset({"mcp_approval_response"})


def responses_input_as_messages(input_items: Any) -> list[dict[str, Any]]:
    """Rewrite a Responses API `input` as chat messages with the same steps.

    A string input is one user message. Messages keep their role and
    content (only user text can trigger a rule). Tool outputs (any
    `*_output` item) become `tool` messages. Each maximal run of
    consecutive model-produced items - an assistant `message`, a
    `function_call`, `reasoning` or any other item - becomes one assistant
    message, because the model emits text, reasoning and parallel calls of
    one response as separate items while chat puts them in one message.
    """
    if isinstance(input_items, str):
        return [{"role": "user", "content": input_items}]
    if not isinstance(input_items, list):
        return []
    messages: list[dict[str, Any]] = []
    in_model_response = False
    for item in input_items:
        if not isinstance(item, Mapping):
            continue
        # An "easy" input message may leave out `"type": "message"`.
        kind = str(item.get("type") or ("message" if "role" in item else ""))
        role = item.get("role")
        if kind == "message" and role != "assistant":
            messages.append({"role": role, "content": item.get("content")})
            in_model_response = False
        elif kind.endswith("_output") or kind in _CLIENT_ITEM_TYPES:
            messages.append({"role": "tool", "content": item.get("output")})
            in_model_response = False
        elif not in_model_response:
            messages.append({"role": "assistant", "content": None})
            in_model_response = True
    return messages


def _content_text(content: Any) -> str:
    """Flatten OpenAI message content (a string or a list of parts) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
