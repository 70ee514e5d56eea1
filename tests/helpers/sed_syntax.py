"""A hypothesis generator of sed scripts, for running what the policy covers through real sed.

Addresses, negation, blocks, labels, text commands, `s` and `y` with unusual
delimiters, escapes and flags, and the commands that run or write (`e`,
`w`, `s///e`, `s///w`) mixed in, so that a reader that loses track of where
an expression ends would cover one of them.
"""

from __future__ import annotations

from hypothesis import strategies as st

_PIECES = "ae\\/|,;w# \n1p"
_DELIMITERS = "/|,e#w;x"

address = st.sampled_from(["", "", "1", "$", "/a/", "\\%e%", "1,2", "/x/,+1", "0~2", "/e/I"])
text = st.text(alphabet=_PIECES, max_size=5)


@st.composite
def substitution(draw: st.DrawFn) -> str:
    command = draw(st.sampled_from("ssy"))
    delimiter = draw(st.sampled_from(_DELIMITERS))
    regex, replacement = draw(text), draw(text)
    if command == "y":
        return f"y{delimiter}{regex}{delimiter}{replacement}{delimiter}"
    flags = draw(st.sampled_from(["", "g", "p", "2", "gI", "e", "ge", "w M", "pw M", "m", "x"]))
    return f"s{delimiter}{regex}{delimiter}{replacement}{delimiter}{flags}"


command = st.one_of(
    # No unconditional jump back (`:l;b l` loops forever, which only the runtime's timeout ends).
    st.sampled_from(
        ["p", "d", "=", "q", "n", "N", "{p}", ":l", "b", "t l", "#c", "l", "$!N", "h;G"]
    ),
    st.sampled_from(["e touch M", "w M", "W M", "r F", "1e touch M", "e"]),
    substitution(),
    substitution(),
    text.map("a {}".format),
    text.map("i\\\n{}".format),
)


@st.composite
def sed_scripts(draw: st.DrawFn) -> str:
    commands = draw(st.lists(st.tuples(address, command), min_size=1, max_size=3))
    separators = draw(st.lists(st.sampled_from([";", "\n", "; ", "\n\n"]), min_size=len(commands)))
    return "".join(
        f"{where}{what}{separator}"
        for (where, what), separator in zip(commands, separators, strict=False)
    )
