"""The script languages sed and awk take as an argument: what a covered script may hold. Pure.

Both languages can run commands and write files from inside the script
(sed's `e` command and `s///e` flag, `w`/`W` and `s///w`; awk's `system()`,
pipes and `print > file`). A name rule such as `shell(sed:*)` covers a
script only when it is plainly inert: for sed, a script this reader parses
completely into commands that only read and print; for awk, a program that
uses none of the constructs that reach outside (`permissions/awk.py`, which
reads where `>` redirects print's output). Anything else, a script file
(`-f`) included, is refused: the policy cannot see it.

Each function returns None when the arguments are covered, else why not.
"""

from __future__ import annotations

import functools
import re

from copilot_driver.errors import CopilotDriverError

# -- sed -----------------------------------------------------------------------------------

SED_FLAGS = frozenset("nsrEzub")
"""Short options without a value."""
SED_LONG = {
    "expression": "value",
    "file": "value",
    "line-length": "value",
    "in-place": "optional",
    "quiet": "flag",
    "silent": "flag",
    "debug": "flag",
    "posix": "flag",
    "sandbox": "flag",
    "follow-symlinks": "flag",
    "null-data": "flag",
    "zero-terminated": "flag",
    "separate": "flag",
    "unbuffered": "flag",
    "regexp-extended": "flag",
    "binary": "flag",
    "help": "flag",
    "version": "flag",
}
"""GNU sed's long options and whether they take a value; getopt accepts any unique prefix."""
_SED_SIMPLE_COMMANDS = frozenset("=dDgGhHnNpPxzF")
_SED_NUMBER_COMMANDS = frozenset("qQlL")
_SED_LABEL_COMMANDS = frozenset("btT:")
_SED_TEXT_COMMANDS = frozenset("aic")
_SED_S_FLAGS = re.compile(r"[gpiImM0-9]*")
_SED_REFUSED_COMMANDS = {
    "e": "sed's `e` command runs a shell command",
    "w": "sed's `w` command writes a file",
    "W": "sed's `W` command writes a file",
    "r": "sed's `r` command reads a file the policy does not see",
    "R": "sed's `R` command reads a file the policy does not see",
}
_SED_END_OF_COMMAND = frozenset(";\n}#")
_SED_BLANKS = re.compile(r"[ \t]*")
_SED_SEPARATORS = re.compile(r"[ \t\n;]*")
_SED_DIGITS = re.compile(r"[0-9]*")
_SED_NEGATIONS = re.compile(r"(?:![ \t]*)*")
_SED_LABEL = re.compile(r"[^; \t\n}]*")
_SED_TEXT = re.compile(r"[ \t]*(?:[^\\\n]|\\[\s\S]?)*+\n?")
"""`a`, `i`, `c`: the text runs to the first newline not escaped by a backslash."""


def _sed_body(delimiter: str) -> str:
    r"""Up to the next unescaped `delimiter`, as sed's match_slash reads it: a backslash
    escapes any character (a newline too), a bare newline ends nothing (it is refused)."""
    return rf"(?:(?!{delimiter})[^\\\n]|\\[\s\S])*+{delimiter}"


def _sed_delimited(name: str) -> str:
    """A delimiter (any character but a newline or a backslash) and a body it ends."""
    return rf"(?P<{name}>[^\n\\]){_sed_body(f'(?P={name})')}"


_SED_SEPARATORS_RUN = r"[ \t\n;{}]*+"
_SED_END = rf"[ \t]*(?=[;\n}}#]|\Z){_SED_SEPARATORS_RUN}"
_SED_FIRST_ADDRESS = (
    rf"(?:\$|[0-9]++(?:~[0-9]*+)?|/{_sed_body('/')}[IM]*+|\\{_sed_delimited('a')}[IM]*+)"
)
_SED_SECOND_ADDRESS = rf"(?:\$|[0-9]++|/{_sed_body('/')}[IM]*+|\\{_sed_delimited('b')}[IM]*+)"
_SED_ADDRESSES = rf"{_SED_FIRST_ADDRESS}[ \t]*(?:,[ \t]*(?:[+~][0-9]++|{_SED_SECOND_ADDRESS}))?"


def _sed_command(tag: str) -> str:
    """A command that only reads and prints, and the separators after it (`tag` names
    its groups apart: the run below holds this pattern three times)."""
    return (
        rf"(?:[=dDgGhHnNpPxzF]{_SED_END}"
        rf"|s{_sed_delimited('s' + tag)}{_sed_body(f'(?P=s{tag})')}[gpiImM0-9]*+{_SED_END}"
        rf"|[btT][ \t]*[^; \t\n}}]*+{_SED_END}|[qQlL][ \t]*[0-9]*+{_SED_END}"
        rf"|:[ \t]*[^; \t\n}}]++{_SED_END}"
        rf"|y{_sed_delimited('y' + tag)}{_sed_body(f'(?P=y{tag})')}{_SED_END}"
        rf"|[aic]{_SED_TEXT.pattern}{_SED_SEPARATORS_RUN}|[{{}}]{_SED_SEPARATORS_RUN})"
    )


