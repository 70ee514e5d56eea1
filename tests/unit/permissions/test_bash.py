"""How `permissions.bash` reads a command line: bash's own rules, on the literal subset.

Each expectation here was checked against bash 5.2 (`bash --norc --noprofile
-c`, as the runtime runs it); tests/oracle/ checks the same against bash
itself, for every approval, under strace.
"""

from __future__ import annotations

import pytest

from copilot_driver.permissions.bash import (
    Command,
    Redirection,
    ShellParseError,
    parse_command,
)
from copilot_driver.permissions.bash_tokens import MAX_COMMANDS, MAX_LINE_CHARS, MAX_WORDS


def words(text: str) -> list[tuple[str, ...]]:
    return [command.words for command in parse_command(text)]


# -- words and quoting -------------------------------------------------------------------------


def test_words_are_unquoted() -> None:
    (command,) = parse_command('\'git\' "com"mit -m \'a b\' c\\ d "e \\"f\\"" "\\x\\\\"')
    assert command.words == ("git", "commit", "-m", "a b", "c d", 'e "f"', "\\x\\")
    assert command.name == "git"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "git log HEAD~1 HEAD@{1} stash@{0} @{u}",
            ("log", "HEAD~1", "HEAD@{1}", "stash@{0}", "@{u}"),
        ),
        ("find . -name {} x}y", (".", "-name", "{}", "x}y")),
        ("git log a#b x:y a=b --format=%H^", ("log", "a#b", "x:y", "a=b", "--format=%H^")),
        ("git commit -m 'héllo ü' \"\uff47it\"", ("commit", "-m", "héllo ü", "\uff47it")),
        ("ls '' \"\"", ("", "")),
        ("echo ''#x", ("#x",)),
        # Braces without a `,` or `..` between them, and `..` outside them, stay literal.
        (
            "git log HEAD@{1}..HEAD @{u}.. stash@{0}..HEAD",
            ("log", "HEAD@{1}..HEAD", "@{u}..", "stash@{0}..HEAD"),
        ),
        ("ls {a.. a,b} {a.b} x{}y", ("{a..", "a,b}", "{a.b}", "x{}y")),
        # No history expansion without an interactive shell: `!` is literal in words.
        (
            'git commit -m "Fix the bug!" !x a!b \\!',
            ("commit", "-m", "Fix the bug!", "!x", "a!b", "!"),
        ),
        ("echo Done! '!' \\!", ("Done!", "!", "!")),
    ],
)
def test_literal_words_stay_literal(text: str, expected: tuple[str, ...]) -> None:
    (command,) = parse_command(text)
    assert command.words[1:] == expected


def test_a_quoted_assignment_is_a_command_name_and_a_plain_one_an_assignment() -> None:
    (quoted,) = parse_command("'FOO=1' git")
    assert quoted.assignments == ()
    assert quoted.name == "FOO=1"
    (plain,) = parse_command('FOO=1 BAR+="two words" git status X=3')
    assert plain.assignments == ("FOO=1", "BAR+=two words")
    assert plain.words == ("git", "status", "X=3")


# -- line continuations: removed before anything else, except in single quotes and comments ----


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git sta\\\ntus", [("git", "status")]),
        ("git status \\\n  --short", [("git", "status", "--short")]),
        ("\\\ngit\\\n status", [("git", "status")]),
        ('git log "a\\\nb"', [("git", "log", "ab")]),
        ("git log 'a\\\nb'", [("git", "log", "a\\\nb")]),
        ("git log &\\\n& ls", [("git", "log"), ("ls",)]),
        ("git log |\\\n& ls", [("git", "log"), ("ls",)]),
        ("git log a\\\\\nls", [("git", "log", "a\\"), ("ls",)]),
        ('git log "a\\\\\n"', [("git", "log", "a\\\n")]),
        ("git log # c \\\nls", [("git", "log"), ("ls",)]),
        ("git log a\\\n#b", [("git", "log", "a#b")]),
        ("git log a \\\n#b", [("git", "log", "a")]),
    ],
)
def test_line_continuations_as_bash_removes_them(
    text: str, expected: list[tuple[str, ...]]
) -> None:
    assert words(text) == expected


def test_a_continuation_inside_an_operator_or_descriptor_joins_it() -> None:
    (command,) = parse_command("git log 2\\\n>/dev/null &\\\n> /dev/null 0\\\n2>/dev/null")
    assert command.redirections == (
        Redirection("2", ">", "/dev/null"),
        Redirection("", "&>", "/dev/null"),
        Redirection("02", ">", "/dev/null"),
    )


@pytest.mark.parametrize("line", ["cat 10>/dev/null", "cat 31022> /dev/null", "cat 1\\\n0>x"])
def test_a_descriptor_above_9_is_not_read(line: str) -> None:
    """bash fails a command whose descriptor is past its open-files limit (a limit the
    reader cannot know) and keeps some above 9 for itself: such a line is refused."""
    with pytest.raises(ShellParseError, match=r"the descriptor \d+ of a redirection"):
        parse_command(line)


