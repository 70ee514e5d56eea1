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
    message), so a test can drive a client's real HTTP error handling.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    delay_s: float = 0.0
    http_status: int | None = None


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
    return Reply(
        text=raw.get("text"),
        tool_calls=calls,
        delay_s=float(raw.get("delay_s", 0.0)),
        http_status=None if status is None else int(status),
    )


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
