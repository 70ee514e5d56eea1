"""A command line as bash reads it, for the literal subset a rule can cover. Pure.

The runtime runs every shell tool call as `/bin/bash --norc --noprofile -c
TEXT` (measured on the Copilot CLI 1.0.102): non-interactive, so no aliases
and no history expansion, one fresh shell per call. This module reads TEXT
with bash's own lexical rules, but only accepts the small part of the
language in which every word is a literal string:

    [NAME=literal ...] word ... [redirection ...]  ( ; && || | |& newline )  ...

Accepted, exactly as bash treats them:

- blanks (space, tab) between words; newlines as separators, also after
  `&&`, `||`, `|` and `|&` where the list goes on;
- line continuations (backslash-newline), removed before anything else
  except inside single quotes and comments, even in the middle of a word or
  an operator (`ta\\<newline>r`, `&\\<newline>&`, `$\\<newline>(`);
- quoting: '...' (everything literal), "..." (literal except `\\`, `\\"`
  and continuations), and backslash escapes outside quotes;
- comments from a `#` that starts a word to the end of the line;
- redirections `[DIGITS]OP WORD` for OP in `< > >> >| <> <& >& &> &>>`.

Refused (ShellParseError), because bash would compute the word, run
something the segments do not show, or do something this reader does not
model: `$` of any kind outside single quotes, backticks, unquoted glob
characters (`* ? [`), brace expansion (an unquoted `{`, then a `,` or `..`,
then an unquoted `}`), tilde expansion (an unquoted `~` starting a word or
following `=` or `:`), parentheses, a lone `&`, `;;` and `;&`, here-documents
and here-strings, a word glued to a redirection unless it is the descriptor's
ASCII digits (so no `{VAR}>`), a reserved word as the command name, a
command without a name, control characters (other than tab and newline), and
any character outside printable ASCII that is not inside quotes, and a line
longer than MAX_LINE_CHARS (refused before it is read).

`HEAD~1`, `HEAD@{1}..HEAD` and `Done!` are literal words in bash and here:
without an interactive shell there is no history expansion, so `!` is an
ordinary character except as a command's first word (pipeline negation).

Reading is a single pass over the text: linear in its length.
"""

from __future__ import annotations

import re
from typing import NamedTuple

RESERVED_WORDS = frozenset(
    {
        "!",
        "[[",
        "]]",
        "{",
        "}",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
    }
)
"""Words bash reads as syntax in a command's first position: never a command name here."""

MAX_LINE_CHARS = 64 * 1024
MAX_COMMANDS = 100
MAX_WORDS = 2048
"""Longer lines are refused before they are read, lines of more commands or words while
they are read: a decision costs a bounded time (a prompt-injected model could otherwise
send `ls;ls;ls;...` by the megabyte)."""

REDIRECTION_OPERATORS = ("<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>")
SEPARATORS = (";", "&&", "||", "|", "|&", "\n")
_LIST_CONTINUES = frozenset({"&&", "||", "|", "|&"})
"""After these a command must follow (newlines may come first)."""
_PIPES = frozenset({"|", "|&"})

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
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
_DIGITS = frozenset("0123456789")


class ShellParseError(ValueError):
    """The command is outside the literal subset (always denied unless `shell` is allowed)."""


class Redirection(NamedTuple):
    fd: str
    """The descriptor's ASCII digits as written (`2` in `2>&1`), or "" for the default."""
    operator: str
    """One of REDIRECTION_OPERATORS."""
    target: str
    """The literal word after the operator."""

    @property
    def is_harmless(self) -> bool:
        """Only /dev/null, or one ASCII-digit descriptor duplicated onto another."""
        if self.operator in ("<&", ">&") and self.target and set(self.target) <= _DIGITS:
            return True
        return self.target == "/dev/null" and self.operator != "<&"

    def __str__(self) -> str:
        return f"{self.fd}{self.operator}{self.target}"


class Command(NamedTuple):
    """One simple command of the line: what bash would run, word for word."""

    text: str
    """Its source text, as written (for messages)."""
    assignments: tuple[str, ...]
    """Leading `NAME=value` words, which bash applies to the command's environment."""
    words: tuple[str, ...]
    """The words after quote removal; `words[0]` is the command name."""
    redirections: tuple[Redirection, ...]
    follows: str = ""
    """The separator before it (one of SEPARATORS), or "" for the first command."""

    @property
    def name(self) -> str:
        return self.words[0]

    @property
    def piped(self) -> bool:
        """Its standard input is the previous command's output."""
        return self.follows in _PIPES

    def shape(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]:
        """What an exact rule compares: spacing and quoting do not matter."""
        return (self.assignments, self.words, self.redirections)


