"""awk programs: what a rule naming awk (`shell(awk:*)`) covers. Pure.

The rule runs whichever awk the machine has (gawk, mawk, the one true awk
that Debian calls original-awk and BSD nawk, busybox), so what counts is the
union of their features. A program reaches outside through:

- commands: `system()`, `print | "cmd"`, `"cmd" | getline`, gawk's `|&`;
- files it writes: `print > "file"`, `print >> "file"` (printf alike);
- files the command line does not name: `getline < "file"`, and ARGV, which
  awk opens as its input files once BEGIN has run (a program can set it
  directly, through an array parameter, `split()`, or gawk's SYMTAB);
- network connections: gawk's special files `/inet/tcp/...`, `/inet4/...`,
  `/inet6/...`, used in any of the ways above or named as a file operand;
- code the policy cannot see: `-f FILE`, gawk's `@include`/`@load`/`-i`/
  `-l`/`-e`, indirect calls `@f()`.

Only -F and -v are covered (their values are plain strings). The words
system, getline, ARGV and SYMTAB, the characters `|` and `@` and the text
`/inet` are refused wherever they stand in the program, strings and comments
included (fail closed); a file operand starting with `/inet` is refused.

`>` needs reading: it is also the comparison (`$3 > 100`, `NR>1`). Every awk
takes it for a redirection exactly when it stands at the top level of a print
or printf statement, outside parentheses (gawk's lexer: `in_print &&
in_parens == 0`; mawk's: `print_flag && paren_cnt == 0`; the one true awk's
grammar); `>>` is never a comparison. So the program is read as awk's lexers
read it, and refused when unsure:

- a string runs to the next unescaped `"`; a comment from `#` to the end of
  the line; a backslash outside them continues the line only before a
  newline (mawk allows blanks between); any other character awk does not
  know is refused;
- a `/` is a division after an operand (a name, a number, a string, `]`,
  `)`) and starts a regular expression after an operator or at the start of
  a statement, as mawk decides (gawk and the one true awk decide in their
  grammars, and agree wherever the program parses). Where the awks differ
  (after `if (...)`, `length`, a keyword, a builtin, `$`, `++`, another
  regular expression) the `/` is refused. A regular expression runs to the
  next unescaped `/` on its line; gawk and mawk skip a `/` inside a bracket
  expression and the one true awk does not, so brackets are accepted only
  in the simple forms where every awk ends it at the same `/`;
- a print statement runs from `print`/`printf` to a `;`, `}` or newline at
  its own parenthesis depth; a newline ends it only after a token that can
  end a statement (`print a,` continues on the next line, as in awk);
- in it, a `>` outside parentheses is refused; so is a `>>` anywhere.

The reader reads token by token; regular expressions read whole runs of the
common forms at once (a run of statements, a whole print statement, a
parenthesised group two deep) and hand back where they stop, so a program
costs a few passes of `re`. A program longer than MAX_PROGRAM_CHARS, or that
takes more than READ_STEPS tokens and runs, is refused.
"""

from __future__ import annotations

import functools
import re

from copilot_driver.errors import CopilotDriverError

AWK_VALUE_OPTIONS = frozenset("Fv")
"""The only options covered: the field separator and variable assignments."""
MAX_PROGRAM_CHARS = 16 * 1024
"""Longer programs are refused unread: reading costs up to a few hundred nanoseconds a
token, and a decision must stay within milliseconds on a 64 KiB command line."""
READ_STEPS = 3000
"""Tokens and runs the reader takes before it refuses a program as too intricate."""

