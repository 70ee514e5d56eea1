"""The tokens of a command line as bash's tokenizer reads them, literal words only. Pure.

One pass, left to right, linear in the text's length: words (quotes removed,
continuations dropped, each with a view that marks its quoted characters),
separators and redirection operators. Whatever bash would read as anything but
a literal word or one of these operators is refused here with ShellParseError,
naming the first character bash would not take literally. bash.py reads the
simple commands from these tokens; its docstring states the subset.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from copilot_driver.errors import CopilotDriverError

MAX_LINE_CHARS = 64 * 1024
MAX_COMMANDS = 100
MAX_WORDS = 2048
"""Longer lines are refused before they are read, lines of more commands or words while
they are read: a decision costs a bounded time (a prompt-injected model could otherwise
send `ls;ls;ls;...` by the megabyte)."""

REDIRECTION_OPERATORS = ("<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>")
SEPARATORS = (";", "&&", "||", "|", "|&", "\n")

_QUOTED = "\x00"
"""Stands for a quoted character in a word's unquoted view (real NULs are refused)."""

# A word, read in one match: pieces glued together, each literal by construction.
# Anything a piece cannot start with ends the word (a blank, an operator), or is
# outside the subset, which `_Lexer._refusal` then names.
_CHARS = r"A-Za-z0-9_\-./:,=+@%^~{}\]!"
"""Unquoted characters that stand for themselves (with the `~` and `{` checks);
`#` too, except where it starts a word (a comment)."""
_UNQUOTED_RUN = rf"[{_CHARS}#]+"
_PLAIN_START = frozenset(c for c in map(chr, range(128)) if re.fullmatch(f"[{_CHARS}]", c))
"""The characters of _CHARS: where a plain word may start."""
_SINGLE_QUOTED = r"'[^']*'"
_DOUBLE_QUOTED_TEXT = r'[^"\\$`]*(?:\\[^$`][^"\\$`]*)*'
_DOUBLE_QUOTED = rf'"{_DOUBLE_QUOTED_TEXT}"'
"""Literal inside, except `\\` before `$` and backticks; `\\`+newline is a continuation.
(Written as runs between escapes, so the regular expression takes a long text in one step.)"""
_ESCAPED = r"\\[^\n$`]"
_CONTINUATION = r"\\\n"
_WORD = re.compile(
    rf"(?:[{_CHARS}][{_CHARS}#]*|{_SINGLE_QUOTED}|{_DOUBLE_QUOTED}|{_ESCAPED})"
    rf"(?:{_UNQUOTED_RUN}|{_SINGLE_QUOTED}|{_DOUBLE_QUOTED}|{_ESCAPED}|{_CONTINUATION})*"
)
_PIECE = re.compile(
    rf"(?P<run>{_UNQUOTED_RUN})|(?P<single>{_SINGLE_QUOTED})|(?P<double>{_DOUBLE_QUOTED})"
    rf"|(?P<escaped>{_ESCAPED})|(?P<continuation>{_CONTINUATION})"
)
_PLAIN_WORD = re.compile(rf"[{_CHARS}][{_CHARS}#]*(?![^ \t\n;&|<>])")
"""A word of unquoted characters only, up to a blank or an operator."""
_BLANK_GAP = r"(?:\\\n)*[ \t](?:[ \t]|\\\n)*"
"""Blanks (at least one) and continuations between two words."""
_PLAIN_WORDS = re.compile(
    rf"[{_CHARS}][{_CHARS}#]*(?:{_BLANK_GAP}[{_CHARS}][{_CHARS}#]*){{0,{MAX_WORDS}}}"
    r"(?=[ \t\n;&|]|\\\n[ \t\n;&|]|\\\n$|$)"
)
"""The common case, read in bulk: plain words separated by blanks, the last one ending at
a blank or a separator (a word glued to `<` or `>` may be a descriptor: read alone); at
most one more than a line may hold, so a line of too many words stops there."""
_WORDS = re.compile(
    rf"(?>{_WORD.pattern})(?:{_BLANK_GAP}(?>{_WORD.pattern})){{0,{MAX_WORDS}}}"
    r"(?=[ \t\n;&|]|\\\n[ \t\n;&|]|\\\n$|$)"
)
"""Words of any literal kind separated by blanks, read in bulk as _PLAIN_WORDS are, each
word matched whole (an atomic group: a failed end drops whole words, never backtracks
inside one)."""
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_DOUBLE_QUOTED_PREFIX = re.compile(_DOUBLE_QUOTED_TEXT)
"""The literal start of a double-quoted text: where it stops tells why a word failed."""
_GAP = re.compile(rf"(?:[ \t]|{_CONTINUATION})*")
"""Blanks and continuations between tokens."""
_BLANK_LINES = re.compile(rf"(?:[ \t\n]|{_CONTINUATION}|#[^\n]*)*")
"""After a newline: more blank lines, continuations and comment lines (a `#` there starts
a word, so a comment)."""
_SEPARATOR = re.compile(r"(?:&&|\|\||\|&|\||;)(?![;&|]|\\\n)")
"""A separator written without a continuation inside or after it (the common case)."""

