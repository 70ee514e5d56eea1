"""The size bound of the markdown renderings, and the last-resort cut that keeps it.

GitHub refuses a step summary over 1 MiB (and the job's page gets slow well
before). Every part of the markdown is capped on its own (rows, list items,
free text); `fit` is the guarantee behind those caps, for input no cap foresaw.
"""

from __future__ import annotations

from copilot_driver.formatting import ELLIPSIS, shorten

STEP_SUMMARY_LIMIT = 256 * 1024
"""Bytes of UTF-8: a quarter of what GitHub accepts for one step's summary."""

_FENCE = "```"


def fit(text: str, limit: int) -> str:
    """`text` with lone surrogates (JSON escapes let them in) made `?`, and at most
    `limit` bytes of UTF-8: when longer, cut at a line boundary, a code fence left
    open closed, and a note saying so as the last line."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text.encode("utf-8")) <= limit:
        return text
    note = f"_(This summary was cut here: it is limited to {limit // 1024} KiB.)_\n"
    room = limit - len(note.encode("utf-8")) - len(_FENCE) - 2
    kept: list[str] = []
    used = 0
    in_fence = False
    for line in text.split("\n"):
        size = len(line.encode("utf-8")) + 1
        if used + size > room:
            break
        kept.append(line)
        used += size
        if line.startswith(_FENCE):
            in_fence = not in_fence
    if in_fence:
        kept.append(_FENCE)
    return "\n".join([*kept, "", note])


def clip(text: str, limit: int) -> str:
    """`formatting.shorten` (one line, at most `limit` characters, `...` when cut) in a
    time bounded by `limit`, not by the text: a megabyte-long argument is read only as
    far as a short quote of it needs."""
    window = 4 * limit + 64
    if len(text) <= window:
        return shorten(text, limit)
    return shorten(f"{text[:window]} {ELLIPSIS}", limit)