_AWK_REACHES_OUT = re.compile(r"system|getline|ARGV|SYMTAB|\||@|/inet")
"""Commands (`system`, pipes), input from elsewhere (`getline`, gawk's /inet network
files, ARGV and SYMTAB, through which a program names its own input files), gawk's
`@include`/`@load` and indirect calls."""
_CONTINUATIONS = re.compile(r"\\[ \t]*\r?\n")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KEYWORDS = _words(
    "BEGIN END BEGINFILE ENDFILE function func if else while for do break continue next "
    "nextfile exit return delete in getline print printf switch case default"
)
_BUILTINS = _words(
    "length substr index split sub gsub match sprintf sin cos atan2 exp log sqrt int rand "
    "srand tolower toupper system close fflush gensub patsplit strftime systime mktime asort "
    "asorti isarray typeof and or xor compl lshift rshift strtonum bindtextdomain dcgettext "
    "dcngettext mkbool"
)
"""Builtin functions of gawk, mawk, the one true awk and busybox. mawk reads a `/`
after one as a regular expression (`length / 2 /`), the others as a division."""
_CONTROL = frozenset({"if", "while", "for", "switch"})
"""After their `( ... )` a statement starts: gawk reads `/` as a regular expression there,
mawk as a division."""
_SLASH_STARTS_REGEX = frozenset({"print", "printf", "return", "exit", "else", "do"})
_ENDS_A_STATEMENT = frozenset({"next", "nextfile", "break", "continue", "exit", "return"})
_ENDS_A_STATEMENT |= _BUILTINS | {"getline", "print", "printf"}

# What a `/` read next is.
_REGEX, _DIVISION, _UNSURE = "regex", "division", "unsure"

# -- the tokens ----------------------------------------------------------------------------

_GAP = r"(?:[ \t]|\\[ \t]*\n)"
"""Blanks and continuations: nothing to awk."""
_STRING = r'"(?:[^"\\\n]|\\[\s\S])*+"'
_BRACKET = r"\[\^?\]?(?:[^\\\[\]\n/]|\\[\s\S]|\[:[A-Za-z]+:\])*+\]"
"""A bracket expression every awk ends at its first `]` that is not its first character
(character classes such as `[:alpha:]` inside), and that holds no `/`."""
_REGEX_LITERAL = rf"/(?:[^/\\\n\[]|\\[\s\S]|{_BRACKET})*+/"
_NUMBER = r"(?:[0-9]|\.[0-9])[A-Za-z_0-9.]*+"
_WORD_END = r"(?![A-Za-z_0-9])"


def _either(words: frozenset[str]) -> str:
    return rf"(?:{'|'.join(sorted(words))}){_WORD_END}"


_NO_SLASH = rf"(?!{_GAP}*+/)"
_THEN_DIVISION = rf"(?:{_GAP}*+/=?)?"
"""An operand takes the `/` after it as a division, so no other reading gets it."""
_OPERAND = rf"(?:{_STRING}|{_NUMBER}|\])"
_WORD = rf"(?!{_either(_CONTROL | {'print', 'printf'})})[A-Za-z_][A-Za-z_0-9]*+{_NO_SLASH}"
"""A word no `/` follows (a run leaves a name before a `/` to the reader, which knows a
name from a keyword), other than print, printf and the words before a condition."""
_NEWLINES = rf"(?:{_GAP}|\#[^\n]*+|\n)*+"
"""After an operator, newlines continue the statement."""
_THEN_DIVISION_NEWLINES = rf"(?:{_GAP}*+/=?{_NEWLINES})?"
"""In a print statement, newlines after a division continue it too."""
_OPERATOR = r"(?:&&|\*\*?=?|!~|\+(?!\+)=?|-(?!-)=?|[%^=!<~]=?|[?,\[]|:(?!:))"


def _group(depth: int) -> str:
    """`( ... )` holding any expression, parentheses `depth` deep at most."""
    inner = rf"|{_group(depth - 1)}{_THEN_DIVISION}" if depth > 1 else ""
    return (
        rf"\((?>[ \t\n;]++|{_OPERATOR}|>(?!>)=?|{_WORD}|{_OPERAND}{_THEN_DIVISION}"
        rf"|\\[ \t]*\n|\#[^\n]*+|(?:\+\+|--|\$){_NO_SLASH}|{_REGEX_LITERAL}{_NO_SLASH}{inner})*+\)"
    )


