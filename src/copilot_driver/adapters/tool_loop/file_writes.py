"""edit_file's replacement of one exact match, and how every write lands in place.

An `old_str` must occur exactly once: overlapping matches count (`aa` in `aaa` is
ambiguous), a failure names where the matches are, and an LF `old_str` matches a CRLF
file. Writes replace a file's content in place (truncate, then write) through the
descriptor that passed the sandbox's checks, never through a path resolved again.
"""

from __future__ import annotations

import os

from copilot_driver.adapters.tool_loop.sandbox import Target
from copilot_driver.adapters.tool_loop.tool_calls import ToolError

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""edit_file holds the whole file in memory twice; larger files are refused."""
_MAX_REPORTED_LINES = 10


def edited_content(fd: int, size: int, shown: str, old: str, new: str) -> tuple[bytes, int]:
    """The file's new content with `old` replaced, and the line of the match."""
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"{shown} is {size} bytes, over the {MAX_EDIT_BYTES}-byte edit limit; use write_file"
        )
    try:
        text = _read_all(fd).decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text; use write_file to replace it") from None
    starts = _occurrences(text, old)
    if not starts and "\r\n" in text and "\n" in old and "\r" not in old:
        # The model saw the file with LF line ends (read_file); the file has CRLF.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        starts = _occurrences(text, old)
    if not starts:
        raise ToolError(
            f"old_str was not found in {shown} (0 matches); it must match exactly, "
            "whitespace and indentation included, without line numbers. "
            "read_file it and retry"
        )
    if len(starts) > 1:
        lines = _match_lines(text, starts, _MAX_REPORTED_LINES + 1)
        where = ", ".join(str(n) for n in lines[:_MAX_REPORTED_LINES])
        more = ", ..." if len(lines) > _MAX_REPORTED_LINES else ""
        raise ToolError(
            f"old_str occurs {len(starts)} times in {shown} (at lines {where}{more}); "
            "it must occur exactly once: include more surrounding lines to make it unique"
        )
    at = starts[0]
    edited = encode(text[:at] + new + text[at + len(old) :], "new_str")
    return edited, text.count("\n", 0, at) + 1


def open_for_writing(target: Target) -> tuple[int, bool]:
    """The file opened for writing, and whether it existed; never truncated yet."""
    for _ in range(3):
        try:
            fd, _status = target.open_file(os.O_WRONLY)
        except FileNotFoundError:
            pass
        else:
            return fd, True
        try:
            fd, _status = target.create_file()
        except FileExistsError:
            continue  # made meanwhile: open it
        return fd, False
    raise ToolError(f"{target.shown} keeps appearing and disappearing; try again")


def replace_content(fd: int, data: bytes) -> None:
    """Make `data` the whole content of the open file (in place, same file)."""
    os.ftruncate(fd, 0)
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def encode(text: str, argument: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            f"the {argument} argument holds a lone surrogate, which is not valid Unicode text"
        ) from None


def _occurrences(text: str, needle: str) -> list[int]:
    """Start of every match, overlapping ones included (`aa` is in `aaa` twice)."""
    starts = []
    at = text.find(needle)
    while at != -1:
        starts.append(at)
        at = text.find(needle, at + 1)
    return starts


def _match_lines(text: str, starts: list[int], limit: int) -> list[int]:
    """The first `limit` distinct line numbers of the sorted match `starts`, in order.

    Newlines are counted only between consecutive matches: one pass over the text.
    """
    lines: list[int] = []
    line, counted_to = 1, 0
    for start in starts:
        line += text.count("\n", counted_to, start)
        counted_to = start
        if not lines or lines[-1] != line:
            lines.append(line)
            if len(lines) >= limit:
                break
    return lines
