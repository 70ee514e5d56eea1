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

Reading is a single pass over the text: linear in its length. bash_tokens.py
reads the words and operators; this module reads the simple commands they form.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from copilot_driver.permissions.bash_tokens import (
    DIGITS,
    MAX_LINE_CHARS,
    Operator,
    Token,
    Words,
    read_tokens,
)

# parse_command raises it: its callers catch it from the module they call.
from copilot_driver.permissions.bash_tokens import ShellParseError as ShellParseError

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

_LIST_CONTINUES = frozenset({"&&", "||", "|", "|&"})
"""After these a command must follow (newlines may come first)."""
_PIPES = frozenset({"|", "|&"})

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


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
        if self.operator in ("<&", ">&") and self.target and set(self.target) <= DIGITS:
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
    return _assemble(text, read_tokens(text))


# -- simple commands -------------------------------------------------------------------------


def _assemble(text: str, tokens: list[Token]) -> list[Command]:
    commands: list[Command] = []
    current: list[Token] = []
    previous = ""
    """The last separator; "" at the start."""
    for token in tokens:
        if isinstance(token, Words) or token.is_redirection:
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


def _command(text: str, tokens: list[Token], *, follows: str) -> Command:
    assignments: list[str] = []
    words: list[str] = []
    redirections: list[Redirection] = []
    redirection: Operator | None = None
    """A redirection operator waiting for its target."""
    for token in tokens:
        if isinstance(token, Operator):
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


def _check_words(token: Words) -> None:
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
