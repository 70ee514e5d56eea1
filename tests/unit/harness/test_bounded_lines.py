"""A child's pipe read in lines, bounded per line and in total."""

from __future__ import annotations

import io
import os
import re
import threading

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.bounded_lines import _split, bounded_lines


def lines(data: bytes, *, max_line: int = 10, max_total: int = 1000, chunk: int = 3) -> list[bytes]:
    chunks = (data[start : start + chunk] for start in range(0, len(data), chunk))
    return list(_split(chunks, max_line=max_line, max_total=max_total))


def test_lines_come_whole_without_their_newline() -> None:
    assert lines(b"one\ntwo\n\nthree") == [b"one", b"two", b"", b"three"]


def test_a_long_line_is_cut_and_says_so() -> None:
    assert lines(b"0123456789abcdef\nnext\n") == [
        b"0123456789 [... 6 more bytes of this line not kept]",
        b"next",
    ]


def test_past_the_total_one_summary_line_says_what_was_not_kept() -> None:
    found = lines(b"aaaa\nbbbb\ncccc\ndddd\n", max_total=10)
    assert found == [
        b"aaaa",
        b"bbbb",
        b"[... 10 more bytes in 2 line(s) not kept: over the limit of 10 bytes]",
    ]


def test_past_the_total_a_shorter_line_is_not_kept_either() -> None:
    found = lines(b"aaaa\nbbbbbbbbb\nc\n", max_total=10)
    assert found == [
        b"aaaa",
        b"[... 12 more bytes in 2 line(s) not kept: over the limit of 10 bytes]",
    ]


_DATA = st.binary(max_size=300).map(lambda data: data.replace(b"\r", b""))


@given(_DATA, st.integers(1, 40), st.integers(1, 200), st.integers(1, 50))
def test_nothing_kept_is_invented_and_the_bounds_hold(
    data: bytes, max_line: int, max_total: int, chunk: int
) -> None:
    found = lines(data, max_line=max_line, max_total=max_total, chunk=chunk)
    original = data.split(b"\n") if data else []
    if data.endswith(b"\n"):
        original.pop()
    summary = [line for line in found if line.startswith(b"[... ") and b"line(s)" in line]
    kept = [line for line in found if line not in summary]
    assert len(summary) <= 1
    assert sum(len(line) + 1 for line in kept) <= max_total + 1
    # What is kept is a prefix of the lines: past the total, nothing more is kept.
    assert len(kept) + (1 if summary else 0) == len(found)
    assert found[: len(kept)] == kept
    for line, source in zip(kept, original, strict=False):
        body = line.split(b" [... ")[0] if b" [... " in line else line
        assert source.startswith(body)
        assert len(body) <= max_line
    if not summary:
        assert len(kept) == len(original)


_CUT = re.compile(rb"(.*) \[\.\.\. (\d+) more bytes of this line not kept\]", re.DOTALL)
_SUMMARY = re.compile(rb"\[\.\.\. (\d+) more bytes in \d+ line\(s\) not kept: .*\]")


def _read_from(line: bytes) -> int:
    """How many bytes of the input a kept line stands for (newline aside)."""
    cut = _CUT.fullmatch(line)
    return len(cut.group(1)) + int(cut.group(2)) if cut else len(line)


@given(_DATA, st.integers(1, 40), st.integers(1, 200), st.integers(1, 50))
def test_every_byte_read_is_kept_or_counted(
    data: bytes, max_line: int, max_total: int, chunk: int
) -> None:
    found = lines(data, max_line=max_line, max_total=max_total, chunk=chunk)
    summary = _SUMMARY.fullmatch(found[-1]) if found else None
    kept = found[:-1] if summary else found
    accounted = sum(_read_from(line) for line in kept) + min(len(kept), data.count(b"\n"))
    assert accounted + (int(summary.group(1)) if summary else 0) == len(data)


def test_a_pipe_is_drained_to_its_end_past_the_limits() -> None:
    """The writer never blocks: 8 MB in one line without a newline, 64 KB kept at most."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(b"x" * 8_000_000)

    writer = threading.Thread(target=write)
    writer.start()
    with os.fdopen(read_end, "rb", 0) as pipe:
        found = list(bounded_lines(pipe, max_line=65536, max_total=1 << 20))
    writer.join(10)
    assert not writer.is_alive()
    assert found == [b"x" * 65536 + b" [... 7934464 more bytes of this line not kept]"]


def test_a_buffered_stream_reads_as_a_raw_one() -> None:
    stream = io.BufferedReader(io.BytesIO(b"a\nb"))
    assert list(bounded_lines(stream, max_line=5, max_total=100)) == [b"a", b"b"]