# -- separators and comments ------------------------------------------------------------------


def test_commands_are_split_on_every_separator_and_know_what_precedes_them() -> None:
    commands = parse_command("git status && ls -la || git log | ls |& git diff; ls\ngit show")
    assert [c.words for c in commands] == [
        ("git", "status"),
        ("ls", "-la"),
        ("git", "log"),
        ("ls",),
        ("git", "diff"),
        ("ls",),
        ("git", "show"),
    ]
    assert [c.follows for c in commands] == ["", "&&", "||", "|", "|&", ";", "\n"]
    assert [c.piped for c in commands] == [False, False, False, True, True, False, False]
    assert [c.text for c in commands][:2] == ["git status", "ls -la"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git status # rm -rf x; $(id)", [("git", "status")]),
        ("# first\ngit log  # second\n# third", [("git", "log")]),
        ("git log;#c\nls", [("git", "log"), ("ls",)]),
        ("git log &&#c\nls", [("git", "log"), ("ls",)]),
        ("git status &&\n\n  git log", [("git", "status"), ("git", "log")]),
        ("ls;   ", [("ls",)]),
        ("git status\n\n", [("git", "status")]),
    ],
)
def test_comments_and_blank_lines(text: str, expected: list[tuple[str, ...]]) -> None:
    assert words(text) == expected


# -- redirections ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "redirection", "harmless"),
    [
        ("git log 2>&1", Redirection("2", ">&", "1"), True),
        ("git log >&2", Redirection("", ">&", "2"), True),
        ("git log 1>&2", Redirection("1", ">&", "2"), True),
        ("git log 0<&3", Redirection("0", "<&", "3"), True),
        ("git log > /dev/null", Redirection("", ">", "/dev/null"), True),
        ("git log 2>>/dev/null", Redirection("2", ">>", "/dev/null"), True),
        ("git log &>/dev/null", Redirection("", "&>", "/dev/null"), True),
        ("git log &>> /dev/null", Redirection("", "&>>", "/dev/null"), True),
        ("git log >| /dev/null", Redirection("", ">|", "/dev/null"), True),
        ("git log < /dev/null", Redirection("", "<", "/dev/null"), True),
        ("git log <> /dev/null", Redirection("", "<>", "/dev/null"), True),
        ("git log >& /dev/null", Redirection("", ">&", "/dev/null"), True),
        ("git log 2>&-", Redirection("2", ">&", "-"), False),
        ("git log > out", Redirection("", ">", "out"), False),
        ("git log >out", Redirection("", ">", "out"), False),
        ("git log < in", Redirection("", "<", "in"), False),
        ("git log 3<> f", Redirection("3", "<>", "f"), False),
        ("git log > 'a b'", Redirection("", ">", "a b"), False),
        ("git log > /dev/tcp/127.0.0.1/9", Redirection("", ">", "/dev/tcp/127.0.0.1/9"), False),
        ("git log 3</dev/udp/h/1", Redirection("3", "<", "/dev/udp/h/1"), False),
        ("git log >&2x", Redirection("", ">&", "2x"), False),
        ("git log <& /dev/null", Redirection("", "<&", "/dev/null"), False),
        ("git log > /dev/null/../x", Redirection("", ">", "/dev/null/../x"), False),
    ],
)
def test_redirections_and_which_are_harmless(
    text: str, redirection: Redirection, harmless: bool
) -> None:
    (command,) = parse_command(text)
    assert command.words == ("git", "log")
    assert command.redirections == (redirection,)
    assert redirection.is_harmless is harmless


def test_a_spaced_digit_is_an_argument_and_a_redirection_may_come_first() -> None:
    (spaced,) = parse_command("git log 2 > /dev/null")
    assert spaced.words == ("git", "log", "2")
    (first,) = parse_command("2>/dev/null git status")
    assert first.words == ("git", "status")
    assert first.redirections == (Redirection("2", ">", "/dev/null"),)


