"""The program table (`permissions.programs`): what a name or prefix rule never covers.

Each refused spelling below was checked with git 2.39, GNU tar 1.34, GNU sed
4.9 and findutils 4.9 to run a program or reach a file (tests/oracle/ and the
end-to-end tests run the same families for real).
"""

from __future__ import annotations

import pytest

from copilot_driver.permissions.bash import parse_command
from copilot_driver.permissions.programs import (
    GIT_LONG,
    NEVER_COVERED,
    PROGRAMS,
    TAR_OPTIONS,
    Options,
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
        # git's global options and how it finds the subcommand
        ("git -c 'alias.x=!y' x", "`-c` sets configuration"),
        ("git -ccore.pager=x log", "sets configuration"),
        ("git -C . -c 'alias.x=!y' x", "sets configuration"),
        ("git --config-env=alias.x=X x", "sets configuration"),
        ("git --exec-path=/tmp status", "program path"),
        ("git --exec-path status", "program path"),
        ("git --git-d=x status", "before git's subcommand that the policy does not know"),
        ("git --oneline", "before git's subcommand"),
        # subcommands whose job is running programs
        ("git difftool -y", "`git difftool` runs other programs"),
        ("git filter-branch HEAD", "runs other programs"),
        ("git credential-store get", "runs other programs"),
        ("git remote-ext x y", "runs other programs"),
        ("git merge-index x -a", "runs other programs"),
        ("git bisect run x", "`git bisect run` runs a command"),
        ("git submodule --quiet foreach x", "`git submodule foreach`"),
        ("git config alias.x '!y'", "`git config` writing configuration"),
        ("git config --global core.pager x", "writing configuration"),
        ("git help log", "manual viewer"),
        # options, by subcommand, abbreviated, bundled, glued
        ("git clone -c 'alias.x=!y' R D", "`-c` makes git"),
        ("git clone -qc 'alias.x=!y' R D", "(holds `-c`)"),
        ("git clone -u x R D", "`-u`"),
        ("git clone --u=x R D", "(may abbreviate `--upload-pack`)"),
        ("git clone --template=T R D", "`--template=T`"),
        ("git ls-remote -u x .", "`-u`"),
        ("git fetch --upload-pac=x origin", "may abbreviate `--upload-pack`"),
        ("git push --e=x . HEAD", "may abbreviate `--exec`"),
        ("git push --receive-pack x .", "`--receive-pack`"),
        ("git archive --exec=x --remote=. HEAD", "`--exec=x`"),
        ("git archive -o out HEAD", "`-o`"),
        ("git rebase -x y HEAD~1", "`-x`"),
        ("git rebase -qxy HEAD~1", "(holds `-x`)"),
        ("git rebase --exe=y HEAD~1", "may abbreviate `--exec`"),
        ("git grep -Ox foo", "(holds `-O`)"),
        ("git grep --open=x foo", "may abbreviate `--open-files-in-pager`"),
        ("git log --output=x", "`--output=x`"),
        ("git status --help", "`--help`"),
        ("git lg -x", "`-x`"),  # an alias may stand for any subcommand
        ("git st -o x", "`-o`"),
        # other programs
        ("find . -exec rm {} ;", "`-exec`"),
        ("find . -name x -fprint out", "`-fprint`"),
        ("find . -delete", "`-delete`"),
        ("tar --to-c=x -xf a", "may abbreviate `--to-command`"),
        ("tar -cf /dev/null F --checkpoint-action=exec=x", "`--checkpoint-action=exec=x`"),
        ("tar --checkpoint=1 -cf a F", "may abbreviate `--checkpoint-action`"),
        ("tar -I x -cf a F", "`-I`"),
        ("tar -cIf x a F", "(holds `-I`)"),
        ("tar cIf x a F", "old-style options"),
        ("tar -cf host:x F", "remote shell"),
        ("tar -F x -cf a F", "`-F`"),
        ("make CC=x", "overrides a make variable"),
        ("make --eval=x", "evaluate code"),
        ("make -E x", "evaluate code"),
        ("sort --compress-program=x f", "`--compress-program=x`"),
        ("zip -TT x a.zip f", "`-TT`"),
        ("rsync -e x a b", "`-e`"),
        ("rsync --rsync-path=x a b", "`--rsync-path=x`"),
        ("scp -o ProxyCommand=x a b", "`-o`"),
        ("man -P x git", "`-P`"),
        ("printf -v PATH x", "`-v`"),
        ("python3 -c 'x'", "`-c`"),
        ("python3.11 -Ic 'x'", "(holds `-c`)"),
        ("perl -e x", "`-e`"),
        ("perl -MPOSIX x.pl", "`-MPOSIX`"),
        ("node --eval=x", "`--eval=x`"),
        ("node -p x", "`-p`"),
        ("ruby -e x", "`-e`"),
        ("php -r x", "`-r`"),
        ("echo x | python3", "would run the text piped into it"),
        ("echo x |& python3 -", "would run the text piped into it"),
        ("echo x | tclsh", "would run the text piped into it"),
        ("cat f | python3 x.py", "would run the text piped into it"),  # refused all the same
        ("/usr/bin/env git status", "`/usr/bin/env`: it runs another command"),
        ("/usr/bin/git -c x=y log", "sets configuration"),
    ],
)
def test_refused(command: str, why: str) -> None:
    reason = refused(command)
    assert reason is not None, command
    assert why in reason, reason


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git -C src --no-pager log --oneline -5",
        "git --git-dir=.git --work-tree=. status",
        "git -p log",
        "git log -c",
        "git cherry-pick -x abc",
        "git commit -m 'x' --cc",
        "git config user.name",
        "git config --get alias.x",
        "git config --list",
        "git help",
        "git push -u origin main",
        "git diff --output-indicator-new=+",
        "git format-patch --output-directory out HEAD~1",
        "git describe --exact-match",
        "git rebase --continue",
        "find . -name x -type f -print",
        "tar -tf a.tar",
        "tar -czf a.tgz src",
        "make -C src test",
        "sort -u f",
        "python3 x.py",
        "python3 -m pytest -q",
        "node x.js",
        "printf '%s' x",
        "echo x | grep y",
        "ls -la",
    ],
)
def test_covered(command: str) -> None:
    assert refused(command) is None


