"""sed scripts and awk programs (`permissions.scripts`, `permissions.awk`): covered only when
plainly inert.

Each reader reads the common forms a run at a time with one regular expression and hands
the rest to a slower reading; properties here check that the two agree. tests/oracle/ runs
generated sed scripts and awk programs through the real sed and awks as well.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.permissions import awk as awk_module
from copilot_driver.permissions import scripts
from copilot_driver.permissions.awk import awk_refusal
from copilot_driver.permissions.scripts import resolve_long_option, sed_refusal
from helpers.awk_syntax import awk_programs, characters
from helpers.sed_syntax import sed_scripts


def sed(*args: str) -> str | None:
    return sed_refusal(args)


@pytest.mark.parametrize(
    "args",
    [
        ("-n", "1,5p", "F"),
        ("-n", "/error/p", "F"),
        ("s/a/b/g", "F"),
        ("-i", "s/first/1st/", "F"),
        ("-E", "s/(a|b)+/x/2", "F"),
        ("-e", "s/a/b/", "-e", "s/c/d/gI", "F"),
        ("--expression=1d", "F"),
        ("--expr", "1d", "F"),
        ("-ne", "p", "F"),
        ("-n", r"s/\/e/x/p", "F"),  # the `e` is inside the expression
        ("-n", "s|e|w|p", "F"),
        ("y/abc/xyz/", "F"),
        ("1i header; e not a command", "F"),  # a/i/c text runs to the end of the line
        ("1a\\\nline one\\\nline two", "F"),
        (":a;N;$!ba;s/\\n/ /g", "F"),
        ("/x/{p;d}", "F"),
        ("1~2d", "F"),
        ("/a/,+2d", "F"),
        ("0,/a/d", "F"),
        ("$!N", "F"),
        ("# a comment\np", "F"),
        ("\\%a%d", "F"),
        ("/a/I,/b/Mp", "F"),
        ("q5", "F"),
        ("l 40", "F"),
        ("=", "F"),
        ("--debug", "-z", "-s", "-u", "p", "F"),
        ("-l", "40", "l", "F"),
        ("--", "p", "F"),
    ],
)
def test_inert_sed_scripts_are_covered(args: tuple[str, ...]) -> None:
    assert sed(*args) is None


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("-n", "1e touch M", "F"), "`e` command runs a shell command"),
        (("e touch M", "F"), "`e` command"),
        (("-n", "s|.*|touch M|e", "F"), "`s///e` flag"),
        (("s/a/b/ge", "F"), "`s///e` flag"),
        (("s/a/b/w out", "F"), "`s///w` flag writes a file"),
        (("-n", "w M", "F"), "`w` command writes a file"),
        (("W M", "F"), "`W` command writes a file"),
        (("r /etc/passwd", "F"), "`r` command reads a file"),
        (("R x", "F"), "`R` command"),
        (("-e", "p", "-e", "1e x", "F"), "`e` command"),
        (("--expression=1e x", "F"), "`e` command"),
        (("--e", "1e x", "F"), "`e` command"),
        (("-n", "-f", "script.sed", "F"), "reads the script from a file"),
        (("-nf", "script.sed", "F"), "reads the script from a file"),
        (("--file=s.sed", "F"), "reads the script from a file"),
        (("-i.bak", "s/a/b/", "F"), "backup file"),
        (("-ni.bak", "p", "F"), "backup file"),
        (("--in-place=.bak", "p", "F"), "backup file"),
        (("--i=x", "p", "F"), "backup file"),
        (("--frobnicate", "p", "F"), "not an option of sed"),
        (("-X", "p", "F"), "not an option of sed"),
        (("--s", "p", "F"), "not an option of sed"),  # ambiguous: --silent, --sandbox, ...
        (("v 4.2", "F"), "the sed command `v`"),
        (("1!!k", "F"), "the sed command `k`"),
        (("s/a/b", "F"), "unterminated"),
        (("s/a\nb/c/", "F"), "newline inside"),
        (("s/a/b/gx", "F"), "unexpected `x`"),
        (("pq", "F"), "unexpected `q`"),
        (("-e",), "has no value"),
    ],
)
def test_sed_scripts_that_run_write_or_hide_are_refused(args: tuple[str, ...], why: str) -> None:
    reason = sed(*args)
    assert reason is not None
    assert why in reason, reason


def test_long_options_resolve_by_unique_prefix() -> None:
    options = {"expression": "value", "file": "value", "silent": "flag", "sandbox": "flag"}
    assert resolve_long_option("exp", options) == "expression"
    assert resolve_long_option("file", options) == "file"
    assert resolve_long_option("s", options) is None
    assert resolve_long_option("", options) is None
    assert resolve_long_option("x", options) is None


def awk(*args: str) -> str | None:
    return awk_refusal(args)


@pytest.mark.parametrize(
    "args",
    [
        ("{print $1}", "f"),
        ("$3 > 100", "f"),
        ("-F,", "{print $2}", "f"),
        ("-F", ":", "-v", "x=1", "{print x}", "f"),
        ("-vOFS=;", "NR==1", "f"),
        ("--", "{n++} END {print n}", "f"),
        ("length($0) > 80",),
        # `>` as a comparison: in a pattern, a condition, parentheses, a string, a regex
        ("$3 > 100 {print $1}", "f"),
        ("NR>1{print}", "f"),
        ("$1 >= 2", "f"),
        ("a > b && c", "f"),
        ("{ if ($1 > 2) print $1 }", "f"),
        ("{ x = $1 > 3; print x }", "f"),
        ("{print (a > b)}", "f"),
        ("{print 1, (2 > 3)}", "f"),
        ("{print substr($0, 1 > 2)}", "f"),
        ('{print "a>b"}', "f"),
        ("$1 ~ />/ {print}", "f"),
        ("{ print $1 } # > out", "f"),
        ("{ print 1; x = 1 > 2 }", "f"),
        ("{ print 1 }\n$1 > 2 { print 2 }", "f"),
        # `/` as a division and as a regular expression
        ("{print ($1+$2)/2}", "f"),
        ("{ sum += $2 } END { print sum / NR }", "f"),
        ('BEGIN { x = "a"; print x /2/ 1 }',),
        ("{ print a[1] / 2, $2/2 }", "f"),
        ("/[0-9]+/ && !/x/", "f"),
        ("/[[:alpha:]]/,/[^]x]/", "f"),
        ("/a\\/b/", "f"),
        ('{ gsub(/a/, "b"); print }', "f"),
        # print statements across lines, printf
        ("{print a,\n b}", "f"),
        ("{print 1 &&\n 2}", "f"),
        ('{ printf "%s\\n", $1 }', "f"),
        ('{printf("%d %s\\n", NR, $0)}', "f"),
        ("{ print length }", "f"),
        ('BEGIN { a["x"]; for (k in a) print k }',),
        ("BEGIN { while (i < 3) { print i; i++ } }",),
        ("{ print -$1, $NF, $(NF-1) }", "f"),
        ("{ print 1 \\\n, 2 }", "f"),
        # operands: stdin, assignments, files
        ("{print}", "-"),
        ("{print v}", "v=1", "f"),
        ("{print}", "f", "g/inet"),
    ],
)
def test_inert_awk_programs_are_covered(args: tuple[str, ...]) -> None:
    assert awk(*args) is None


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (('BEGIN{system("x")}',), "`system`"),
        (('{print | "sh"}', "f"), "`|`"),
        (('BEGIN{"id" | getline x}',), "`|`"),
        (("{getline line < f}", "f"), "`getline`"),
        (('@load "filefuncs"', "f"), "`@`"),
        (('BEGIN{s="/inet/tcp/0/h/1"; print s}',), "`/inet`"),
        (('BEGIN{sys\\\ntem("x")}',), "`system`"),
        (("-f", "prog.awk", "f"), "only awk's -F and -v"),
        (("--exec=x",), "only awk's -F and -v"),
        (("-e", "x"), "only awk's -F and -v"),
        (("-l", "lib"), "only awk's -F and -v"),
        # output redirections: a `>` at the top level of a print statement, `>>` anywhere
        (('{print > "out"}', "f"), "redirect print's output"),
        (('{printf "%s", $0 >> "out"}', "f"), "(`>>`)"),
        (("{print $1 > $2}", "f"), "(`>`)"),
        (('{printf "x" >> f}', "f"), "(`>>`)"),
        (('{print (a) > "f"}', "f"), "(`>`)"),
        (('{print (a)(b > c) > "f"}', "f"), "(`>`)"),
        (('{print(1)>"f"}', "f"), "(`>`)"),
        (('{ print a, b > "f" }', "f"), "(`>`)"),
        (('$3 > 100 {print $1 > "out"}', "f"), "(`>`)"),
        (('{print 1 > 2 ? "a" : "b"}', "f"), "(`>`)"),  # mawk writes the file a
        (('{print 1 >= "f"}', "f"), "(`>`)"),
        (('{ print "a"; print "b" > "c" }', "f"), "(`>`)"),
        (('{ if (1) print "x"; else print "y" > "f" }', "f"), "(`>`)"),
        (('BEGIN { print 1 }\nEND { print NR > "f" }',), "(`>`)"),
        (("{ x = 1 >> 2 }", "f"), "(`>>`)"),
        # ... across a line: after `,` or `&&`, a comment, a continuation (mawk: `\ `)
        (('{ print a,\n b > "f" }', "f"), "(`>`)"),
        (('{ print a, # c\n b > "f" }', "f"), "(`>`)"),
        (('{ print 1 &&\n 2 > "f" }', "f"), "(`>`)"),
        (('{ print 1 \\\n> "f" }', "f"), "(`>`)"),
        (('{ print 1 \\ \n> "f" }', "f"), "(`>`)"),
        (('{ print 1 ?\n 2 : 3 > "f" }', "f"), "(`>`)"),  # gawk continues after `?`
        # input files the program names itself (gawk opens /inet/... as a connection)
        (('BEGIN{ARGV[1]="/in" "et/tcp/0/127.0.0.1/9"; ARGC=2} 1',), "`ARGV`"),
        (('BEGIN{SYMTAB["AR" "GV"][1]="x"; ARGC=2} 1',), "`SYMTAB`"),
        (("1", "/inet/tcp/0/127.0.0.1/9"), "network connection"),
        (("{print}", "f", "/inet6/tcp/0/h/80"), "network connection"),
        # a `/` the awks read differently, or a regular expression they end differently
        (('{ print length / "x"; print > "f"; y = "/ }', "f"), "awks read differently"),
        (('{ n = length /"/; print > "f"; y = "/ }', "f"), "awks read differently"),
        (("{ if (1) /a/ }", "f"), "awks read differently"),
        (("{ print a++ / 2 }", "f"), "awks read differently"),
        (("{ print /a/ /2/ 1 }", "f"), "awks read differently"),
        (("{ print $/a/ }", "f"), "awks read differently"),
        (("{ x = y in /a/ }", "f"), "awks read differently"),
        (("/[/]/", "f"), "cannot delimit"),
        (("/[a/]x/", "f"), "cannot delimit"),
        (("/[[.a.]]/", "f"), "cannot delimit"),
        (("/ab", "f"), "cannot delimit"),
        # what the reader does not read
        (("{ print 'x' }", "f"), "`'` in the awk program"),
        (("{ print $1 \r\n }", "f"), "'\\r' in the awk program"),
        (('{ print "a }', "f"), '`"` in the awk program'),
        (("{ print 1 \\ 2 }", "f"), "`\\` in the awk program"),
        (("BEGIN { print a::b }",), "`:` in the awk program"),
        (("{ print 1) > 2 }", "f"), "unbalanced"),
        (("{ (print 1) }", "f"), "cannot place"),
        (("1" * (16 * 1024 + 1),), "longer than 16 KiB"),
        (("BEGIN{x=" + "(a" * 2000,), "too intricate"),
    ],
)
def test_awk_programs_that_reach_out_are_refused(args: tuple[str, ...], why: str) -> None:
    reason = awk(*args)
    assert reason is not None
    assert why in reason, reason


# -- the two readings of each reader agree -----------------------------------------------------


def _sed_verdict(script: str) -> str | None:
    return sed_refusal(("-n", script, "F"))


_SED_PIECES = st.sampled_from(
    ["p", "s/a/b/", "s|a|b|g", "y/a/b/", "1", "$", "/a/", "\\%a%", ",", "!", ";", "\n", "{", "}",
     "#c\n", ":l", "b l", "a x\n", "i\\\n", "e", "w f", "q5", "~2", "+1", " ", "\\", "/", "I"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.one_of(sed_scripts(), st.lists(_SED_PIECES, max_size=12).map("".join)))
def test_sed_runs_read_scripts_as_the_reader_does(script: str) -> None:
    fast = _sed_verdict(script)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scripts, "_sed_run", lambda: re.compile(""))
        assert _sed_verdict(script) == fast, script


def _awk_verdict(program: str, *, runs: bool) -> str | None:
    try:
        awk_module._AwkReader(program, runs=runs).check()
    except awk_module._RefusedError as refused:
        return str(refused)
    return None


@settings(max_examples=600, deadline=None)
@given(st.one_of(awk_programs(), characters))
def test_awk_runs_read_programs_as_the_reader_does(program: str) -> None:
    assert _awk_verdict(program, runs=True) == _awk_verdict(program, runs=False), program


def test_the_awk_runs_are_exercised() -> None:
    """Not vacuous: whole programs, print statements included, are read in one run."""
    reader = awk_module._AwkReader("{ print $1, ($2 > 1) }\nNR > 1 { n++ }")
    assert reader._run()
    assert reader.i == len(reader.text)