def parse_command(text: str) -> list[Command]:
    """The simple commands of `text`, in order; ShellParseError for anything else."""
    if not isinstance(text, str):
        raise ShellParseError("a command that is not text")
    if len(text) > MAX_LINE_CHARS:
        raise ShellParseError(f"a command line longer than {MAX_LINE_CHARS // 1024} KiB")
    control = _CONTROL.search(text)
    if control:
        raise ShellParseError(f"the control character {control.group()!r}")
    return _assemble(text, _Lexer(text).tokens())


# -- tokens ---------------------------------------------------------------------------------


class _Words(NamedTuple):
    """One word, or a run of plain words (which need no quote removal) read in bulk."""

    values: list[str]
    views: list[str]
    """Each word with its quoted characters replaced by _QUOTED (for a plain run: `values`)."""
    unquoted: str
    """All unquoted characters of the token (for `in` checks over the whole run)."""
    start: int
    end: int


class _Operator(NamedTuple):
    value: str
    start: int
    end: int
    fd: str = ""
    """For a redirection: the descriptor digits glued before it."""

    @property
    def is_redirection(self) -> bool:
        return self.value in REDIRECTION_OPERATORS


_Token = _Words | _Operator


def _word(source: str, start: int, end: int) -> _Words:
    """A word from its source text, one `_WORD` match."""
    value, view = _unquote(source)
    return _Words([value], [view], view, start, end)


