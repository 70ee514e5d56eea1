"""Git's configuration file syntax, read as git reads it (pure).

`entries(text)` yields every variable of a git config file's text with its
section, subsection and value, following git's own parser (config.c):

- `[section]`, `[section "subsection"]` (the subsection case-sensitive, `\\"`
  and `\\\\` escaped, any other backslash dropped) and the old
  `[section.subsection]` (lower-cased); a variable may follow on the same line;
- section and variable names are case-insensitive (returned lower-cased);
- `name = value`, or `name` alone (a boolean true, returned as None);
- in a value: leading and trailing whitespace dropped, each inner whitespace
  character outside quotes kept as one space, `"..."` keeps `#`, `;` and spaces,
  `#` or `;` outside quotes starts a comment, `\\n` `\\t` `\\b` `\\\\` `\\"` are
  escapes, and a backslash at the end of a line continues the value on the
  next one.

Git refuses a malformed file whole; here a malformed line is skipped and
reading goes on, because the caller (secrets to mask) wants whatever a file
holds, not a verdict on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from copilot_driver.errors import CopilotDriverError

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_SECTION_NAME = re.compile(r"[A-Za-z0-9.-]+")
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


@dataclass(frozen=True)
class Entry:
    section: str
    """Lower-cased (`http`); "" for a variable before any section header."""
    subsection: str | None
    """As written (`https://github.com/`), or None."""
    name: str
    """Lower-cased (`extraheader`)."""
    value: str | None
    """None for a bare `name` (a boolean true)."""


class _MalformedError(CopilotDriverError, ValueError):
    """A line git would refuse."""


def entries(text: str) -> Iterator[Entry]:
    """Every variable `text` sets, in order (a malformed line skipped)."""
    source = text.removeprefix("\ufeff").replace("\r\n", "\n")
    # git reads a variable before any header too (in no section)
    section: tuple[str, str | None] | None = ("", None)
    at = 0
    while at < len(source):
        at = _skip_blank(source, at)
        if at >= len(source):
            break
        try:
            if source[at] == "[":
                section, at = _header(source, at + 1)
                continue
            if section is None or not _NAME.match(source, at):
                raise _MalformedError
            entry, at = _variable(source, at, section)
            yield entry
        except _MalformedError:
            if source[at] == "[":
                section = None  # its variables belong to no known section
            at = _end_of_line(source, at)


def _skip_blank(source: str, at: int) -> int:
    """Past whitespace, blank lines and comment lines."""
    while at < len(source):
        char = source[at]
        if char in "#;":
            at = _end_of_line(source, at)
        elif char.isspace():
            at += 1
        else:
            break
    return at


def _char(source: str, at: int) -> str:
    """The character at `at`, or "" past the end."""
    return source[at] if at < len(source) else ""


def _end_of_line(source: str, at: int) -> int:
    end = source.find("\n", at)
    return len(source) if end < 0 else end + 1


def _header(source: str, at: int) -> tuple[tuple[str, str | None], int]:
    """`[section]`, `[section "sub"]` or `[section.sub]`, from after the `[`."""
    name = _SECTION_NAME.match(source, at)
    if name is None:
        raise _MalformedError
    at = name.end()
    if source.startswith("]", at):
        section, _, legacy = name.group(0).partition(".")
        return (section.lower(), legacy.lower() if legacy else None), at + 1
    if "." in name.group(0) or _char(source, at) not in (" ", "\t"):
        raise _MalformedError
    while _char(source, at) in (" ", "\t"):
        at += 1
    if _char(source, at) != '"':
        raise _MalformedError
    subsection: list[str] = []
    at += 1
    while at < len(source) and source[at] not in '"\n':
        if source[at] == "\\":
            at += 1
            if at >= len(source) or source[at] == "\n":
                raise _MalformedError
        subsection.append(source[at])
        at += 1
    if not source.startswith('"]', at):
        raise _MalformedError
    return (name.group(0).lower(), "".join(subsection)), at + 2


def _variable(source: str, at: int, section: tuple[str, str | None]) -> tuple[Entry, int]:
    """`name`, `name = value`: the entry and where the next line starts."""
    name = _NAME.match(source, at)
    assert name is not None
    at = name.end()
    while _char(source, at) in (" ", "\t"):
        at += 1
    value: str | None = None
    if _char(source, at) == "=":
        value, at = _value(source, at + 1)
    elif _char(source, at) not in ("", "\n"):
        raise _MalformedError
    else:
        at += 1
    return Entry(section[0], section[1], name.group(0).lower(), value), at


def _value(source: str, at: int) -> tuple[str, int]:
    """A value from after its `=` to the end of its (last continued) line."""
    value: list[str] = []
    quoted = comment = emitted = False
    spaces = 0
    while at < len(source):
        char = source[at]
        at += 1
        if char == "\n":
            if quoted:
                raise _MalformedError
            return "".join(value), at
        if comment:
            continue
        if char.isspace() and not quoted:
            spaces += emitted  # leading whitespace is dropped, inner kept
            continue
        if not quoted and char in "#;":
            comment = True
            continue
        value.append(" " * spaces)
        spaces = 0
        if char == "\\":
            escaped = _char(source, at)
            at += 1
            if escaped == "\n":
                continue
            if escaped not in _ESCAPES:
                raise _MalformedError
            value.append(_ESCAPES[escaped])
            emitted = True
        elif char == '"':
            quoted = not quoted
        else:
            value.append(char)
            emitted = True
    if quoted:
        raise _MalformedError
    return "".join(value), at
