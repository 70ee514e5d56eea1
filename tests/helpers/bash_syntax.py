"""A hypothesis generator of command lines over bash's syntax, for the execution oracle.

Mostly ordinary commands of the programs the rules name, with quoting of
every kind, and now and then one of the constructs that make bash compute a
word or run something else: line continuations anywhere (inside quotes,
words and operators, after `$`), `$` forms, backticks, braces, globs,
tildes, descriptors, separators, comments, unicode lookalikes and control
characters. The oracle then checks that whatever the policy approves runs
exactly as the policy read it.
"""

from __future__ import annotations

from hypothesis import strategies as st

PROGRAMS = ("git", "ls", "echo", "sed", "find", "tar", "grep")
RULES = tuple(f"shell({name}:*)" for name in PROGRAMS)
PAYLOADS = ("touch", "rm", "sh", "curl")

_PLAIN_CHARS = "abcgistxyz019-_./:,=+@%^~{}#]"
_SPECIALS = "$`\"'\\;&|<>(){}[]*?~!# \t\n=:,."
_TRICKS = (
    "$(touch P)", "`touch P`", "$X", "${X}", "$HOME", "$'\\x2dc'", '$"x"', "$((1+1))", "${X:-y}",
    "$", "*", "?", "[-]c", "[a]", "{a,b}", "{1..2}", "{-c,x}", "{x}", "@{1}", "~", "~root",
    "x=~", "a:~", "!", "!!", "\\$", "\\`", "\\\\", "\\\n", "<(touch P)", ">(touch P)", "&", ";;",
    "(", ")", "\u00a0", "\uff47", "\u00b2", "\r", "\x0b", "\u2028", "\u200b", "#", " #c\n",
    "'", '"', "\\",
)  # fmt: skip
_REDIRECTIONS = (
    ">/dev/null", "2>&1", ">&2", "2>/dev/null", "</dev/null", "&>/dev/null", "1>&2", " 2>&1",
    "> out", ">out", "2>&-", "3</dev/tcp/127.0.0.1/9 >&3", "{X}>/dev/null", ">&\u00b2", "<<<x",
    "<<E\nx\nE", ">>/dev/null", ">|/dev/null", "<>/dev/null", "x>/dev/null", "'2'>/dev/null",
)  # fmt: skip
_SEPARATORS = (
    "; ", " && ", " || ", " | ", " |& ", "\n", ";", "&&", "|", " ;\n", " &&\n", " |\n  ",
    " & ", " # note\n", "\n\n",
)  # fmt: skip

plain = st.text(alphabet=_PLAIN_CHARS, min_size=1, max_size=6)
_QUOTABLE = "ab x-.;&|\n*~#{},()<>=%\u00e9"
single_quoted = st.text(alphabet=_QUOTABLE + '$`"\\!', max_size=6).map("'{}'".format)
double_quoted = st.text(alphabet=_QUOTABLE + "'\\", max_size=6).map('"{}"'.format)
double_quoted_tricky = st.text(alphabet="a\\$`!\n", max_size=4).map('"{}"'.format)
escaped = st.sampled_from(_SPECIALS + "abgx-\u00e9").map("\\{}".format)
trick = st.sampled_from(_TRICKS)

escaped_plain = st.sampled_from(" ;&|<>(){}[]*?~#'\"=:,.abgx-\u00e9").map("\\{}".format)
continued_quote = st.sampled_from(["'a\\\nb'", '"a\\\nb"', "'\\\n'", '"\\\n"'])
safe_fragment = st.one_of(
    *[plain] * 6, single_quoted, double_quoted, escaped_plain, continued_quote
)
expansion = st.sampled_from(
    ["*", "?", "*.txt", "[ab].txt", "[-]c", "{a,b}", "{1..3}", "x{-c,}", "~", "~/x", "x=~", "a:~"]
)
tricky_fragment = st.one_of(trick, escaped, double_quoted_tricky, expansion)
word = st.lists(safe_fragment, min_size=1, max_size=2).map("".join)


@st.composite
def command_name(draw: st.DrawFn) -> str:
    name: str = draw(st.sampled_from(PROGRAMS * 5 + PAYLOADS))
    spelling = draw(st.sampled_from(["plain"] * 6 + ["single", "double", "escaped", "split"]))
    if spelling == "single":
        return f"'{name}'"
    if spelling == "double":
        return f'"{name}"'
    if spelling == "escaped":
        return "\\" + name
    if spelling == "split":
        return f"{name[:1]}\\\n{name[1:]}"
    return name


@st.composite
def simple_command(draw: st.DrawFn) -> str:
    """A command of safe words; one in four also holds one construct of the tricky kind."""
    parts = [draw(command_name())]
    parts += draw(st.lists(word, max_size=4))
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(parts)))
        glued = draw(st.booleans()) and at > 0
        tricky = draw(tricky_fragment)
        if glued:
            parts[at - 1] += tricky
        else:
            parts.insert(at, tricky)
    if draw(st.integers(0, 5)) == 0:
        parts.append(draw(st.sampled_from(_REDIRECTIONS)))
    if draw(st.integers(0, 12)) == 0:
        parts.insert(0, draw(st.sampled_from(["X=1", "PATH=.", "{X}>/dev/null", "2>/dev/null"])))
    gaps = draw(
        st.lists(st.sampled_from([" ", " ", " ", "  ", "\t", " \\\n "]), min_size=len(parts))
    )
    return "".join(part + gap for part, gap in zip(parts, gaps, strict=False)).rstrip(" \t")


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    """A command line: simple commands joined by separators, with continuations sprinkled in."""
    commands = draw(st.lists(simple_command(), min_size=1, max_size=3))
    line = commands[0]
    for command in commands[1:]:
        line += draw(st.sampled_from(_SEPARATORS)) + command
    if draw(st.integers(0, 6)) == 0:
        line += draw(st.sampled_from([" # trailing", ";", "\n", " &", " \\"]))
    # Continuations anywhere, also inside quotes, words, operators and after `$`.
    for _ in range(draw(st.integers(0, 2))):
        position = draw(st.integers(0, len(line)))
        line = line[:position] + "\\\n" + line[position:]
    return line