_REFUSED_UNQUOTED = {
    "$": "`$` outside single quotes (an expansion)",
    "`": "a backtick (command substitution)",
    "*": "an unquoted `*` (a glob pattern)",
    "?": "an unquoted `?` (a glob pattern)",
    "[": "an unquoted `[` (a glob pattern or a test)",
    "(": "`(` (a subshell, substitution or function definition)",
    ")": "`)` (a subshell, substitution or function definition)",
}
_REFUSED_IN_DOUBLE_QUOTES = {
    "$": "`$` outside single quotes (an expansion)",
    "`": "a backtick (command substitution)",
}
DIGITS = frozenset("0123456789")
"""What a descriptor is written with: ASCII digits only."""
MAX_FD = 9
"""The largest descriptor a redirection may name. bash opens any number below its
open-files limit and fails the command past it (`31022: Bad file descriptor`), a limit
the reader cannot know; bash's manual reserves those above 9 for its own use."""


class ShellParseError(CopilotDriverError, ValueError):
    """The command is outside the literal subset (always denied unless `shell` is allowed)."""


class Words(NamedTuple):
    """One word, or a run of plain words (which need no quote removal) read in bulk."""

    values: list[str]
    views: list[str]
    """Each word with its quoted characters replaced by _QUOTED (for a plain run: `values`)."""
    unquoted: str
    """All unquoted characters of the token (for `in` checks over the whole run)."""
    start: int
    end: int


class Operator(NamedTuple):
    value: str
    start: int
    end: int
    fd: str = ""
    """For a redirection: the descriptor digits glued before it."""

    @property
    def is_redirection(self) -> bool:
        return self.value in REDIRECTION_OPERATORS


Token = Words | Operator


def read_tokens(text: str) -> list[Token]:
    """The tokens of `text`, left to right; ShellParseError where bash reads no literal word."""
    return _Lexer(text).tokens()


def _word(source: str, start: int, end: int) -> Words:
    """A word from its source text, one `_WORD` match."""
    value, view = _unquote(source)
    return Words([value], [view], view, start, end)


def _words(text: str, start: int, end: int) -> Words:
    """The words of one `_WORDS` match, read in one token."""
    values: list[str] = []
    views: list[str] = []
    for word in _WORD.finditer(text, start, end):  # the gaps between them match nothing
        value, view = _unquote(word.group())
        values.append(value)
        views.append(view)
    return Words(values, views, " ".join(views), start, end)


def _unquote(source: str) -> tuple[str, str]:
    """A word's value (quotes removed, continuations dropped) and its view (the value with
    each quoted character replaced by _QUOTED)."""
    if len(source) == 2 and source[0] == "\\":  # `\x`, often repeated
        return source[1], _QUOTED
    if source[0] == "'" and source.find("'", 1) == len(source) - 1:  # one '...', often repeated
        inner = source[1:-1]
        return inner, _QUOTED * len(inner)
    value: list[str] = []
    unquoted: list[str] = []
    for piece in _PIECE.finditer(source):
        kind, text = piece.lastgroup, piece.group()
        if kind == "run":
            value.append(text)
            unquoted.append(text)
            continue
        if kind == "single":
            text = text[1:-1]
        elif kind == "double":
            text = _DOUBLE_QUOTED_ESCAPE.sub(_double_quoted_escape, text[1:-1])
        elif kind == "escaped":
            text = text[1]
        else:  # a continuation
            continue
        value.append(text)
        unquoted.append(_QUOTED * len(text))
    return "".join(value), "".join(unquoted)


def _double_quoted_escape(match: re.Match[str]) -> str:
    """Inside double quotes `\\"` and `\\\\` stand for the character, `\\`+newline for
    nothing, and `\\x` for both characters."""
    char = match.group(1)
    return "" if char == "\n" else char if char in '"\\' else match.group()