_SED_RUN = (
    rf"{_SED_SEPARATORS_RUN}(?:{_sed_command('')}"
    rf"|(?>{_SED_ADDRESSES}[ \t]*(?:![ \t]*)*+{_sed_command('a')})"
    rf"|(?>(?:![ \t]*)++{_sed_command('b')})|#[^\n]*+{_SED_SEPARATORS_RUN})*+"
)
"""Everything the reader below accepts, read at once: whole runs of commands that only
read and print (addresses, `!`, blocks, labels, text, `s` and `y` with any delimiter),
each kept or dropped whole, never read two ways (atomic groups, possessive repeats), so
a script costs one pass of `re`, its most frequent commands tried first. Where the run
stops, the reader takes over for one command: it refuses it, or reads it and hands
back. The two readings agree (a property test checks it), so the reader is the one to
read for the rules."""


@functools.cache
def _sed_run() -> re.Pattern[str]:
    """_SED_RUN, compiled on first use (it takes milliseconds)."""
    return re.compile(_SED_RUN)


_SCRIPT_IN_A_FILE = "reads the script from a file the policy does not see"


class _RefusedError(CopilotDriverError):
    """Raised inside the sed reader; its message is the refusal."""


def resolve_long_option(given: str, options: dict[str, str]) -> str | None:
    """The long option `--given` stands for (exact, or a unique prefix), or None."""
    if given in options:
        return given
    candidates = [name for name in options if name.startswith(given)]
    return candidates[0] if given and len(candidates) == 1 else None


def sed_refusal(args: tuple[str, ...]) -> str | None:
    """Why `sed ARGS` is not covered by a rule naming sed, or None."""
    try:
        for script in _sed_scripts(args):
            _SedScript(script).check()
    except _RefusedError as refused:
        return str(refused)
    return None


def _sed_scripts(args: tuple[str, ...]) -> list[str]:
    """The scripts of a sed command line (`-e` values, else the first operand)."""
    return _SedCommandLine(args).scripts()


class _SedCommandLine:
    """sed's arguments, read the way sed reads them; an option it does not know is refused."""

    def __init__(self, args: tuple[str, ...]) -> None:
        self.args = args
        self.index = 0
        self.found: list[str] = []

    def scripts(self) -> list[str]:
        operands: list[str] = []
        while self.index < len(self.args):
            arg = self.args[self.index]
            self.index += 1
            if arg == "--":
                operands += self.args[self.index :]
                break
            if arg.startswith("--"):
                self._long_option(arg)
            elif arg.startswith("-") and arg != "-":
                self._short_options(arg)
            else:
                operands.append(arg)
        if not self.found and operands:
            self.found.append(operands[0])
        return self.found

    def _value(self, option: str) -> str:
        if self.index >= len(self.args):
            raise _RefusedError(f"sed's `{option}` has no value")
        self.index += 1
        return self.args[self.index - 1]

    def _long_option(self, arg: str) -> None:
        given, has_value, attached = arg[2:].partition("=")
        name = resolve_long_option(given, SED_LONG)
        if name is None:
            raise _RefusedError(f"`{arg}` is not an option of sed the policy knows")
        if name == "file":
            raise _RefusedError(f"`{arg}` {_SCRIPT_IN_A_FILE}")
        if name == "in-place" and attached:
            raise _RefusedError(f"`{arg}` writes a backup file named by its suffix")
        if name == "expression":
            self.found.append(attached if has_value else self._value(arg))
        elif SED_LONG[name] == "value" and not has_value:
            self._value(arg)

    def _short_options(self, arg: str) -> None:
        """A bundle such as `-ne 'p'`: flags, then at most one option that takes the rest."""
        for position, letter in enumerate(arg[1:], 2):
            rest = arg[position:]
            if letter in SED_FLAGS:
                continue
            if letter == "e":
                self.found.append(rest or self._value(arg))
            elif letter == "f":
                raise _RefusedError(f"`{arg}` {_SCRIPT_IN_A_FILE}")
            elif letter == "i" and rest:
                raise _RefusedError(f"`{arg}` writes a backup file named by its suffix")
            elif letter == "l" and not rest:
                self._value(arg)
            elif letter not in "il":
                raise _RefusedError(f"`{arg}` is not an option of sed the policy knows")
            return


