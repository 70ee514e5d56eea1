"""A seeded generator of command lines built to put every kind of piece next to every other.

The shell reader (`copilot_driver.permissions.bash`) went wrong where two
pieces touch: quotes glued to the digits before a redirection (`''1<`,
`1''<`, `""2>`) were read as a descriptor, where bash reads an argument.
Hypothesis draws a few thousand lines per run; a corner like that needs
tens of thousands, and a plain `random.Random` makes them in milliseconds.

A line is a list of tokens, each of a kind: word pieces (plain characters,
digits, '...', "...", $'...', backslash escapes, continuations, brace and
glob characters, `!`, `~`, `#`, `$`), blanks, the redirection operators
(`< > >> >| <> <& >& &> &>>`, and `<<`, `<<<`, `<(` which must be refused),
the separators (`; && || | |& newline`) and comments. Pieces are glued in
any order, before and after operators, with continuations inside operators,
between digits and operators, and anywhere else. Half of the lines are
*clean* (only pieces a rule can cover) so that many are approved: only
approved lines are run and compared with bash. The other half may hold
anything.

`Line.features()` names what an approved line exercises, so a test can show
(and assert) that the corners really were checked.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

STATUSES = {"ls": 0, "cat": 0, "wc": 0, "head": 0, "git": 0, "sed": 0, "grep": 1, "diff": 1}
"""The programs the rules name, none a bash builtin (each run is observed), and the status
its printer exits with: `grep` and `diff` "fail", so `&&` and `||` skip both ways."""
PROGRAMS = tuple(STATUSES)
DENIED = ("touch", "rm")
"""Named by no rule: a line running them is never approved."""
RULES = tuple(f"shell({name}:*)" for name in PROGRAMS)

Token = tuple[str, str]
"""(kind, text). Kinds: the piece kinds below, `blank`, `comment`, `redirection:OP`,
`separator:SEP`."""

CONTINUATION = "\\\n"
_CLEAN_PLAIN = (
    "a", "x", "ab", "-n", "-la", "--all", "HEAD", "src/", "a.b", ".", "..", "-", "x=", "k:",
    ",", "a,b", "=", ":", "@", "%", "^", "+", "_", "/", "a..b",
)  # fmt: skip
"""Unquoted literal pieces..."""
_PLAIN = (*_CLEAN_PLAIN, "é")
"""... and one outside the subset when unquoted."""
_DIGITS = ("0", "1", "2", "0", "1", "2", "3", "9", "01", "12", "10")
_SINGLE = (
    "", "", "1", "2", "a b", "x", "#", "*", "?", "~", "{a,b}", "$x", "`x`", '"', "\\",
    CONTINUATION, "\\\\\n", "!", "\n", "é", ";|&", "<>", "-c", "1>", "..",
)  # fmt: skip
"""Inside '...': all literal, continuations too."""
_CLEAN_DOUBLE = (
    "", "", "1", "2", "a b", "#", "*", "~", "{a,b}", "{1..2}", "'", '\\"', "\\\\", "\\x",
    CONTINUATION, "a\\\nb", "\\\\\n", "!", "a!b", "\\!", "\n", "é", ";|&<>",
)  # fmt: skip
"""Inside "...": literal but for escapes and continuations (`\\!` stays two characters)..."""
_DOUBLE = (*_CLEAN_DOUBLE, "$x", "`x`", "\\$")
"""... and what the reader refuses there."""
_CLEAN_ESCAPED = " ;&|<>(){}[]*?~#'\"=:,.!\\\tax12-"
_ESCAPED = _CLEAN_ESCAPED + "$`é"
"""Escaped characters; the reader refuses `\\$`, `\\``, and `é` (not ASCII)."""
_CLEAN_BRACES = ("{", "}", "{x}", "@{1}", "{}")
_BRACES_LITERAL = (*_CLEAN_BRACES, "{a..bc}", "{1..}", "{1..3..x}", "{a,b")
"""Brace shapes bash leaves as they are."""
_BRACES_EXPANDED = ("{a,b}", "{1..3}", "{a..c}", "{1..3..2}", "{,}", "{a{,b}", "{x,}")
"""Brace shapes bash expands (`HEAD@{1}..HEAD` is literal: `..` needs `{x..y}`)."""
_BANGS = ("!", "!!", "!x")
_TILDES = ("~", "~/x", "~root", "~+")
_GLOBS = ("*", "?", "[a]", "[", "]", "[!a]", "*.txt")
_DOLLARS = ("$x", "$(ls)", "`ls`", "${x}", "$", "$1", "$'a'", "$'\\x41'", '$"a"')

_CLEAN_PIECES = (
    ("plain", 30), ("digits", 12), ("single", 12), ("double", 12), ("escape", 10),
    ("continuation", 5), ("brace", 5), ("hash", 3),
)  # fmt: skip
_RISKY_PIECES = (
    *_CLEAN_PIECES, ("expanding-brace", 4), ("bang", 5), ("tilde", 3), ("glob", 3),
    ("dollar", 2), ("lookalike", 4),
)  # fmt: skip
_LOOKALIKES = (
    "HEAD@{1}..HEAD", "x{1..3}", "{a,b}c", "v{1.2}", "@{-1}", "{..}", "a{b}c,d", "{a}b,c}",
    "{x},}", "{}a,b}", "{},x}", "x{y}z,w}", "{a,{b}", "{a,b}}",
)  # fmt: skip
"""Words that look like a brace expansion: bash decides which are (`{a}b,c}` is `a}b c`:
a `}` with no comma before it does not close the braces; `{}` is no brace at all)."""

OPERATORS = ("<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>")
REFUSED_OPERATORS = ("<<", "<<<", "<(", ">(")
_OPERATOR_WEIGHTS = (10, 12, 8, 5, 5, 6, 10, 6, 5)
_SEPARATORS = {
    ";": (";", " ;", "; ", " ; ", ";\\\n", " ;\n"),
    "&&": (" && ", "&&", " &\\\n& ", "&& \\\n", " &&\n", "&&\n\n "),
    "||": (" || ", "||", " |\\\n| ", " ||\n", "||\\\n"),
    "|": (" | ", "|", " |\n ", "|\\\n "),
    "|&": (" |& ", "|&", " |\\\n& ", "|&\n"),
    "\n": ("\n", " \n", "\n\n", "\n\t"),
}
_REFUSED_SEPARATORS = (" & ", ";;", " ;& ", "&\n", " &")
_BLANKS = (" ", " ", " ", "  ", "\t", " \\\n", "\\\n ", " \\\n\t")
_NULL_SPELLINGS: tuple[tuple[Token, ...], ...] = (
    (("plain", "/dev/null"),),
    (("plain", "/dev/null"),),
    (("double", '"/dev/null"'),),
    (("single", "'/dev/null'"),),
    (("plain", "/dev/nu"), ("single", "''"), ("plain", "ll")),
    (("plain", "/dev/"), ("escape", "\\n"), ("plain", "ull")),
    (("plain", "/dev/nul"), ("continuation", CONTINUATION), ("plain", "l")),
    (("escape", "\\/"), ("plain", "dev/null")),
    (("plain", "/dev/"), ("double", '"null"')),
)


def _quoted_digits(rng: random.Random, digits: str) -> tuple[Token, ...]:
    """`digits` with quotes, escapes or continuations glued on: an argument to bash, except
    a continuation alone (removed before anything else)."""
    shapes: tuple[tuple[Token, ...], ...] = (
        (("single", "''"), ("digits", digits)),
        (("digits", digits), ("single", "''")),
        (("double", '""'), ("digits", digits)),
        (("digits", digits), ("double", '""')),
        (("single", f"'{digits}'"),),
        (("double", f'"{digits}"'),),
        (("escape", f"\\{digits[0]}"), ("digits", digits[1:])),
        (("digits", digits), ("escape", "\\1")),
        (("single", "''"), ("digits", digits), ("continuation", CONTINUATION)),
        (("digits", digits[:1]), ("double", '""'), ("digits", digits[1:] or "0")),
    )
    return tuple(token for token in rng.choice(shapes) if token[1])


class _Builder:
    """One line's tokens, drawn from `rng`; `clean` lines hold only coverable pieces."""

    def __init__(self, rng: random.Random, *, clean: bool) -> None:
        self.rng = rng
        self.clean = clean
        self.tokens: list[Token] = []

    def chance(self, percent: float) -> bool:
        return self.rng.random() * 100 < percent

    def add(self, *tokens: Token) -> None:
        self.tokens.extend(tokens)

    def line(self) -> list[Token]:
        if self.chance(5):
            self.add(self.rng.choice((("blank", " "), ("blank", "\n"), ("comment", "# c\n"))))
        for index in range(self.rng.choice((1, 1, 2, 2, 2, 3, 3, 4))):
            if index:
                self.separator()
            self.command()
        if self.chance(15):
            self.trailer()
            if self.tokens[-1] == ("escape", "\\\\"):
                self.add(("separator:\n", "\n"))
                self.command()
        if self.chance(30):  # a continuation anywhere at all
            at = self.rng.randrange(len(self.tokens) + 1)
            self.tokens.insert(at, ("continuation", CONTINUATION))
        return self.tokens

    def separator(self) -> None:
        if not self.clean and self.chance(4):
            self.add(("separator:refused", self.rng.choice(_REFUSED_SEPARATORS)))
            return
        if self.chance(6):
            self.add(("comment", self.rng.choice((" # c", " #", "\t#x;y"))))
            self.add(("separator:\n", "\n"))
            return
        kind = self.rng.choice((";", ";", "&&", "&&", "||", "||", "|", "|", "|&", "\n"))
        self.add((f"separator:{kind}", self.rng.choice(_SEPARATORS[kind])))

    def trailer(self) -> None:
        choices = [
            ("comment", " # c"),
            ("comment", " #"),
            ("separator:;", ";"),
            ("separator:;", " ;"),
            ("separator:\n", "\n"),
            ("continuation", CONTINUATION),
            ("blank", " \\\n"),
            ("escape", "\\\\"),  # an escaped backslash, then a newline
        ]
        if not self.clean:
            choices += [("escape", " \\"), ("separator:refused", " &"), ("separator:|", " |")]
        self.add(self.rng.choice(choices))

    def command(self) -> None:
        opened: list[str] = []
        if self.chance(8):
            self.redirection(opened)
            self.blank()
        if not self.clean and self.chance(8):
            prefix = self.rng.choice(("X=1", "!", "{", "time", "A=~"))
            self.add(("plain", prefix))
            self.blank()
        self.name()
        last = "word"
        for _ in range(self.rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 5))):
            if self.chance(35):
                if last != "word" or not self.chance(3 if self.clean else 40):
                    self.blank()
                self.redirection(opened)
                last = "redirection"
            else:
                self.blank()
                self.word()
                last = "word"

    def blank(self) -> None:
        self.add(("blank", self.rng.choice(_BLANKS)))

    def name(self) -> None:
        if not self.clean and self.chance(6):
            name = self.rng.choice(DENIED)
        else:
            name = self.rng.choices(PROGRAMS, (10, 10, 8, 8, 4, 2, 8, 6))[0]
        spelling = self.rng.choices(range(7), (60, 6, 6, 6, 8, 7, 7))[0]
        if spelling == 0:
            self.add(("plain", name))
        elif spelling == 1:
            self.add(("single", f"'{name}'"))
        elif spelling == 2:
            self.add(("double", f'"{name}"'))
        elif spelling == 3:
            self.add(("escape", "\\" + name[0]), ("plain", name[1:]))
        elif spelling == 4:
            self.add(("plain", name[:1]), ("continuation", CONTINUATION), ("plain", name[1:]))
        elif spelling == 5:
            self.add(("plain", name[:1]), ("single", "''"), ("plain", name[1:]))
        else:
            self.add(("plain", name[:-1]), ("double", f'"{name[-1]}"'))

    def word(self) -> None:
        pieces = _CLEAN_PIECES if self.clean else _RISKY_PIECES
        kinds = [kind for kind, _ in pieces]
        weights = [weight for _, weight in pieces]
        for index in range(self.rng.choice((1, 1, 2, 2, 3))):
            kind = self.rng.choices(kinds, weights)[0]
            if kind == "hash" and index == 0 and not self.chance(10):
                kind = "plain"  # mostly inside a word: `#` starting one is a comment
            self.add(self.piece(kind))

    def piece(self, kind: str) -> Token:
        rng = self.rng
        if kind == "plain":
            text = rng.choice(_CLEAN_PLAIN if self.clean else _PLAIN)
        elif kind == "digits":
            text = rng.choice(_DIGITS)
        elif kind == "single":
            text = f"'{rng.choice(_SINGLE)}'"
        elif kind == "double":
            text = f'"{rng.choice(_CLEAN_DOUBLE if self.clean else _DOUBLE)}"'
        elif kind == "escape":
            text = "\\" + rng.choice(_CLEAN_ESCAPED if self.clean else _ESCAPED)
        elif kind == "continuation":
            text = CONTINUATION
        elif kind == "brace":
            text = rng.choice(_CLEAN_BRACES if self.clean else _BRACES_LITERAL)
        elif kind == "hash":
            text = "#"
        else:
            text = rng.choice(
                {
                    "expanding-brace": _BRACES_EXPANDED,
                    "bang": _BANGS,
                    "tilde": _TILDES,
                    "glob": _GLOBS,
                    "dollar": _DOLLARS,
                    "lookalike": _LOOKALIKES,
                }[kind]
            )
        return (kind, text)

    def redirection(self, opened: list[str]) -> None:
        rng = self.rng
        refused = not self.clean and self.chance(3)
        operator = rng.choices(OPERATORS, _OPERATOR_WEIGHTS)[0]
        roll = rng.random() * 100
        digits = rng.choice(_DIGITS[:6])
        # Clean lines: mostly no descriptor or a real one; quotes glued to the digits, or
        # digits glued to `&>`, make an argument (bash) and a refused line (the reader).
        odds = (45, 80, 90, 97) if self.clean else (25, 45, 60, 92)
        if roll < odds[0] or (self.clean and operator.startswith("&")):
            pass
        elif roll < odds[1]:
            self.add(("digits", digits))
            opened.append(digits)
        elif roll < odds[2]:
            self.add(("digits", digits), ("continuation", CONTINUATION))
            opened.append(digits)
        elif roll < odds[3]:
            self.add(*_quoted_digits(rng, digits))
        else:
            self.add(rng.choice((("plain", "x"), ("plain", "a1"), ("brace", "{x}"))))
        if refused:
            self.add(("redirection:refused", rng.choice(REFUSED_OPERATORS)))
            self.add(("plain", "x)"))
            return
        text = operator
        if len(operator) > 1 and self.chance(25):
            at = rng.randrange(1, len(operator))
            text = operator[:at] + CONTINUATION + operator[at:]
        self.add((f"redirection:{operator}", text))
        gap = rng.choices(("", " ", CONTINUATION, " \\\n "), (55, 25, 10, 10))[0]
        if gap:
            self.add(("continuation", gap) if gap == CONTINUATION else ("blank", gap))
        self.target(operator, opened)

    def target(self, operator: str, opened: Sequence[str]) -> None:
        rng = self.rng
        if operator in ("<&", ">&") and self.chance(75):
            digits = rng.choice(("0", "1", "2", "1", "2", *opened))
            shapes: tuple[tuple[Token, ...], ...] = (
                (("digits", digits),),
                (("digits", digits),),
                _quoted_digits(rng, digits),
                (("digits", "0"), ("digits", digits)),
            )
            self.add(*rng.choice(shapes))
        elif self.chance(96 if self.clean else 88):
            self.add(*rng.choice(_NULL_SPELLINGS))
        else:
            self.add(rng.choice((("plain", "out"), ("digits", "1"), ("plain", "-"))))


