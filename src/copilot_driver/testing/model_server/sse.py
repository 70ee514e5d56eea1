"""What the two APIs' event streams share: the SSE frame around a JSON
payload, and a string cut into the deltas that stream it."""

from __future__ import annotations

import json
from typing import Any


def frame(payload: Any, *, ascii_only: bool, event: str | None = None) -> bytes:
    """One SSE frame: an optional `event:` line, then `data:` with the payload
    as JSON (non-ASCII escaped, or sent as raw UTF-8)."""
    head = f"event: {event}\n".encode() if event is not None else b""
    return head + b"data: " + json.dumps(payload, ensure_ascii=ascii_only).encode() + b"\n\n"


def split(text: str, pieces: int) -> list[str]:
    """`text` in `pieces` consecutive parts of near-equal length (some may
    be empty when the text is shorter); they join back to `text`."""
    return [text[len(text) * i // pieces : len(text) * (i + 1) // pieces] for i in range(pieces)]
