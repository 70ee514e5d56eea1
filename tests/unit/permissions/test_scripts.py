"""sed scripts and awk programs (`permissions.scripts`): covered only when plainly inert.

tests/oracle/ runs generated sed scripts through the real sed as well.
"""

from __future__ import annotations

import pytest

from copilot_driver.permissions.scripts import awk_refusal, resolve_long_option, sed_refusal


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
    ],
)
def test_inert_awk_programs_are_covered(args: tuple[str, ...]) -> None:
    assert awk_refusal(args) is None


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (('BEGIN{system("x")}',), "`system`"),
        (('{print | "sh"}', "f"), "`|`"),
        (('BEGIN{"id" | getline x}',), "`|`"),
        (("{getline line < f}", "f"), "`getline`"),
        (('{print > "out"}', "f"), "redirect print's output"),
        (('{printf "%s", $0 >> "out"}', "f"), "redirect print's output"),
        (('@load "filefuncs"', "f"), "`@`"),
        (('BEGIN{s="/inet/tcp/0/h/1"; print s}',), "`/inet`"),
        (('BEGIN{sys\\\ntem("x")}',), "`system`"),
        (("-f", "prog.awk", "f"), "only awk's -F and -v"),
        (("--exec=x",), "only awk's -F and -v"),
        (("-e", "x"), "only awk's -F and -v"),
        (("-l", "lib"), "only awk's -F and -v"),
    ],
)
def test_awk_programs_that_reach_out_are_refused(args: tuple[str, ...], why: str) -> None:
    reason = awk_refusal(args)
    assert reason is not None
    assert why in reason, reason