def _words(text: str, start: int, end: int) -> _Words:
    """The words of one `_WORDS` match, read in one token."""
    values: list[str] = []
    views: list[str] = []
    for word in _WORD.finditer(text, start, end):  # the gaps between them match nothing
        value, view = _unquote(word.group())
        values.append(value)
        views.append(view)
    return _Words(values, views, " ".join(views), start, end)


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
        self.out: list[_Token] = []
        self.words = 0
        self.commands = 0

    def tokens(self) -> list[_Token]:
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
                    self.out.append(_Operator("\n", start, start + 1))
                    # Blank lines and comment lines after it: no command, read at once.
                    self.i = _BLANK_LINES.match(text, start + 1).end()  # type: ignore[union-attr]
                elif (separator := _SEPARATOR.match(text, start)) is not None:
                    self.i = separator.end()
                    self.out.append(_Operator(separator.group(), start, self.i))
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
                self._add(_Words(values, values, chunk, start, self.i))
            elif char in _PLAIN_START and (plain := _PLAIN_WORD.match(text, start)) is not None:
                self.i = plain.end()
                value = plain.group()
                self._add(_Words([value], [value], value, start, self.i))
            elif (run := _WORDS.match(text, start)) is not None:
                self.i = run.end()
                self._add(_words(text, start, self.i))
            elif (word := _WORD.match(text, start)) is not None:
                self.i = word.end()
                self._add(_word(word.group(), start, self.i))
            else:
                raise self._refusal(start)

    def _add(self, words: _Words) -> None:
        self._count_command()
        self.words += len(words.values)
        if self.words > MAX_WORDS:
            raise ShellParseError(f"more than {MAX_WORDS} words in one command line")
        self.out.append(words)

    def _count_command(self) -> None:
        """A word or redirection right after a separator starts a command: count it."""
        last = self.out[-1] if self.out else None
        if last is None or (isinstance(last, _Operator) and last.value in SEPARATORS):
            self.commands += 1
            if self.commands > MAX_COMMANDS:
                raise ShellParseError(f"more than {MAX_COMMANDS} commands in one command line")

    def _after_continuations(self) -> str:
        """The next character, past any continuations (bash drops them inside operators too)."""
        while self.text.startswith("\\\n", self.i):
            self.i += 2
        return self.text[self.i] if self.i < len(self.text) else ""

    def _glued_word(self, start: int) -> _Words | None:
        """The word (token) that ends right where an operator starts, if any."""
        last = self.out[-1] if self.out else None
        return last if isinstance(last, _Words) and last.end == start else None

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
        self.out.append(_Operator(value, start, self.i))

    def _redirection(self, char: str, start: int) -> None:
        fd = ""
        glued = self._glued_word(start)
        if glued is not None:
            # bash reads a descriptor only from a word written as bare digits: `''1<` and
            # `"2">` are the argument `1` (or `2`) and then a redirection of stdin (stdout).
            digits = self.text[glued.start : glued.end].replace("\\\n", "")
            if char == "&" or len(glued.values) > 1 or not digits or not set(digits) <= _DIGITS:
                raise ShellParseError(
                    f"the word `{glued.values[-1]}` glued to a redirection "
                    "(write a space before it)"
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
        self.out.append(_Operator(operator, start, self.i, fd))

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


# -- simple commands -------------------------------------------------------------------------


def _assemble(text: str, tokens: list[_Token]) -> list[Command]:
    commands: list[Command] = []
    current: list[_Token] = []
    previous = ""
    """The last separator; "" at the start."""
    for token in tokens:
        if isinstance(token, _Words) or token.is_redirection:
            current.append(token)
            continue
        separator = token.value
        if separator == "\n" and not current:
            continue  # blank lines, and newlines where a list goes on
        if not current:
            raise ShellParseError(f"`{separator}` without a command before it")
        commands.append(_command(text, current, follows=previous))
        current, previous = [], separator
    if current:
        commands.append(_command(text, current, follows=previous))
    elif previous in _LIST_CONTINUES:
        raise ShellParseError(f"`{previous}` without a command after it")
    if not commands:
        raise ShellParseError("no command")
    return commands


def _command(text: str, tokens: list[_Token], *, follows: str) -> Command:
    assignments: list[str] = []
    words: list[str] = []
    redirections: list[Redirection] = []
    redirection: _Operator | None = None
    """A redirection operator waiting for its target."""
    for token in tokens:
        if isinstance(token, _Operator):
            if redirection is not None:
                raise ShellParseError(f"`{redirection.value}` without a target")
            redirection = token
            continue
        _check_words(token)
        values, views, index = token.values, token.views, 0
        if redirection is not None:
            redirections.append(Redirection(redirection.fd, redirection.value, values[0]))
            redirection, index = None, 1
        if not words:  # leading assignments, then the command name
            while index < len(values) and _ASSIGNMENT.match(views[index]):
                assignments.append(values[index])
                index += 1
            if index < len(values):
                _check_command_name(values[index])
        words.extend(values[index:])
    if redirection is not None:
        raise ShellParseError(f"`{redirection.value}` without a target")
    if not words:
        raise ShellParseError("an assignment or redirection without a command")
    source = text[tokens[0].start : tokens[-1].end]
    return Command(source, tuple(assignments), tuple(words), tuple(redirections), follows)


def _check_words(token: _Words) -> None:
    """Refuse the expansions bash applies to unquoted characters of literal-looking words."""
    if "~" in token.unquoted:
        for value, view in zip(token.values, token.views, strict=True):
            if view.startswith("~") or "=~" in view or ":~" in view:
                raise ShellParseError(f"tilde expansion in `{value}`")
    if "{" in token.unquoted and "}" in token.unquoted:
        for value, view in zip(token.values, token.views, strict=True):
            if _expands_braces(value, view):
                raise ShellParseError(f"brace expansion in `{value}`")


def _expands_braces(value: str, view: str) -> bool:
    """Whether bash may brace-expand the word: an unquoted `{`, later a `,` or `..`, and
    later still an unquoted `}`. Broader than bash (which wants the separator unquoted, at
    the braces' own level, a sequence well formed), never narrower: bash passes over a `}`
    before the first separator, so `{a}b,c}` is `a}b c` and only this order tells.
    `HEAD@{1}..HEAD` and `stash@{0}` have no `}` after their `..` and stay literal, as in
    bash; `HEAD@{1}..HEAD@{2}` is refused, though bash keeps it."""
    first, last = view.find("{"), view.rfind("}")
    if first < 0 or last < first:
        return False
    between = value[first + 1 : last]
    return "," in between or ".." in between


def _check_command_name(name: str) -> None:
    if not name:
        raise ShellParseError("an empty command name")
    if name in RESERVED_WORDS:
        raise ShellParseError(f"the shell keyword `{name}`")
