"""git's entry in the program table (`permissions.git`): what `shell(git:*)` does not cover.

Each refused spelling below was checked with git 2.39 to run a program, write where told
or start the editor (the families of tests/helpers/shell_corpus.py run the same for real).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.permissions.bash import parse_command
from copilot_driver.permissions.git import GIT_LONG, GIT_SUBCOMMAND_LONG
from copilot_driver.permissions.programs import refusal


def refused(text: str) -> str | None:
    (command,) = parse_command(text)[-1:]
    return refusal(command)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        # global options and how git finds the subcommand
        ("git -c 'alias.x=!y' x", "`-c` sets configuration"),
        ("git -ccore.pager=x log", "sets configuration"),
        ("git -C . -c 'alias.x=!y' x", "sets configuration"),
        ("git --config-env=alias.x=X x", "sets configuration"),
        ("git --exec-path=/tmp status", "program path"),
        ("git --exec-path status", "program path"),
        ("git --git-d=x status", "before git's subcommand that the policy does not know"),
        ("git --oneline", "before git's subcommand"),
        ("git --work-tree=src checkout HEAD -- F", "write the work tree in another folder"),
        ("git --work-tree src status", "`--work-tree` makes git write"),
        ("git --work-tree=/ status", "in another folder"),
        # subcommands whose job is running programs, and their actions
        ("git difftool -y", "`git difftool` runs other programs"),
        ("git filter-branch HEAD", "runs other programs"),
        ("git credential-store get", "runs other programs"),
        ("git remote-ext x y", "runs other programs"),
        ("git merge-index x -a", "runs other programs"),
        ("git bugreport", "`git bugreport` runs other programs"),
        ("git bugreport -o out", "`git bugreport`"),
        ("git bisect run x", "`git bisect run` runs a command"),
        ("git submodule --quiet foreach x", "`git submodule foreach`"),
        ("git worktree add ../elsewhere", "`git worktree add` runs a command or writes where"),
        ("git worktree add -b b x", "`git worktree add`"),
        ("git worktree move a b", "`git worktree move`"),
        ("git bundle create out HEAD", "`git bundle create`"),
        ("git config alias.x '!y'", "`git config` writing configuration"),
        ("git config --global core.pager x", "writing configuration"),
        ("git config --edit", "writing configuration"),
        ("git help log", "manual viewer"),
        # options, by subcommand, abbreviated, bundled, glued
        ("git clone -c 'alias.x=!y' R D", "`-c` makes git"),
        ("git clone -qc 'alias.x=!y' R D", "(holds `-c`)"),
        ("git clone -u x R D", "`-u`"),
        ("git clone --u=x R D", "(may abbreviate `--upload-pack`)"),
        ("git clone --template=T R D", "`--template=T`"),
        ("git clone --separate-git-dir x R D", "`--separate-git-dir`"),
        ("git init --separate-git-d=x D", "may abbreviate `--separate-git-dir`"),
        ("git ls-remote -u x .", "`-u`"),
        ("git fetch --upload-pac=x origin", "may abbreviate `--upload-pack`"),
        ("git push --e=x . HEAD", "may abbreviate `--exec`"),
        ("git push --receive-pack x .", "`--receive-pack`"),
        ("git archive --exec=x --remote=. HEAD", "`--exec=x`"),
        ("git archive -o out HEAD", "`-o`"),
        ("git format-patch -o out HEAD~1", "`-o`"),
        ("git format-patch --output-directory out HEAD~1", "`--output-directory`"),
        ("git format-patch --output-dir=out HEAD~1", "may abbreviate `--output-directory`"),
        ("git format-patch --output=x HEAD~1", "`--output=x`"),
        ("git diagnose -o out", "`-o`"),
        ("git diagnose --output-directory=out", "`--output-directory=out`"),
        ("git apply --unsafe-paths p.diff", "`--unsafe-paths`"),
        ("git apply --unsafe p.diff", "may abbreviate `--unsafe-paths`"),
        ("git rebase -x y HEAD~1", "`-x`"),
        ("git rebase -qxy HEAD~1", "(holds `-x`)"),
        ("git rebase --exe=y HEAD~1", "may abbreviate `--exec`"),
        ("git grep -Ox foo", "(holds `-O`)"),
        ("git grep --open=x foo", "may abbreviate `--open-files-in-pager`"),
        ("git log --output=x", "`--output=x`"),
        ("git status --help", "`--help`"),
        ("git lg -x", "`-x`"),  # an alias may stand for any subcommand
        ("git st -o x", "`-o`"),
        ("git ci --edit", "`--edit`"),
        # the editor (core.editor, $EDITOR)
        ("git commit", "`git commit` without -m, -F, -C or --no-edit starts the editor"),
        ("git commit -a", "without -m"),
        ("git commit --amend", "without -m"),
        ("git commit -p", "without -m"),
        ("git commit --squash=HEAD", "without -m"),
        ("git commit -t T", "without -m"),
        ("git commit --mess=x", "without -m"),  # an abbreviation counts as no message
        ("git commit --author -m x", "without -m"),  # `-m` is the author
        ("git commit -Sm x", "without -m"),  # `-S` takes `m` as its key
        ("git commit -e -m x", "`-e` makes `git commit` start the editor"),
        ("git commit -em x", "`-em` makes `git commit` start the editor"),
        ("git commit -m x -u -e", "`-e` makes"),
        ("git commit --edit -m x", "`--edit`"),
        ("git commit --ed -m x", "`--ed`"),
        ("git commit -c HEAD", "`-c` makes `git commit`"),
        ("git commit --reedit-message=HEAD", "`--reedit-message=HEAD`"),
        ("git commit --fixup=amend:HEAD", "`--fixup=amend:HEAD`"),
        ("git commit --fixup reword:HEAD", "`--fixup`"),
        ("git commit --weird -- -e -m x", "`-e` makes"),  # `--` may be --weird's value
        ("git -C R commit --allow-empty", "without -m"),
        ("git tag -a v1", "`git tag -a` without -m or -F starts the editor"),
        ("git tag -s v1", "`git tag -a` without -m"),
        ("git tag --ann v1", "`git tag -a` without -m"),
        ("git tag -u key v1", "`git tag -a` without -m"),
        ("git tag -ae v1", "`-ae` makes `git tag` start the editor"),
        ("git tag -a -e -m x v1", "`-e` makes `git tag`"),
        ("git notes add", "`git notes add` without -m, -F or -C starts the editor"),
        ("git notes --ref x append", "`git notes append` without -m"),
        ("git notes add -c HEAD", "`git notes add` without -m"),
        ("git notes edit", "`git notes edit` starts the editor"),
        ("git rebase -i HEAD~2", "`-i` makes git"),
        ("git rebase -ki HEAD~2", "(holds `-i`)"),
        ("git rebase --interactive HEAD~2", "`--interactive`"),
        ("git rebase --edit-todo", "`--edit-todo`"),
        ("git merge -e side", "`-e` makes git"),
        ("git merge --edit side", "`--edit`"),
        ("git cherry-pick -e x", "`-e`"),
        ("git revert -e HEAD", "`-e`"),
        ("git revert --ed HEAD", "may abbreviate `--edit`"),
        ("git pull --edit . side", "`--edit`"),
        ("git add -e", "`-e`"),
        ("git add --edit", "`--edit`"),
        ("git branch --edit-description", "`--edit-description`"),
        ("git replace --edit HEAD", "`--edit`"),
        ("git replace -e HEAD", "`-e`"),
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
        "git --work-tree . status",
        "git -p log",
        "git log -c",
        "git cherry-pick -x abc",
        "git commit -m 'x' --cc",
        "git commit -m x",
        'git commit -m "Fix the bug!"',
        "git commit -am x",
        "git commit -qam x",
        "git commit -m x -- -e",  # a pathspec
        "git commit --amend --no-edit",
        "git commit --amend -m x",
        "git commit --no-edit",
        "git commit -F msg.txt",
        "git commit -F -",
        "git commit --file=msg.txt",
        "git commit --message x",
        "git commit -C HEAD",
        "git commit --reuse-message=HEAD",
        "git commit --fixup=HEAD",
        "git commit --fixup HEAD",
        "git commit --author 'A <a@a>' -m x",
        "git commit -S -m x",
        "git commit -t T -m x",
        "git commit -p -m x",
        "git tag v1",
        "git tag -am x v1",
        "git tag -a -m x v1",
        "git tag -m x v1",
        "git tag -d v1",
        "git tag -l",
        "git notes add -m x",
        "git notes --ref=x add -F f",
        "git notes show",
        "git notes",
        "git config user.name",
        "git config --get alias.x",
        "git config --list",
        "git help",
        "git push -u origin main",
        "git diff --output-indicator-new=+",
        "git format-patch HEAD~1",
        "git format-patch --stdout HEAD~1",
        "git diagnose",
        "git apply p.diff",
        "git apply --directory=sub p.diff",
        "git bundle verify b",
        "git worktree list",
        "git describe --exact-match",
        "git rebase --continue",
        "git rebase HEAD~2",
        "git merge side",
        "git merge -m 'see' side",
        "git merge -mfixes side",  # `-m` takes the rest: not `-e`
        "git revert HEAD",
        "git pull",
        "git add -A",
        "git branch -d x",
    ],
)
def test_covered(command: str) -> None:
    assert refused(command) is None


def test_every_prefix_of_a_refused_long_option_is_refused() -> None:
    """git accepts any unique abbreviation: `--u` may be `--upload-pack`."""
    for name in GIT_LONG:
        for end in range(1, len(name) + 1):
            for spelling in (f"--{name[:end]}", f"--{name[:end]}=x"):
                assert refused(f"git log {spelling}") is not None, spelling
    for subcommand, names in GIT_SUBCOMMAND_LONG.items():
        for name in names:
            for end in range(1, len(name) + 1):
                assert refused(f"git {subcommand} --{name[:end]}") is not None, (subcommand, name)


_COMMIT_FLAGS = ("-a", "-q", "-v", "-s", "-n", "--amend", "--allow-empty", "--signoff", "-qa")
_COMMIT_MESSAGES = ("-m x", "-mx", "-am x", "-F f", "-C HEAD", "--message=x", "--no-edit")
_COMMIT_EDITORS = ("-e", "--edit", "-c HEAD", "-qe", "--reedit-message=HEAD")


@given(
    st.lists(st.sampled_from(_COMMIT_FLAGS), max_size=4),
    st.sampled_from(_COMMIT_MESSAGES),
    st.sampled_from(_COMMIT_EDITORS),
    st.integers(min_value=0, max_value=5),
)
def test_a_commit_is_covered_exactly_when_it_has_a_message_and_no_editor_option(
    flags: list[str], message: str, editor: str, at: int
) -> None:
    """Flags anywhere, a message anywhere: covered; an editor option anywhere: not."""
    words = [*flags]
    words.insert(min(at, len(words)), message)
    assert refused("git commit " + " ".join(flags)) is not None
    assert refused("git commit " + " ".join(words)) is None
    words.insert(min(at, len(words)), editor)
    assert refused("git commit " + " ".join(words)) is not None