def test_every_prefix_of_a_refused_long_option_is_refused() -> None:
    """getopt and git accept any unique abbreviation: `--u` may be `--upload-pack`."""
    for name in GIT_LONG:
        for end in range(1, len(name) + 1):
            for spelling in (f"--{name[:end]}", f"--{name[:end]}=x"):
                assert refused(f"git log {spelling}") is not None, spelling
    for name in TAR_OPTIONS.long:
        for end in range(1, len(name) + 1):
            assert refused(f"tar -cf a --{name[:end]}=x F") is not None, name[:end]


def test_options_report_what_they_matched() -> None:
    options = Options(short="x", long=("exec",), words=frozenset({"-exec"}))
    assert options.refused(("-exec",)) == "`-exec`"
    assert options.refused(("a", "-qx")) == "`-qx` (holds `-x`)"
    assert options.refused(("--ex=y",)) == "`--ex=y` (may abbreviate `--exec`)"
    assert options.refused(("--exec",)) == "`--exec`"
    assert options.refused(("--", "-", "--other", "x")) is None


def test_the_table_is_looked_up_by_base_name() -> None:
    assert program("/usr/bin/git") is PROGRAMS["git"]
    assert program("python3.12") is PROGRAMS["python3"]
    assert program("gitx") is None
    assert never_covered("/bin/sh") is not None
    assert never_covered("git") is None
    assert not set(NEVER_COVERED) & set(PROGRAMS)