class _Lexer:
    """Bash's tokenizer, restricted to literal words. One pass, left to right."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out: list[Token] = []
        self.words = 0
        self.commands = 0

    def tokens(self) -> list[Token]:
        text = self.text
        while True:
            self.i = _GAP.match(text, self.i).end()  # type: ignore[union-attr]  # matches ""
            if self.i >= len(text):
                return self.out
            start = self.i
            char = text[start]
            if char == "#":  # at the start of a word: a comment to the end of the line
                end = text.find("\n", start)
                self.i = len(text) if end < 0 else end
            elif char in ";&|\n":
                if char == "\n":
                    self.out.append(Operator("\n", start, start + 1))
                    # Blank lines and comment lines after it: no command, read at once.
                    self.i = _BLANK_LINES.match(text, start + 1).end()  # type: ignore[union-attr]
                elif (separator := _SEPARATOR.match(text, start)) is not None:
                    self.i = separator.end()
                    self.out.append(Operator(separator.group(), start, self.i))
                else:
                    self.i += 1
                    self._operator(char, start)
            elif char in "<>":
                self._count_command()
                self.i += 1
                self._redirection(char, start)
            elif char in _PLAIN_START and (run := _PLAIN_WORDS.match(text, start)) is not None:
                self.i = run.end()
                chunk = run.group()
                values = chunk.replace("\\\n", "").split()
                self._add(Words(values, values, chunk, start, self.i))
            elif char in _PLAIN_START and (plain := _PLAIN_WORD.match(text, start)) is not None:
                self.i = plain.end()
                value = plain.group()
                self._add(Words([value], [value], value, start, self.i))
            elif (run := _WORDS.match(text, start)) is not None:
                self.i = run.end()
                self._add(_words(text, start, self.i))
            elif (word := _WORD.match(text, start)) is not None:
                self.i = word.end()
                self._add(_word(word.group(), start, self.i))
            else:
                raise self._refusal(start)

    def _add(self, words: Words) -> None:
        self._count_command()
        self.words += len(words.values)
        if self.words > MAX_WORDS:
            raise ShellParseError(f"more than {MAX_WORDS} words in one command line")
        self.out.append(words)

    def _count_command(self) -> None:
        """A word or redirection right after a separator starts a command: count it."""
        last = self.out[-1] if self.out else None
        if last is None or (isinstance(last, Operator) and last.value in SEPARATORS):
            self.commands += 1
            if self.commands > MAX_COMMANDS:
                raise ShellParseError(f"more than {MAX_COMMANDS} commands in one command line")

    def _after_continuations(self) -> str:
        """The next character, past any continuations (bash drops them inside operators too)."""
        while self.text.startswith("\\\n", self.i):
            self.i += 2
        return self.text[self.i] if self.i < len(self.text) else ""

    def _glued_word(self, start: int) -> Words | None:
        """The word (token) that ends right where an operator starts, if any."""
        last = self.out[-1] if self.out else None
        return last if isinstance(last, Words) and last.end == start else None

    def _operator(self, char: str, start: int) -> None:
        if char in "<>" or (char == "&" and self._after_continuations() == ">"):
            self._redirection(char, start)
            return
        nxt = self._after_continuations()
        if char == ";":
            if nxt in (";", "&"):
                raise ShellParseError(f"`;{nxt}` (case syntax)")
            value = ";"
        elif char == "&":
            if nxt != "&":
                raise ShellParseError("a lone `&` (a background job)")
            value = "&&"
        else:
            value = "|" + nxt if nxt in ("|", "&") else "|"
        self.i += len(value) - 1
        self.out.append(Operator(value, start, self.i))

    def _redirection(self, char: str, start: int) -> None:
        fd = ""
        glued = self._glued_word(start)
        if glued is not None:
            # bash reads a descriptor only from a word written as bare digits: `''1<` and
            # `"2">` are the argument `1` (or `2`) and then a redirection of stdin (stdout).
            digits = self.text[glued.start : glued.end].replace("\\\n", "")
            if char == "&" or len(glued.values) > 1 or not digits or not set(digits) <= DIGITS:
                raise ShellParseError(
                    f"the word `{glued.values[-1]}` glued to a redirection "
                    "(write a space before it)"
                )
            if int(digits) > MAX_FD:
                raise ShellParseError(
                    f"the descriptor {digits[:12]} of a redirection: bash refuses one past its "
                    f"open-files limit, and uses some above {MAX_FD} itself (write 0 to {MAX_FD})"
                )
            self.out.pop()
            fd, start = digits, glued.start
        operator = char
        if char == "&":  # `&>` or `&>>`; the `&` is already read
            self._after_continuations()
            self.i += 1
            operator = "&>"
            if self._after_continuations() == ">":
                self.i += 1
                operator += ">"
        else:
            nxt = self._after_continuations()
            if nxt == "(":
                raise ShellParseError("process substitution")
            if char == "<" and nxt == "<":
                raise ShellParseError("a here-document or here-string")
            if (char == ">" and nxt in (">", "|", "&")) or (char == "<" and nxt in ("&", ">")):
                self.i += 1
                operator += nxt
        self.out.append(Operator(operator, start, self.i, fd))

    def _refusal(self, start: int) -> ShellParseError:
        """Why no word can be read at `start`: the first character bash would not take literally."""
        text = self.text
        char = text[start]
        if char == "'":
            return ShellParseError("an unterminated single quote")
        if char == "\\":
            escaped = text[start + 1 : start + 2]
            if not escaped:
                return ShellParseError("a backslash at the end")
            return ShellParseError(
                _REFUSED_UNQUOTED.get(escaped, "a backslash bash reads otherwise")
            )
        if char == '"':
            stop = _DOUBLE_QUOTED_PREFIX.match(text, start + 1).end()  # type: ignore[union-attr]
            refused = text[stop : stop + 1]
            if refused == "\\":  # a backslash before `$` or a backtick, or at the end
                refused = text[stop + 1 : stop + 2]
            if refused in _REFUSED_IN_DOUBLE_QUOTES:
                return ShellParseError(_REFUSED_IN_DOUBLE_QUOTES[refused])
            return ShellParseError("an unterminated double quote")
        if char in _REFUSED_UNQUOTED:
            return ShellParseError(_REFUSED_UNQUOTED[char])
        return ShellParseError(f"the unquoted character {char!r}")