_GROUP = _group(2)
_CONTINUING_WORD = _either(_KEYWORDS - _ENDS_A_STATEMENT)
_PRINT_STATEMENT = (
    rf"print(?:f)?{_WORD_END}(?>[ \t]++|{_OPERATOR}{_NEWLINES}|in{_WORD_END}{_NO_SLASH}{_NEWLINES}"
    rf"|(?!{_CONTINUING_WORD}){_WORD}|(?:{_OPERAND}|{_GROUP}){_THEN_DIVISION_NEWLINES}|\\[ \t]*\n"
    rf"|\#[^\n]*+|(?:\+\+|--){_NO_SLASH}|\${_NO_SLASH}{_NEWLINES}|{_REGEX_LITERAL}{_NO_SLASH})*+"
    rf"(?=[;}}\n]|\Z)"
)
"""A whole print statement with no `>` outside parentheses: a newline is read inside it
only after an operator or a word that continues the statement (it ends it elsewhere)."""
_STATEMENTS = (
    rf"(?>[ \t\n;{{}}]++|{_OPERATOR}|>(?!>)=?|{_WORD}|(?:{_OPERAND}|{_GROUP}){_THEN_DIVISION}"
    rf"|\\[ \t]*\n|\#[^\n]*+|(?:\+\+|--|\$){_NO_SLASH}|{_REGEX_LITERAL}{_NO_SLASH}"
    rf"|{_either(_CONTROL)}{_GAP}*+{_GROUP}{_NO_SLASH}|{_PRINT_STATEMENT})*+"
)
"""Statements outside parentheses, whole print statements that redirect nothing among
them, in one pass; parentheses only as balanced groups, so the depth is unchanged."""


@functools.cache
def _statements() -> re.Pattern[str]:
    """_STATEMENTS, compiled on first use: it takes milliseconds, which a run that
    never meets awk need not pay when the policy is imported."""
    return re.compile(_STATEMENTS)


_BLANKS = re.compile(rf"(?:{_GAP}|\#[^\n]*+)*+")
_SLASH_AHEAD = re.compile(rf"{_GAP}*+/")

_TOKEN = re.compile(
    rf"(?P<blank>{_GAP}+|\#[^\n]*+)|(?P<newline>\n)|(?P<operand>{_STRING}|{_NUMBER}|\])"
    r"|(?P<word>[A-Za-z_][A-Za-z_0-9]*+)|(?P<slash>/)|(?P<open>\((?:[ \t]*\()*+)"
    r"|(?P<close>\)(?:[ \t]*\))*+)|(?P<end>[;{}])|(?P<greater>>>?)|(?P<incdec>\+\+|--)"
    rf"|(?P<dollar>\$)|(?P<operator>{_OPERATOR})"
)
_REGEX_LITERAL_PATTERN = re.compile(_REGEX_LITERAL)


class _RefusedError(CopilotDriverError):
    """Raised inside the reader; its message is the refusal."""


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
    program, operands = args[index], args[index + 1 :]
    if len(program) > MAX_PROGRAM_CHARS:
        return f"an awk program longer than {MAX_PROGRAM_CHARS // 1024} KiB (the policy reads none)"
    reach = _AWK_REACHES_OUT.search(_CONTINUATIONS.sub("", program))
    if reach:
        return f"the awk program uses `{reach.group()}`, which can run commands or reach files"
    network = next((operand for operand in operands if operand.startswith("/inet")), None)
    if network is not None:
        return f"`{network}`: gawk opens a network connection for a file named /inet..."
    try:
        _AwkReader(program).check()
    except _RefusedError as refused:
        return str(refused)
    return None


