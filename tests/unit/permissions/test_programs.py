"""The program table (`permissions.programs`): what a name or prefix rule never covers.

Each refused spelling below was checked with GNU tar 1.34, GNU sed 4.9, findutils 4.9,
GNU sort 9.1, GNU make 4.3, Info-ZIP zip 3.0, rsync 3.2.7 and OpenSSH 9.2 to run a program,
write or remove a file where told (tests/oracle/ and the end-to-end tests run the same
families for real); git's entry has its own tests (test_git.py).
"""

from __future__ import annotations

import getopt
import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.permissions.bash import parse_command
from copilot_driver.permissions.options import Options
from copilot_driver.permissions.programs import (
    NEVER_COVERED,
    PROGRAMS,
    TAR_OPTIONS,
    never_covered,
    program,
    refusal,
)


def refused(text: str) -> str | None:
    (command,) = parse_command(text)[-1:]
    return refusal(command)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("find . -exec rm {} ;", "`-exec`"),
        ("find . -name x -fprint out", "`-fprint`"),
        ("find . -delete", "`-delete`"),
        ("tar --to-c=x -xf a", "may abbreviate `--to-command`"),
        ("tar -cf /dev/null F --checkpoint-action=exec=x", "`--checkpoint-action=exec=x`"),
        ("tar --checkpoint=1 -cf a F", "may abbreviate `--checkpoint-action`"),
        ("tar -I x -cf a F", "`-I`"),
        ("tar -cIf x a F", "(holds `-I`)"),
        ("tar cIf x a F", "old-style options"),
        ("tar czfg a.tgz snap F", "`czfg` (old-style options)"),
        ("tar -cf host:x F", "remote shell"),
        ("tar -F x -cf a F", "`-F`"),
        ("tar -cf a --remove-files F", "`--remove-files`"),
        ("tar -cf a --remove F", "may abbreviate `--remove-files`"),
        ("tar -cf a --index-file=log -v F", "`--index-file=log`"),
        ("tar -cf a -g snap F", "`-g`"),
        ("tar -czg snap -f a F", "(holds `-g`)"),
        ("tar -cf a --listed=snap F", "may abbreviate `--listed-incremental`"),
        ("tar -cf a --volno-file=n F", "`--volno-file=n`"),
        ("tar -cf a --new-volume-script=x F", "`--new-volume-script=x`"),
        ("tar -cf a --rmt-command=x F", "`--rmt-command=x`"),
        ("tar -cf a --rsh-command=x F", "`--rsh-command=x`"),
        ("make CC=x", "overrides a make variable"),
        ("make --eval=x", "evaluate code"),
        ("make -E x", "evaluate code"),
        ("make -f -", "`-`: make would read its makefile from its input"),
        ("make -f-", "from its input"),
        ("make -sf -", "from its input"),
        ("make --file=-", "from its input"),
        ("make --fil -", "from its input"),
        ("make --makefile=/dev/stdin", "`/dev/stdin`"),
        ("make -f /dev/fd/0", "`/dev/fd/0`"),
        ("make -f /proc/self/fd/0", "`/proc/self/fd/0`"),
        ("make -f ../../../../../dev/stdin", "from its input or a device"),
        ("make -C /dev/fd -f 0", "`/dev/fd`"),
        ("make --directory=/proc/self/fd -f 0", "`/proc/self/fd`"),
        ("make -C / -f dev/stdin", "`dev/stdin`"),
        ("sort --compress-program=x f", "`--compress-program=x`"),
        ("sort -o out f", "`-o` makes sort"),
        ("sort -oout f", "`-oout`"),
        ("sort -uoout f", "(holds `-o`)"),
        ("sort -k2 -o out f", "`-o`"),
        ("sort -nro out f", "(holds `-o`)"),
        ("sort --output=out f", "`--output=out`"),
        ("sort --ou=out f", "may abbreviate `--output`"),
        ("sort --o out f", "may abbreviate `--output`"),
        ("zip -TT x a.zip f", "`-TT`"),
        ("zip -T a.zip f", "`-T`"),
        ("zip --test a.zip f", "`--test`"),
        ("zip -m a.zip f", "`-m`"),
        ("zip -rm a.zip d", "(holds `-m`)"),
        ("zip --mov a.zip f", "may abbreviate `--move`"),
        ("zip -lf log a.zip f", "`-lf`"),
        ("zip -qlf log a.zip f", "`-qlf`"),
        ("zip --logfile-p=log a.zip f", "may abbreviate `--logfile-path`"),
        ("rsync -e x a b", "`-e`"),
        ("rsync --rsync-path=x a b", "`--rsync-path=x`"),
        ("rsync --log-file=log a b", "`--log-file=log`"),
        ("rsync --remove-source-files a b", "`--remove-source-files`"),
        ("rsync -M--log-file=log a b", "(holds `-M`)"),
        ("rsync --remote-option=--log-file=log a b", "`--remote-option=--log-file=log`"),
        ("rsync --write-batch=b a c", "`--write-batch=b`"),
        ("rsync --only-write-batch=b a c", "`--only-write-batch=b`"),
        ("rsync a host:b", "`host:b`: rsync reaches HOST:PATH"),
        ("rsync user@host:a b", "`user@host:a`"),
        ("rsync a host::module", "`host::module`"),
        ("rsync rsync://host/module b", "`rsync://host/module`"),
        ("rsync --files-from=host:list a b", "`--files-from=host:list`"),
        ("scp -o ProxyCommand=x a b", "`-o`"),
        ("scp -rpo x a h:b", "(holds `-o`)"),
        ("scp -D x a h:b", "`-D`"),
        ("scp -S x a h:b", "`-S`"),
        ("scp -F cfg a h:b", "`-F`"),
        ("man -P x git", "`-P`"),
        ("printf -v PATH x", "`-v`"),
        ("python3 -c 'x'", "`-c`"),
        ("python3.11 -Ic 'x'", "(holds `-c`)"),
        ("python -c x -m y", "`-c`"),
        ("python -W ignore -c x", "`-c`"),
        ("python -W -c x", "`-c`"),  # `-c` may be -W's value: read as an option all the same
        ("python -X dev -c x", "`-c`"),
        ("python -Xdev x.py -c x", "`-c`"),  # python 2 reads `-X` as a flag, `x.py` may be -X's
        ("python -X -m -c x", "`-c`"),
        ("python -- -c x", "`-c`"),
        ("perl -e x", "`-e`"),
        ("perl -Ilib -e x", "`-e`"),
        ("perl -I lib -e x", "`-e`"),
        ("perl -MPOSIX x.pl", "`-MPOSIX`"),
        ("perl -pie x", "(holds `-e`)"),
        ("perl -ne x", "(holds `-e`)"),
        ("perl '-w -e' x", "(holds `-e`)"),  # perl goes on reading switches after a blank
        ("perl '-i.bak -e' x", "(holds `-e`)"),
        ("perl -Ve x", "(holds `-e`)"),
        ("node --eval=x", "`--eval=x`"),
        ("node -p x", "`-p`"),
        ("node --title t -e x", "`-e`"),
        ("ruby -e x", "`-e`"),
        ("ruby -Ilib -e x", "`-e`"),
        ("php -r x", "`-r`"),
        ("php -f x.php -d auto_prepend_file=y", "`-d`"),  # -f takes x.php: -d is php's
        ("lua -e x", "`-e`"),
        ("lua -i -e x", "`-e`"),
        ("julia -e x", "`-e`"),
        ("julia -O3 -e x", "`-e`"),
        ("echo x | python3", "would run the text piped into it"),
        ("echo x |& python3 -", "would run the text piped into it"),
        ("echo x | tclsh", "would run the text piped into it"),
        ("cat f | python3 x.py", "would run the text piped into it"),  # refused all the same
        ("/usr/bin/env git status", "`/usr/bin/env`: it runs another command"),
    ],
)
def test_refused(command: str, why: str) -> None:
    reason = refused(command)
    assert reason is not None, command
    assert why in reason, reason


