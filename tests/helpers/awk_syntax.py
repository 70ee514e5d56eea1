r"""A hypothesis generator of awk programs, for running what the policy covers through real awks.

Programs are built around the places the policy's reader must get right:
`>` as a comparison (patterns, conditions, parentheses, strings, regular
expressions) and as a redirection (a print's top level, after `print (a)`,
across `,` + newline, a comment or a continuation, mawk's `\ ` + newline
included), `/` as a division and as a regular expression (after names,
numbers, parentheses, `length`, `$`, `++`, keywords, `if (...)`, inside
brackets), and what writes or runs (`>`, `>>`, `|`, `system`, ARGV), so that
a reader that loses track of a string, a regular expression or a print
statement covers one of them. `characters` strings the same pieces together
at random, mostly into programs no awk accepts, for the reader's own checks.
"""

from __future__ import annotations

import os
import shutil

from hypothesis import strategies as st

_NAMES = ("awk", "gawk", "mawk", "original-awk", "nawk", "busybox")


def installed_awks() -> tuple[str, ...]:
    """The awk implementations on this machine, each once (`awk` and `nawk` are usually
    links to one of the others), `awk` first: the policy must be right for all of them."""
    found: dict[str, str] = {}
    for name in _NAMES:
        path = shutil.which(name, path="/usr/bin:/bin")
        if path is not None and name != "busybox":
            found.setdefault(os.path.realpath(path), name)
    return tuple(found.values())


AWKS = installed_awks()

_TARGET = '"M"'
"""The file a redirection would create (the oracle sees any new file)."""

atom = st.sampled_from(
    [
        "$1", "NR", "a", "1", "x[1]", '"s>t"', '"a/b"', '"#"', '"\\""', "length", "length($0)",
        "(a > b)", "($1 > 1)", "/re/", "/a>b/", "/[/]x/", "/[a]/", "$NF", "-1", "a++", "(a)",
        "substr($0, 1, 2)", "(1 > 2) > 1", "!/x/", "$(1)",
    ]
)  # fmt: skip
operator = st.sampled_from(
    [" > ", ">", " / ", "/", " >= ", " < ", " + ", " ~ ", " && ", " ", " == ", " >> ", " | "]
)


@st.composite
def expression(draw: st.DrawFn) -> str:
    parts = [draw(atom)]
    for _ in range(draw(st.integers(0, 2))):
        parts += [draw(operator), draw(atom)]
    return "".join(parts)


@st.composite
def statement(draw: st.DrawFn) -> str:
    value = draw(expression())
    return draw(
        st.sampled_from(
            [
                f"print {value}",
                f"print {value}, {value}",
                f"print {value},\n {value}",
                f"print {value}, # c\n {value}",
                f'printf "%s\\n", {value}',
                f'printf("%s\\n", {value})',
                f"print ({value})",
                f"print ({value}) > {_TARGET}",
                f"print {value} > {_TARGET}",
                f"print {value} >> {_TARGET}",
                f"print {value} \\\n> {_TARGET}",
                f"print {value} \\ \n> {_TARGET}",
                f"print {value}\n> {_TARGET}",
                f'print {value} | "cat"',
                f"x = {value}",
                f"if ({value}) print {value}",
                f"if ({value}) /re/",
                "n++",
                'system("touch M")',
                f"ARGV[1] = {_TARGET}",
                f"{value}",
            ]
        )
    )


@st.composite
def rule(draw: st.DrawFn) -> str:
    pattern = draw(st.sampled_from(["", "", "BEGIN ", "END ", "NR>1 ", "$1 > 0 ", "/x/ "]))
    statements = draw(st.lists(statement(), min_size=1, max_size=3))
    separator = draw(st.sampled_from(["; ", "\n", ";\n"]))
    return f"{pattern}{{ {separator.join(statements)} }}"


@st.composite
def awk_programs(draw: st.DrawFn) -> str:
    """Whole programs: one to three rules, or a lone pattern."""
    if draw(st.integers(0, 4)) == 0:
        return draw(expression())
    return "\n".join(draw(st.lists(rule(), min_size=1, max_size=3)))


_PIECES = [
    "print ", "printf ", "(", ")", ">", ">>", "/", '"', "\\", "\n", "#", " ", "a", "1",
    ",", ";", "{", "}", "$", "=", "+", "++", "[", "]", "!", "~", "if", "in", "length", "|",
]  # fmt: skip
characters = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)
"""Random strings of awk's significant pieces: nearly all of them are not programs."""
