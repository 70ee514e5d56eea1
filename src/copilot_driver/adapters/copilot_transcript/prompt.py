"""The conversation so far, carried inside the prompt of a stateless turn (pure).

Previous conversation:
User: <turn 1>
Assistant: <turn 1 reply>

User: <current message>
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[ -/]*[0-~]"  # other escapes: charset (ESC ( B), save/restore (ESC 7), ...
)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class Exchange:
    user: str
    assistant: str


def build_prompt(history: Sequence[Exchange], message: str) -> str:
    """The transcript header (when there is history) followed by the new message."""
    if not history:
        return message
    lines = ["Previous conversation:"]
    for exchange in history:
        lines += [f"User: {exchange.user}", f"Assistant: {exchange.assistant}"]
    return "\n".join(lines) + f"\n\nUser: {message}"