@pytest.mark.parametrize(
    "command",
    [
        "find . -name x -type f -print",
        "tar -tf a.tar",
        "tar -czf a.tgz src",
        "tar xzf a.tgz",
        "tar -cfI a.tar src",  # `-f` takes `I`: the archive's name
        "tar -C out -xf a.tar",
        "make -C src test",
        "make -f Makefile.ci test",
        "make -f build/rules.mk -j4",
        "make -j 4 -k",
        "sort -u f",
        "sort -k2,2 f",
        "sort -k2o f",  # `-k` takes `2o`
        "sort -t, -k1,1n f",
        "sort -toto f",
        "sort -nk2 -T /tmp f",
        "sort -S 1M --parallel=2 f",
        "zip -r a.zip src",
        "zip -9 -q a.zip f",
        "rsync -av src/ dst/",
        "rsync -a --delete src/ dst/",
        "rsync ./a:b c",  # a `/` before the `:`: a local file
        "rsync --chown=user:group a b",
        "scp -P 22 a b",
        "scp -Po a b",  # `-P` takes `o`: a port
        "scp -i key -r a b",
        "python3 x.py",
        "python3 x.py -c config.ini",  # the script's own options
        "python3 -m pytest -q",
        "python -m pytest -q -c pytest.ini",
        "python -m pytest -c x",
        "python3 -Im pytest -c x",
        "python3 -W ignore x.py -c 1",
        "python3 -Wc x.py",  # `-W` takes `c`
        "python3 -u -B x.py -c y",
        "python3 -X dev -m pytest -c x",
        "python3 -",
        "perl x.pl",
        "perl -Ilib/perl5 x.pl",
        "perl -Ilib/perl5 x.pl -e y",
        "perl -I lib x.pl -e y",
        "perl -w x.pl -M y",
        "node x.js",
        "node x.js -e y",
        "node --title=web x.js -p 1",
        "ruby -Ilib/rubygems x.rb",
        "ruby x.rb -e y",
        "php x.php -r y",
        "php -n x.php -d y",
        "lua x.lua -e y",
        "julia x.jl -e y",
        "julia -t 4 x.jl -e y",
        "printf '%s' x",
        "echo x | grep y",
        "ls -la",
    ],
)
def test_covered(command: str) -> None:
    assert refused(command) is None