class _AwkReader:
    """The program's tokens, read as awk's lexers read them (see the module)."""

    def __init__(self, program: str, *, runs: bool = True) -> None:
        self.text = program
        self.i = 0
        self.runs = runs
        """Read the common forms a run at a time (False: token by token, for the tests)."""
        self.slash = _REGEX
        """What a `/` read next is."""
        self.newline_ends = False
        """Whether a newline read next ends the statement before it."""
        self.depth = 0
        self.conditions: list[int] = []
        """The depths at which the open parentheses of if/while/for/switch stand."""
        self.condition_next = False
        """The last word was if/while/for/switch: the next `(` opens its condition."""
        self.in_print = False

    def check(self) -> None:
        for _ in range(READ_STEPS):
            if self.i >= len(self.text):
                return
            if self.runs and self._run():
                continue
            token = _TOKEN.match(self.text, self.i)
            if token is None:
                char = self.text[self.i]
                shown = f"`{char}`" if char.isprintable() else repr(char)
                raise _RefusedError(f"{shown} in the awk program, which the policy does not read")
            self.i = token.end()
            kind = token.lastgroup
            if kind == "open" and self.condition_next:
                self.conditions.append(self.depth)
            if kind not in ("blank", "newline"):
                self.condition_next = False
            getattr(self, f"_{kind}")(token.group())
        if self.i < len(self.text):
            raise _RefusedError("an awk program too intricate for the policy to read")

    def _run(self) -> bool:
        """Read a run of statements at once; whether there was one."""
        if self.in_print or self.depth or self.condition_next:
            return False  # the run reads none of these
        if self.slash != _REGEX and _SLASH_AHEAD.match(self.text, self.i) is not None:
            return False  # a run reads a `/` as if an operator came before it
        start = self.i
        run = _statements().match(self.text, start)
        assert run is not None  # a run may be empty
        self.i = run.end()
        if _BLANKS.fullmatch(self.text, start, self.i) is None:
            self.slash = _REGEX  # it stops before a `/` only where one starts a regex
        return self.i > start

    def _operand(self, _: str) -> None:
        self.slash, self.newline_ends = _DIVISION, True

    def _blank(self, _: str) -> None:
        pass

    def _newline(self, _: str) -> None:
        if self.in_print and self.newline_ends and self.depth == 0:
            self.in_print = False
        self.slash = _REGEX

    def _word(self, word: str) -> None:
        self.newline_ends = word in _ENDS_A_STATEMENT or word not in _KEYWORDS
        if word in ("print", "printf"):
            if self.in_print or self.depth:
                raise _RefusedError(f"a `{word}` the policy cannot place in the awk program")
            self.in_print = True
        if word in _SLASH_STARTS_REGEX:
            self.slash = _REGEX
        elif word in _KEYWORDS or word in _BUILTINS:
            self.slash = _UNSURE
            self.condition_next = word in _CONTROL
        else:
            self.slash = _DIVISION

    def _slash(self, _: str) -> None:
        if self.slash == _UNSURE:
            raise _RefusedError("a `/` in the awk program that awks read differently")
        if self.slash == _DIVISION:
            self.i += self.text.startswith("=", self.i)
            self.slash, self.newline_ends = _REGEX, False
            return
        regex = _REGEX_LITERAL_PATTERN.match(self.text, self.i - 1)
        if regex is None:
            raise _RefusedError("an awk regular expression the policy cannot delimit")
        self.i = regex.end()
        self.slash, self.newline_ends = _UNSURE, True

    def _open(self, opened: str) -> None:
        self.depth += opened.count("(")
        self.slash, self.newline_ends = _REGEX, False

    def _close(self, closed: str) -> None:
        self.depth -= closed.count(")")
        if self.depth < 0:
            raise _RefusedError("an unbalanced `)` in the awk program")
        condition = False
        while self.conditions and self.conditions[-1] >= self.depth:
            condition = self.conditions.pop() == self.depth
        self.slash = _UNSURE if condition else _DIVISION
        self.newline_ends = True

    def _end(self, char: str) -> None:
        if self.in_print and self.depth == 0 and char in ";}":
            self.in_print = False
        self.slash, self.newline_ends = _REGEX, False

    def _greater(self, greater: str) -> None:
        if greater == ">>" or (self.in_print and self.depth == 0):
            raise _RefusedError(
                f"the awk program may redirect print's output to a file (`{greater}`)"
            )
        self.slash, self.newline_ends = _REGEX, False

    def _incdec(self, _: str) -> None:
        self.slash, self.newline_ends = _UNSURE, True

    def _dollar(self, _: str) -> None:
        self.slash, self.newline_ends = _UNSURE, False

    def _operator(self, _: str) -> None:
        self.slash, self.newline_ends = _REGEX, False
