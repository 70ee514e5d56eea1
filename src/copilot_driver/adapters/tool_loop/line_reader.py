"""read_file's view of a text file: its lines numbered, paged by line range and cut at the
result limit with a note saying which `start_line` reads on.

The file is streamed: a line shows at most MAX_LINE_CHARS characters and the rest is
counted in chunks, never held (`[line truncated: N more characters]`), so a
multi-gigabyte minified line costs no memory. A file with a NUL in its first bytes is
refused as binary.
"""

from __future__ import annotations

import io
import os

from copilot_driver.adapters.tool_loop.tool_calls import NOTE_RESERVE, ToolError, ToolOutcome

_BINARY_SNIFF_BYTES = 8192
MAX_LINE_CHARS = 4_000
"""read_file shows at most this many characters of one line (the rest is counted, not kept)."""
_READ_CHUNK = 64 * 1024
"""How much of an over-long line read_file holds at a time while counting the rest."""


def numbered_lines(fd: int, shown: str, start: int, end: int | None, limit: int) -> ToolOutcome:
    """Lines `start` to `end` of the open file `fd` (closed on return), numbered, within
    `limit` characters; ToolError for a binary file or a `start` past the end."""
    with open(fd, "rb") as raw:
        head = raw.read(_BINARY_SNIFF_BYTES)
        if b"\x00" in head:
            size = os.fstat(fd).st_size
            raise ToolError(f"{shown} is a binary file ({size} bytes); it cannot be shown")
        raw.seek(0)
        with io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None) as text:
            return _numbered(text, shown, start, end, limit)


def _numbered(
    text: io.TextIOWrapper, shown: str, start: int, end: int | None, limit: int
) -> ToolOutcome:
    budget = limit - NOTE_RESERVE
    lines: list[str] = []
    used = 0
    total = 0
    stopped_at: int | None = None
    while True:
        number = total + 1
        wanted = start <= number and (end is None or number <= end) and stopped_at is None
        read = _read_line(text, MAX_LINE_CHARS if wanted else 0)
        if read is None:
            break
        total += 1
        if not wanted:
            continue
        content, dropped = read
        prefix = f"{total:>4}\t"
        numbered = prefix + content + _line_note(dropped)
        if used + len(numbered) + 1 > budget:
            if lines:
                stopped_at = total
                continue
            keep = max(0, budget - len(prefix) - len(_line_note(len(content) + dropped)))
            dropped += len(content) - keep
            numbered = prefix + content[:keep] + _line_note(dropped)
        lines.append(numbered)
        used += len(numbered) + 1
    if total == 0:
        return ToolOutcome(f"({shown} is empty)")
    if start > total:
        raise ToolError(f"{shown} has {total} lines; start_line {start} is past the end")
    if stopped_at is not None:
        lines.append(
            f"[truncated: lines {start}-{stopped_at - 1} of {total} shown (the tool result "
            f"limit is {limit} characters); read on with "
            f"start_line={stopped_at}]"
        )
    return ToolOutcome("\n".join(lines))


def _read_line(text: io.TextIOWrapper, cap: int) -> tuple[str, int] | None:
    """The next line without its newline, cut at `cap` characters, and how many
    characters were cut; None at the end of the file.

    Never holds more than `cap` + `_READ_CHUNK` characters of the line: the rest
    is read on in chunks and only counted.
    """
    first = text.readline(cap) if cap > 0 else text.readline(_READ_CHUNK)
    if not first:
        return None
    if first.endswith("\n"):
        return (first[:-1], 0) if cap > 0 else ("", len(first) - 1)
    content, dropped = (first, 0) if cap > 0 else ("", len(first))
    while chunk := text.readline(_READ_CHUNK):
        if chunk.endswith("\n"):
            dropped += len(chunk) - 1
            break
        dropped += len(chunk)
    return content, dropped


def _line_note(dropped: int) -> str:
    return f" \u2026 [line truncated: {dropped} more characters]" if dropped else ""