def test_every_prefix_of_a_refused_long_option_is_refused() -> None:
    """getopt accepts any unique abbreviation: `--ou` may be `--output`."""
    for name in TAR_OPTIONS.long:
        for end in range(1, len(name) + 1):
            assert refused(f"tar -cf a --{name[:end]}=x F") is not None, name[:end]
    for entry in ("sort", "zip", "rsync"):
        for name in PROGRAMS[entry].options.long:
            for end in range(1, len(name) + 1):
                assert refused(f"{entry} --{name[:end]}=x F G") is not None, name[:end]


def test_options_report_what_they_matched() -> None:
    options = Options(short="x", long=("exec",), words=frozenset({"-exec"}))
    assert options.refused(("-exec",)) == "`-exec`"
    assert options.refused(("a", "-qx")) == "`-qx` (holds `-x`)"
    assert options.refused(("--ex=y",)) == "`--ex=y` (may abbreviate `--exec`)"
    assert options.refused(("--exec",)) == "`--exec`"
    assert options.refused(("--", "-", "--other", "x")) is None


def test_a_cluster_is_read_up_to_the_letter_that_takes_the_rest() -> None:
    options = Options(short="o", flags="un", valued="ko")
    assert options.refused(("-uo", "out")) == "`-uo` (holds `-o`)"
    assert options.refused(("-nk2o",)) is None  # `-k` takes `2o`
    assert options.refused(("-ko",)) is None
    assert options.refused(("-xo",)) == "`-xo` (holds `-o`)"  # `-x`: not known, so not sure
    assert options.refused(("-uxko",)) == "`-uxko` (holds `-o`)"


