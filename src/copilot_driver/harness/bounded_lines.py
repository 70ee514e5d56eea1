"""Reading a child's pipe in lines, bounded per line and in total. Pure but for the read.

A child (the CLI, the driver, or a tool that reached their output) may write a
line of any length without a newline, or without end: the harness keeps at
most `max_line` bytes of a line and `max_total` bytes in all, and keeps
draining the pipe past them, so the child never blocks on a full pipe and
the harness's memory stays bounded. What is cut is said: a cut line ends
with a note of the bytes left out, and once the total is reached one summary
line at the end says how much more was not kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

MAX_LINE_BYTES = 64 * 1024
"""A log line longer than this is cut (the CLI's and the driver's lines are far shorter)."""
MAX_LOG_BYTES = 64 * 1024 * 1024
"""What the harness keeps of one child's log stream in all."""
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""What the harness keeps of the driver's answer (its stdout)."""
_CHUNK = 64 * 1024


def bounded_lines(stream: IO[bytes], *, max_line: int, max_total: int) -> Iterator[bytes]:
    """The lines read from `stream` (each without its newline) until end of file, cut as
    the module docstring says. Closes nothing: the caller owns `stream`."""
    return _split(_chunks(stream), max_line=max_line, max_total=max_total)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    """What is there to read, as it comes (never waiting to fill a whole chunk)."""
    read = getattr(stream, "read1", stream.read)
    while True:
        try:
            chunk = read(_CHUNK)
        except InterruptedError:
            continue
        except (OSError, ValueError):  # closed under the reader: the end
            return
        if not chunk:
            return
        yield chunk


def _split(chunks: Iterator[bytes], *, max_line: int, max_total: int) -> Iterator[bytes]:
    """`bounded_lines` over any byte chunks (tested without a pipe)."""
    line = bytearray()
    dropped_in_line = 0
    kept = 0
    not_kept = 0
    lines_not_kept = 0

    def finish(newline: int) -> bytes | None:
        nonlocal kept, not_kept, lines_not_kept
        text = bytes(line)
        if dropped_in_line:
            text += f" [... {dropped_in_line} more bytes of this line not kept]".encode()
        if not_kept or kept + len(text) > max_total:  # past the total, nothing more is kept
            not_kept += len(line) + dropped_in_line + newline
            lines_not_kept += 1
            return None
        kept += len(text) + 1
        return text

    for chunk in chunks:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = max(0, max_line - len(line))
            line += piece[:room]
            dropped_in_line += len(piece) - min(room, len(piece))
            if end < 0:
                break
            done = finish(1)
            if done is not None:
                yield done
            line.clear()
            dropped_in_line = 0
            start = end + 1
    if line or dropped_in_line:
        done = finish(0)
        if done is not None:
            yield done
    if not_kept:
        yield (
            f"[... {not_kept} more bytes in {lines_not_kept} line(s) not kept: over the "
            f"limit of {max_total} bytes]"
        ).encode()