class _SedScript:
    """GNU sed's script grammar, read the way sed reads it; anything unknown is refused.

    `check` reads what _SED_RUN covers at once and gives this reader one command
    wherever the run stops. Every step here is a regular expression or a slice,
    never a loop over characters, so a script costs time in proportion to its length.
    """

    def __init__(self, script: str) -> None:
        self.text = script
        self.i = 0

    def _peek(self) -> str:
        return self.text[self.i : self.i + 1]

    def _match(self, pattern: re.Pattern[str]) -> str:
        found = pattern.match(self.text, self.i)
        assert found is not None  # the patterns used here all match the empty string
        self.i = found.end()
        return found.group()

    def check(self) -> None:
        while True:
            self._match(_sed_run())
            self._match(_SED_SEPARATORS)
            if self.i >= len(self.text):
                return
            if self._peek() == "#":
                self._to_end_of_line()
                continue
            self._addresses()
            self._match(_SED_BLANKS)
            self._match(_SED_NEGATIONS)
            self._command()

    def _addresses(self) -> None:
        if not self._address(first=True):
            return
        self._match(_SED_BLANKS)
        if self._peek() == ",":
            self.i += 1
            self._match(_SED_BLANKS)
            if self._peek() in ("+", "~"):
                self.i += 1
                if not self._match(_SED_DIGITS):
                    raise _RefusedError("a sed address the policy cannot read")
            elif not self._address(first=False):
                raise _RefusedError("a sed address the policy cannot read")

    def _address(self, *, first: bool) -> bool:
        char = self._peek()
        if char == "$":
            self.i += 1
            return True
        if char.isascii() and char.isdigit():
            self._match(_SED_DIGITS)
            if first and self._peek() == "~":
                self.i += 1
                self._match(_SED_DIGITS)
            return True
        if char in ("/", "\\"):
            if char == "\\":
                self.i += 1
                char = self._peek()
                if not char or char in "\n\\":
                    raise _RefusedError("a sed address the policy cannot read")
            self.i += 1
            self._delimited(char)
            while self._peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def _delimited(self, delimiter: str) -> None:
        """Up to the next unescaped `delimiter` (sed's match_slash); the cursor goes past it."""
        self._match(_sed_delimiter_body(delimiter))
        if self._peek() == delimiter:
            self.i += 1
        elif self._peek() == "\n":
            raise _RefusedError("a newline inside a sed regular expression or replacement")
        else:  # the end, or a backslash that escapes nothing
            raise _RefusedError("an unterminated sed expression")

    def _to_end_of_line(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    def _command(self) -> None:
        command = self._peek()
        self.i += 1
        if command in ("{", "}"):
            return
        if command in _SED_REFUSED_COMMANDS:
            raise _RefusedError(_SED_REFUSED_COMMANDS[command])
        if command in _SED_SIMPLE_COMMANDS:
            pass
        elif command in _SED_NUMBER_COMMANDS:
            self._match(_SED_BLANKS)
            self._match(_SED_DIGITS)
        elif command in _SED_LABEL_COMMANDS:
            self._match(_SED_BLANKS)
            if not self._match(_SED_LABEL) and command == ":":
                raise _RefusedError("a sed label without a name")
        elif command in _SED_TEXT_COMMANDS:
            self._match(_SED_TEXT)
            return
        elif command in ("s", "y"):
            self._substitution(command)
        else:
            shown = command or "nothing"
            raise _RefusedError(f"the sed command `{shown}`, which the policy does not know")
        self._match(_SED_BLANKS)
        if self.i < len(self.text) and self._peek() not in _SED_END_OF_COMMAND:
            raise _RefusedError(f"unexpected `{self._peek()}` after the sed command `{command}`")

    def _substitution(self, command: str) -> None:
        delimiter = self._peek()
        if not delimiter or delimiter in "\n\\":
            raise _RefusedError(f"a sed `{command}` command the policy cannot read")
        self.i += 1
        self._delimited(delimiter)
        self._delimited(delimiter)
        if command == "y":
            return
        self._match(_SED_S_FLAGS)
        flag = self._peek()
        if flag == "e":
            raise _RefusedError("sed's `s///e` flag runs the pattern space as a command")
        if flag == "w":
            raise _RefusedError("sed's `s///w` flag writes a file")


@functools.lru_cache(maxsize=64)
def _sed_delimiter_body(delimiter: str) -> re.Pattern[str]:
    """What `_delimited` skips: up to the delimiter, a bare newline or the end."""
    return re.compile(rf"(?:[^{re.escape(delimiter)}\\\n]|\\[\s\S])*+")