@dataclass(frozen=True)
class Line:
    text: str
    tokens: tuple[Token, ...]

    def features(self) -> frozenset[str]:
        """What this line exercises: its piece kinds, operators and separators, the kinds
        glued together (`single+digits`), and the corners by name."""
        found: set[str] = set()
        previous = ""
        chunk: list[Token] = []
        """The pieces glued together up to here (a word, or digits before an operator)."""
        target = False
        """Whether `chunk` is a redirection's target."""
        comment = False
        """Inside a comment (a `#` piece starting a word): to the next newline."""
        for kind, text in (*self.tokens, ("blank", "")):
            if comment:
                if "\n" in text:
                    comment, previous, chunk, target = False, "", [], False
                continue
            category = kind.split(":", 1)[0]
            if category == "hash" and all(k == "continuation" for k, _ in chunk):
                comment = True
                found.add("comment")
                continue
            found.add(kind)
            if CONTINUATION in text and category in ("redirection", "separator"):
                found.add("continuation inside an operator")
            if category in _SPACERS or category == "redirection":
                if target and _quoted_digits_in(chunk):
                    found.add("quoted digits as a redirection's target")
                if category == "redirection" and not target and _quoted_digits_in(chunk):
                    found.add("quoted digits glued to a redirection")
                if category == "redirection":
                    found |= _before_redirection(chunk)
                target = category == "redirection" or (target and not chunk)
            if category in _SPACERS:
                previous, chunk = "", []
                continue
            if previous:
                found.add(f"{previous}+{category}")
            previous = category
            chunk = [] if category == "redirection" else [*chunk, (kind, text)]
        found.discard("blank")
        return frozenset(found)


_SPACERS = frozenset({"blank", "separator", "comment"})


def _quoted_digits_in(chunk: Sequence[Token]) -> bool:
    text = "".join(text for _, text in chunk)
    kinds = {kind for kind, _ in chunk}
    return any(char.isdigit() for char in text) and bool(kinds & {"single", "double", "escape"})


def _before_redirection(chunk: Sequence[Token]) -> set[str]:
    """What the pieces glued before a redirection operator make of it."""
    kinds = {kind for kind, _ in chunk}
    found: set[str] = set()
    if kinds and "digits" in kinds:
        if chunk[-1][0] == "continuation":
            found.add("a continuation between digits and a redirection")
        if kinds <= {"digits", "continuation"}:
            found.add("a descriptor")
    return found


INTERESTING = (
    "quoted digits glued to a redirection",
    "quoted digits as a redirection's target",
    "continuation inside an operator",
    "a continuation between digits and a redirection",
)
"""The corners a broken reader got wrong, or could."""


def lines(seed: int, count: int) -> Iterator[Line]:
    """`count` lines from `seed`: the same lines for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        tokens = _Builder(rng, clean=rng.random() < 0.55).line()
        yield Line("".join(text for _, text in tokens), tuple(tokens))