def test_an_interpreters_options_end_at_its_script_or_at_a_stop() -> None:
    python = Options(short="c", flags="uE", valued="cmW", stops="m", script_ends=True)
    assert python.end(("-u", "x.py", "-c", "y")) == 1
    assert python.end(("-m", "pytest", "-c", "y")) == 1
    assert python.end(("-Em", "pytest")) == 1
    assert python.end(("-W", "ignore", "x.py", "-c")) == 2  # `ignore` is -W's value
    assert python.end(("-W", "-m", "x", "-c")) == 4  # `-m` may be -W's value: no stop
    assert python.end(("-X", "x.py", "-c")) == 3  # `-X` is not known: x.py may be its value
    assert python.end(("--flag", "x.py", "-c")) == 3  # a long option may take a value too
    assert python.end(("--flag=1", "x.py", "-c")) == 1
    assert python.end(("-",)) == 0


def test_the_table_is_looked_up_by_base_name() -> None:
    assert program("/usr/bin/git") is PROGRAMS["git"]
    assert program("python3.12") is PROGRAMS["python3"]
    assert program("gitx") is None
    assert never_covered("/bin/sh") is not None
    assert never_covered("git") is None
    assert not set(NEVER_COVERED) & set(PROGRAMS)


def test_no_letter_is_both_a_flag_and_refused_or_valued() -> None:
    for name, options in [*((n, e.options) for n, e in PROGRAMS.items()), ("tar", TAR_OPTIONS)]:
        assert not set(options.flags) & set(options.short + options.valued), name
        assert set(options.stops) <= set(options.valued), name


# -- the cluster reading against getopt itself ---------------------------------------------------


GETOPT_PROGRAMS = {
    "sort": PROGRAMS["sort"].options,
    "tar": TAR_OPTIONS,
    "scp": PROGRAMS["scp"].options,
}


@pytest.mark.parametrize("name", sorted(GETOPT_PROGRAMS))
@given(data=st.data())
def test_a_cluster_is_refused_exactly_when_getopt_reads_a_refused_option(
    name: str, data: st.DataObject
) -> None:
    """For clusters of the letters the entry knows, the table reads what getopt reads:
    refused exactly when getopt returns a refused option (the letters after one that
    takes a value are its value)."""
    options = GETOPT_PROGRAMS[name]
    letters = data.draw(st.text(options.flags + options.valued, min_size=1, max_size=6))
    shortopts = options.flags + "".join(f"{letter}:" for letter in options.valued)
    read, _ = getopt.getopt([f"-{letters}", "F"], shortopts)
    by_getopt = any(option[1] in options.short for option, _ in read)
    assert (options.refused((f"-{letters}", "F")) is not None) == by_getopt, letters


_PYTHON_WORDS = (
    *("-c", "-m", "-W", "-X", "-Q", "-Wc", "-Xc", "-Qc", "-Ic", "-mc", "-cm", "-Im", "-u"),
    *("-E", "-Xdev", "-bb", "-uX", "-XW", "-Wm", "-3c", "-J", "-", "--", "x.py", "pytest"),
    *("--check-hash-based-pycs", "always", "-B", "-t"),
)


def _python_runs_code(args: list[str], flags: str, valued: str) -> bool:
    """CPython's own option loop (Python/getopt.c), in short: whether it reaches `-c`."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--check-hash-based-pycs":
            index += 2
            continue
        if not arg.startswith("-") or arg in ("-", "--") or arg.startswith("--"):
            return False  # the script, stdin, the end of the options, or an error
        for at, letter in enumerate(arg[1:], 1):
            if letter in "cm":
                return letter == "c"
            if letter in valued:
                index += at == len(arg) - 1  # the value is the next argument
                break
            if letter not in flags:
                return False  # an unknown option: python stops with an error
        index += 1
    return False


@given(st.lists(st.sampled_from(_PYTHON_WORDS), max_size=6))
def test_a_covered_python_command_never_reaches_c_in_python_2_or_3(args: list[str]) -> None:
    if refused(shlex.join(["python", *args])) is None:
        assert not _python_runs_code(args, flags="bBdEhiIOPqRsSuvVx", valued="WX"), args
        assert not _python_runs_code(args, flags="3bBdEhiJORsStuUvVxX", valued="QW"), args
