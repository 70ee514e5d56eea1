"""Run text written as GitHub markdown inline text that renders as the text itself.

- `cell`: markdown punctuation escaped (and `|`, so it stays in its table cell),
  line breaks as `<br>`.
- `code`: a code span holding a value whatever backticks it holds: CommonMark
  closes a code span only at a backtick run as long as the one that opened it,
  so the fence is one backtick longer than the longest run inside, padded with a
  space when the value starts or ends with a backtick (the renderer strips one).
  In a table cell a `|` inside is written `\\|`: GitHub's table splits cells on
  `|` before it sees code spans, and shows `\\|` there as `|`.
- `prose`: the driver's and the policy's sentences quote values between
  backticks (`` `rm victim.txt` matches no shell rule ``), values that may hold
  backticks themselves (`` `echo `date` now` ``). Escaping those quotes shows
  literal backticks; leaving them to the renderer closes the span at the first
  inner backtick. So each quote is found the way the sentences write them (it
  opens after a space or an opening bracket, and closes before a space,
  punctuation or the end, with the value's own backticks paired inside) and is
  written with `code`; any other backtick is escaped.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")
_BACKTICKS = re.compile(r"`+")
_OPENS_AFTER = frozenset(" \t\n([{\"'")
_CLOSES_BEFORE = frozenset(" \t\n.,;:!?)]}\"'")
_NEVER_CLOSES_AFTER = frozenset(" \t\n([{")
"""A backtick after a space or an opening bracket opens a value's own quote; it never
closes one."""


def cell(text: str) -> str:
    """Safe in a table cell: markdown punctuation escaped, `|` too, newlines as `<br>`."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return "<br>".join(escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def code(text: str, *, in_table: bool = False) -> str:
    """A code span holding `text` on one line, whatever backticks it contains."""
    flat = " ".join(text.split())
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(flat)), default=0))
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    if in_table:
        flat = flat.replace("|", "\\|")
    return f"{fence}{pad}{flat}{pad}{fence}"


def prose(text: str, *, in_table: bool = False) -> str:
    """`text` as `cell` writes it, but each backtick-quoted value as a code span."""
    out = []
    for plain, quoted in quoted_values(text):
        out.append(cell(plain))
        if quoted is not None:
            out.append(code(quoted, in_table=in_table))
    return "".join(out)


def quoted_values(text: str) -> list[tuple[str, str | None]]:
    """`text` as (plain text, the backtick-quoted value after it, or None) pairs: a quote
    opens at a backtick at the start or after a space or an opening bracket, and closes at
    the next backtick before a space, punctuation or the end that pairs the backticks
    inside; one that never closes is plain text."""
    parts: list[tuple[str, str | None]] = []
    plain_from = 0
    at = text.find("`")
    while at != -1:
        end = _closing(text, at) if _opens(text, at) else None
        if end is None:
            at = text.find("`", at + 1)
            continue
        parts.append((text[plain_from:at], text[at + 1 : end]))
        plain_from = end + 1
        at = text.find("`", plain_from)
    parts.append((text[plain_from:], None))
    return parts


def _opens(text: str, at: int) -> bool:
    after = text[at + 1 : at + 2]
    return (at == 0 or text[at - 1] in _OPENS_AFTER) and after not in ("", " ")


def _closing(text: str, opening: int) -> int | None:
    """The backtick that closes the quote opened at `opening`, if one does: the first
    before a space, punctuation or the end (and not after a space or an opening bracket)
    that leaves an even number of backticks inside (a command's own backticks come in
    pairs: `` `echo `date` now` ``)."""
    at = text.find("`", opening + 2)
    while at != -1:
        closes = at + 1 == len(text) or text[at + 1] in _CLOSES_BEFORE
        closes = closes and text[at - 1] not in _NEVER_CLOSES_AFTER
        if closes and text.count("`", opening + 1, at) % 2 == 0:
            return at
        at = text.find("`", at + 1)
    return None