# -- what is refused, and why ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("git log $X", "`$` outside single quotes"),
        ('git log "$X"', "`$` outside single quotes"),
        ("git log \\$X", "`$` outside single quotes"),
        ('git log "\\$X"', "`$` outside single quotes"),
        ("git log $", "`$` outside single quotes"),
        ("git log $'\\x2dc'", "`$` outside single quotes"),
        ('ls "$\\\n(touch M)"', "`$` outside single quotes"),
        ("echo $\\\n{HOME}", "`$` outside single quotes"),
        ("git log `id`", "backtick"),
        ('git log "`id`"', "backtick"),
        ("! ls", "the shell keyword `!`"),
        ("ls && ! git status", "the shell keyword `!`"),
        ("ls *", "glob"),
        ("ls a?", "glob"),
        ("git [-]c x", "glob"),
        ("git {-c,x}", "brace expansion"),
        ("ls a{1..3}", "brace expansion"),
        ("ls {a,'b'}", "brace expansion"),
        ("ls {,}", "brace expansion"),  # no word at all
        ('ls {a"}",b}', "brace expansion"),  # a quoted `}` closes nothing
        ("ls {{a}..b}", "brace expansion"),
        ("git log HEAD@{1}..{2..3}", "brace expansion"),
        # bash passes over a `}` before the first `,`: `a}b c` and `x}a xb` (the oracle's find)
        ("find . {a}b,-delete}", "brace expansion"),
        ("ls x{}a,b}", "brace expansion"),
        ("git log HEAD@{1}..HEAD@{2}", "brace expansion"),  # literal to bash; refused here
        ("ls ~", "tilde expansion"),
        ("ls ~/x", "tilde expansion"),
        ("ls x=~", "tilde expansion"),
        ("ls a:~", "tilde expansion"),
        ("(ls)", "`(`"),
        ("ls <(id)", "process substitution"),
        ("ls >(id)", "process substitution"),
        ("ls & id", "a lone `&`"),
        ("ls &", "a lone `&`"),
        ("ls;; id", "`;;`"),
        ("ls;& id", "`;&`"),
        ("ls <<E\nx\nE", "here-document"),
        ("ls <<<x", "here-document"),
        ("ls {HOME}>/dev/null", "glued to a redirection"),
        ("ls x>/dev/null", "glued to a redirection"),
        ("ls '2'>/dev/null", "glued to a redirection"),
        # bash reads a descriptor only from bare digits: these are the argument 1 (or 2)
        ("ls ''1</dev/null x", "glued to a redirection"),
        ("ls 1''</dev/null", "glued to a redirection"),
        ('ls ""2>/dev/null', "glued to a redirection"),
        ("ls 2&>/dev/null", "glued to a redirection"),
        ("if ls; then ls; fi", "keyword `if`"),
        ("'if' x", "keyword `if`"),
        ("{ ls; }", "keyword `{`"),
        ("time ls", "keyword `time`"),
        ("ls\r\nid", "control character"),
        ("ls\x0bx", "control character"),
        ("ls\x00", "control character"),
        ("git\u00a0status", "unquoted character"),
        ("ls >&\u00b2", "unquoted character"),
        ("\uff47\uff49\uff54 status", "unquoted character"),
        ("ls 'x", "unterminated single quote"),
        ('ls "x', "unterminated double quote"),
        ('git "\\"; git 0\\', "unterminated double quote"),  # found by the oracle's generator
        ('ls "x\\', "unterminated double quote"),
        ("ls \\", "backslash at the end"),
        ("", "no command"),
        (" \n ", "no command"),
        ("; ls", "`;` without a command before it"),
        ("ls && && ls", "`&&` without a command before it"),
        ("ls\n;", "`;` without a command before it"),
        ("ls |", "`|` without a command after it"),
        ("ls &&\n", "`&&` without a command after it"),
        ("ls >", "`>` without a target"),
        ("> /dev/null", "without a command"),
        ("FOO=1", "without a command"),
        ("'' x", "empty command name"),
    ],
)
def test_outside_the_literal_subset_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ShellParseError) as raised:
        parse_command(text)
    assert reason in str(raised.value)


def test_a_command_that_is_not_text_is_refused() -> None:
    with pytest.raises(ShellParseError):
        parse_command(b"ls")  # type: ignore[arg-type]


def test_the_command_keeps_its_source_text() -> None:
    commands = parse_command("  git  log 2>&1 ;  'ls'  -la  # c")
    assert [command.text for command in commands] == ["git  log 2>&1", "'ls'  -la"]
    assert isinstance(commands[0], Command)


def test_long_lines_are_read_up_to_the_limits() -> None:
    """Brace-laden words and long chains parse up to the limits (timing: see make bench)."""
    (command,) = parse_command("git log " + " ".join(["HEAD@{1}"] * (MAX_WORDS - 2)))
    assert len(command.words) == MAX_WORDS
    commands = parse_command(";".join(["ls"] * MAX_COMMANDS))
    assert len(commands) == MAX_COMMANDS


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("git log " + " ".join(["x"] * MAX_WORDS), f"more than {MAX_WORDS} words"),
        ("git log " + " ".join(["'x'"] * MAX_WORDS), f"more than {MAX_WORDS} words"),
        (";".join(["ls"] * (MAX_COMMANDS + 1)), f"more than {MAX_COMMANDS} commands"),
        ("ls\n" * (MAX_COMMANDS + 1), f"more than {MAX_COMMANDS} commands"),
        ("ls " + "x" * MAX_LINE_CHARS, "longer than 64 KiB"),
    ],
)
def test_lines_over_the_limits_are_refused(text: str, reason: str) -> None:
    with pytest.raises(ShellParseError) as raised:
        parse_command(text)
    assert reason in str(raised.value)
