"""Small text helpers every part shares: shortened quotes and UTC timestamps."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime

ELLIPSIS = "..."


def shorten(text: str, limit: int, *, one_line: bool = True, ellipsis: str = ELLIPSIS) -> str:
    """At most `limit` characters, cut with `ellipsis`; blanks (line breaks included)
    collapse to single spaces first unless `one_line` is false. Reads no further into
    `text` than the cut needs, so a megabyte costs what a line does."""
    if one_line:
        words: list[str] = []
        length = -1
        for word in _blank_free_runs(limit + 1).finditer(text):
            words.append(word.group())
            length += 1 + len(words[-1])
            if length > limit:
                break
        flat = " ".join(words)
    else:
        flat = text
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - len(ellipsis))] + ellipsis


@functools.cache
def _blank_free_runs(longest: int) -> re.Pattern[str]:
    """What `str.split()` keeps (`\\s` is exactly `str.isspace()`, checked over all of
    Unicode), in pieces of at most `longest`: one piece that long already fills the cut,
    so a megabyte-long word is not read to its end."""
    return re.compile(rf"\S{{1,{longest}}}")


def escape_line_breaks(text: str) -> str:
    """`\\r` and `\\n` written as escapes, so user input stays on one line."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def iso_utc(moment: datetime | float | None = None) -> str:
    """`2026-11-24T23:36:40.123Z`: an aware datetime or epoch seconds (default: now)."""
    if moment is None:
        moment = datetime.now(UTC)
    elif not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, tz=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: object) -> datetime | None:
    """An ISO 8601 timestamp (a `Z` suffix included) as an aware datetime, else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
