"""The script languages sed and awk take as an argument: what a covered script may hold. Pure.

Both languages can run commands and write files from inside the script
(sed's `e` command and `s///e` flag, `w`/`W` and `s///w`; awk's `system()`,
pipes and `print > file`). A name rule such as `shell(sed:*)` covers a
script only when it is plainly inert: for sed, a script this reader parses
completely into commands that only read and print; for awk, a program text
that does not mention any of the constructs that reach outside. Anything
else, a script file (`-f`) included, is refused: the policy cannot see it.

Each function returns None when the arguments are covered, else why not.
"""

from __future__ import annotations

import re

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
_SED_S_FLAGS = frozenset("gpiImM0123456789")
_SED_REFUSED_COMMANDS = {
    "e": "sed's `e` command runs a shell command",
    "w": "sed's `w` command writes a file",
    "W": "sed's `W` command writes a file",
    "r": "sed's `r` command reads a file the policy does not see",
    "R": "sed's `R` command reads a file the policy does not see",
}
_SED_END_OF_COMMAND = frozenset(";\n}#")
_SED_EXPRESSION = r"(?:[^\\/\n]|\\[^\n])*"
"""Up to the next unescaped `/`, as sed's match_slash reads it (without escaped newlines)."""
_SED_FIRST_ADDRESS = rf"(?:[0-9]+(?:~[0-9]+)?|\$|/{_SED_EXPRESSION}/[IM]*)"
_SED_SECOND_ADDRESS = rf"(?:,[ \t]*(?:[0-9]+|\$|[+~][0-9]+|/{_SED_EXPRESSION}/[IM]*))?"
_SED_PLAIN_COMMAND = (
    rf"(?:s/{_SED_EXPRESSION}/{_SED_EXPRESSION}/[gpiImM0-9]*|y/{_SED_EXPRESSION}/{_SED_EXPRESSION}/"
    r"|[=dDgGhHnNpPxzF]|[qQlL][ \t]*[0-9]*)"
)
_SED_ONE = rf"(?:{_SED_FIRST_ADDRESS}{_SED_SECOND_ADDRESS})?[ \t]*(?:![ \t]*)*{_SED_PLAIN_COMMAND}"
_SED_PLAIN_RUN = re.compile(rf"{_SED_ONE}(?:[ \t]*[;\n][ \t;\n]*{_SED_ONE})*[ \t]*(?=[;\n}}#]|$)")
"""The common case, read at once: commands that only read and print, `/`-delimited
expressions, each ending where a command ends. Anything else goes to the reader below."""
_SCRIPT_IN_A_FILE = "reads the script from a file the policy does not see"


class _RefusedError(Exception):
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
    """GNU sed's script grammar, read the way sed reads it; anything unknown is refused."""

    def __init__(self, script: str) -> None:
        self.text = script
        self.i = 0

    def _peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def _skip(self, chars: str) -> None:
        while self.i < len(self.text) and self.text[self.i] in chars:
            self.i += 1

    def _number(self) -> bool:
        start = self.i
        while self._peek().isascii() and self._peek().isdigit():
            self.i += 1
        return self.i > start

    def check(self) -> None:
        while True:
            self._skip(" \t\n;")
            if self.i >= len(self.text):
                return
            if self._peek() == "#":
                self._to_end_of_line()
                continue
            plain = _SED_PLAIN_RUN.match(self.text, self.i)
            if plain is not None:
                self.i = plain.end()
                continue
            self._addresses()
            self._skip(" \t")
            while self._peek() == "!":
                self.i += 1
                self._skip(" \t")
            self._command()

    def _addresses(self) -> None:
        if not self._address(first=True):
            return
        self._skip(" \t")
        if self._peek() == ",":
            self.i += 1
            self._skip(" \t")
            if self._peek() in ("+", "~"):
                self.i += 1
                if not self._number():
                    raise _RefusedError("a sed address the policy cannot read")
            elif not self._address(first=False):
                raise _RefusedError("a sed address the policy cannot read")

    def _address(self, *, first: bool) -> bool:
        char = self._peek()
        if char == "$":
            self.i += 1
            return True
        if char.isascii() and char.isdigit():
            self._number()
            if first and self._peek() == "~":
                self.i += 1
                self._number()
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
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            self.i += 1
            if char == delimiter:
                return
            if char == "\\":
                self.i += 1  # the escaped character, whatever it is
            elif char == "\n":
                raise _RefusedError("a newline inside a sed regular expression or replacement")
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
            self._skip(" \t")
            self._number()
        elif command in _SED_LABEL_COMMANDS:
            self._label(required=command == ":")
        elif command in _SED_TEXT_COMMANDS:
            self._text()
            return
        elif command in ("s", "y"):
            self._substitution(command)
        else:
            shown = command or "nothing"
            raise _RefusedError(f"the sed command `{shown}`, which the policy does not know")
        self._skip(" \t")
        if self.i < len(self.text) and self._peek() not in _SED_END_OF_COMMAND:
            raise _RefusedError(f"unexpected `{self._peek()}` after the sed command `{command}`")

    def _label(self, *, required: bool) -> None:
        self._skip(" \t")
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in "; \t\n}":
            self.i += 1
        if required and self.i == start:
            raise _RefusedError("a sed label without a name")

    def _text(self) -> None:
        """`a`, `i`, `c`: the text runs to the first newline not escaped by a backslash."""
        self._skip(" \t")
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            self.i += 1
            if char == "\\":
                self.i += 1
            elif char == "\n":
                return

    def _substitution(self, command: str) -> None:
        delimiter = self._peek()
        if not delimiter or delimiter in "\n\\":
            raise _RefusedError(f"a sed `{command}` command the policy cannot read")
        self.i += 1
        self._delimited(delimiter)
        self._delimited(delimiter)
        if command == "y":
            return
        while self._peek() in _SED_S_FLAGS and self._peek():
            self.i += 1
        flag = self._peek()
        if flag == "e":
            raise _RefusedError("sed's `s///e` flag runs the pattern space as a command")
        if flag == "w":
            raise _RefusedError("sed's `s///w` flag writes a file")


# -- awk -----------------------------------------------------------------------------------

AWK_VALUE_OPTIONS = frozenset("Fv")
"""The only options covered: the field separator and variable assignments."""
_AWK_REACHES_OUT = re.compile(r"system|getline|\||@|/inet")
"""Commands (`system`, pipes), input from elsewhere (`getline`, gawk's /inet
network files), gawk's `@include`/`@load` and indirect calls."""


def awk_refusal(args: tuple[str, ...]) -> str | None:
    """Why `awk ARGS` is not covered by a rule naming awk, or None."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        if arg.startswith("--") or arg[1] not in AWK_VALUE_OPTIONS:
            return f"`{arg}`: only awk's -F and -v options are covered"
        index += 1 if len(arg) > 2 else 2
    if index >= len(args):
        return None
    program = args[index].replace("\\\n", "")
    reach = _AWK_REACHES_OUT.search(program)
    if reach:
        return f"the awk program uses `{reach.group()}`, which can run commands or reach files"
    if ">" in program and "print" in program:
        return "the awk program may redirect print's output to a file (`>`)"
    return None
