"""What the scripted model answers, decided from the conversation alone.

A script is a list of rules. Each rule names a trigger (a substring of the
user's prompt) and the replies the model gives, one per model call, while
it works on that prompt. The reply for a request is chosen statelessly:

    step = number of assistant messages after the last user message
           that contains the trigger

so the same script serves many concurrent sessions and a resumed
conversation without any server-side bookkeeping. Past the last reply the
final one repeats, which keeps a runaway agent loop bounded by its text.
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
    """One model response: text, tool calls, or both; optionally slow."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    delay_s: float = 0.0


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
    return Reply(text=raw.get("text"), tool_calls=calls, delay_s=float(raw.get("delay_s", 0.0)))


def _content_text(content: Any) -> str:
    """Flatten OpenAI message content (a string or a list of parts) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
