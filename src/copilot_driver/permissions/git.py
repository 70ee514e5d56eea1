"""git's entry in the program table: what `shell(git:*)` does not cover. Pure.

git is covered for its own work (it runs the repository's hooks, reads its
configuration, reaches remotes: docs/permissions.md), never for:

- a global option that sets configuration or the program path (`-c`, `--config-env`,
  `--exec-path`), one the policy does not know, or `--work-tree` naming another folder
  (git then writes the work tree there);
- a subcommand whose job is to run other programs or serve requests (`difftool`,
  `filter-branch`, `daemon`, ...), or one of its actions (`bisect run`, `worktree add`);
- an option that runs a program or writes where told (`--upload-pack`, `rebase -x`,
  `format-patch -o`, `apply --unsafe-paths`), in any subcommand when an alias or an
  external `git-NAME` may stand for it;
- a command that starts the editor (core.editor, $EDITOR: a program of the
  environment's choosing): `commit` without a message, `tag -a` without one, `rebase -i`,
  `merge -e`, `notes edit`, ... (git_editor.py reads whether a message is given).
"""

from __future__ import annotations

from copilot_driver.permissions.git_editor import editor_refusal
from copilot_driver.permissions.options import Options, words

GIT_LONG = words(
    """
    exec exec-path upload-pack receive-pack config config-env template output
    open-files-in-pager help separate-git-dir
    """
)
"""Long options that run a program, set configuration or write where told, in any subcommand
(`--help` opens the manual viewer, `--separate-git-dir` puts the repository where told).
Those of subcommands refused whole (send-email's `--sendmail-cmd`, filter-branch's filters)
need no entry here."""
GIT_SHORT = {
    "clone": "cu",
    "ls-remote": "u",
    "rebase": "xi",
    "grep": "O",
    "archive": "o",
    "format-patch": "o",
    "diagnose": "o",
    "help": "wim",
    "merge": "e",
    "cherry-pick": "e",
    "revert": "e",
    "add": "e",
    "replace": "e",
}
"""Per subcommand, short options that do the same (`clone -c`, `rebase -x`, `format-patch -o`),
or start the editor (`rebase -i`, `merge -e`, `add -e`)."""
GIT_SUBCOMMAND_LONG = {
    "apply": ("unsafe-paths",),
    "format-patch": ("output-directory",),
    "diagnose": ("output-directory",),
    "rebase": ("interactive", "edit-todo"),
    "branch": ("edit-description",),
    **dict.fromkeys(("merge", "cherry-pick", "revert", "pull", "add", "replace"), ("edit",)),
}
"""Per subcommand, long options that write where told (`apply --unsafe-paths` writes
outside the work tree, into `.git/hooks` too) or start the editor."""
GIT_VALUED = {"merge": "mFsX", "cherry-pick": "mXS", "revert": "mXS", "rebase": "sXC"}
"""Per subcommand, short options that take a value (`merge -mfixes` is not `-e`)."""
GIT_SUBCOMMANDS = frozenset(
    words(
        """
        add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
        check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean
        clone column commit commit-graph commit-tree config count-objects credential
        credential-cache credential-store daemon describe diagnose diff diff-files diff-index
        diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg
        for-each-ref for-each-repo format-patch fsck fsck-objects gc get-tar-commit-id grep
        hash-object help hook http-backend http-fetch http-push imap-send index-pack init init-db
        instaweb interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance
        merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours
        merge-recursive merge-recursive-ours merge-recursive-theirs merge-resolve merge-subtree
        merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes pack-objects
        pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push quiltimport
        range-diff read-tree rebase receive-pack reflog remote remote-ext remote-fd remote-ftp
        remote-ftps remote-http remote-https repack replace request-pull rerere reset restore
        rev-list rev-parse revert rm send-pack shell shortlog show show-branch show-index show-ref
        sparse-checkout stage stash status stripspace submodule subtree switch symbolic-ref tag
        unpack-file unpack-objects update-index update-ref update-server-info upload-archive
        upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree
        """
    )
)
"""git's own subcommands (git 2.39 `--list-cmds=main,nohelpers`); any other word may be an
alias or an external `git-NAME` program, so every subcommand's options are refused."""

GIT_SUBCOMMANDS_NEVER_COVERED = frozenset(
    words(
        """
        difftool mergetool filter-branch instaweb send-email daemon web--browse credential p4 svn
        upload-pack receive-pack upload-archive shell archimport cvsimport cvsserver
        cvsexportcommit quiltimport hook fsmonitor--daemon sh-setup merge-index merge-one-file
        for-each-repo http-backend http-fetch http-push imap-send bugreport
        """
    )
)
"""Subcommands whose job is to run other programs or serve requests (`bugreport` writes
its report where told and opens the editor)."""
GIT_ACTIONS_NEVER_COVERED = {
    "bisect": ("run",),
    "submodule": ("foreach",),
    "worktree": ("add", "move"),
    "bundle": ("create",),
}
"""Actions that run a command (`bisect run`) or write where told (`worktree add PATH`,
`bundle create FILE`)."""
GIT_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"}
)
GIT_GLOBAL_FLAGS = frozenset(
    words(
        """
        -p -P --paginate --no-pager --bare --no-replace-objects --no-lazy-fetch
        --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
        --no-optional-locks --no-advice -v --version -h --html-path --man-path --info-path
        """
    )
)
_GIT_CONFIG_READS = frozenset(
    words("--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l")
)
_GIT_CONFIG_SCOPES = frozenset(
    {"--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope"}
)


_OPTIONS = {
    subcommand: Options(
        short=GIT_SHORT.get(subcommand, ""),
        long=GIT_LONG + GIT_SUBCOMMAND_LONG.get(subcommand, ()),
        valued=GIT_VALUED.get(subcommand, ""),
    )
    for subcommand in GIT_SUBCOMMANDS
}
_ANY_SUBCOMMAND = Options(
    short="".join(sorted(set("".join(GIT_SHORT.values())))),
    long=GIT_LONG + tuple(sorted({n for names in GIT_SUBCOMMAND_LONG.values() for n in names})),
)
"""Each subcommand's options as `Options`; an alias or an external `git-NAME` may stand for
any subcommand, so it gets all of them."""


def refusal(args: tuple[str, ...]) -> str | None:
    """Why `shell(git:*)` does not cover `git ARGS`, or None."""
    index, reason = _global_options(args)
    if reason is not None or index >= len(args):
        return reason
    return _subcommand_refusal(args[index], args[index + 1 :])


def unknown_subcommand(args: tuple[str, ...]) -> str | None:
    """The subcommand of `git ARGS` when it is not one of git's own (so an alias or an
    external `git-NAME` program, which may run anything), else None."""
    index, _ = _global_options(args)
    if index < len(args) and args[index] not in GIT_SUBCOMMANDS:
        return args[index]
    return None


def _global_options(args: tuple[str, ...]) -> tuple[int, str | None]:
    """Where the subcommand is, past git's global options, and why one of those is not
    covered (then the index is that option's)."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        name = option.split("=", 1)[0]
        if option.startswith("-c") or name == "--config-env" or name.startswith("--exec"):
            return index, (
                f"`{option}` sets configuration or the program path, which can run programs"
            )
        if name == "--work-tree":
            following = args[index + 1] if index + 1 < len(args) else ""
            value = option.partition("=")[2] if "=" in option else following
            if value != ".":
                return index, f"`{option}` makes git write the work tree in another folder"
        if option in GIT_GLOBAL_WITH_VALUE:
            index += 2
        elif (name in GIT_GLOBAL_WITH_VALUE and "=" in option) or option in GIT_GLOBAL_FLAGS:
            index += 1
        else:
            return index, (
                f"`{option}` is an option before git's subcommand that the policy does not know"
            )
    return index, None


def _subcommand_refusal(subcommand: str, rest: tuple[str, ...]) -> str | None:
    if subcommand in GIT_SUBCOMMANDS_NEVER_COVERED or subcommand.startswith(
        ("credential-", "remote-")
    ):
        return f"`git {subcommand}` runs other programs"
    positional = [arg for arg in rest if not arg.startswith("-")]
    action = next(
        (a for a in GIT_ACTIONS_NEVER_COVERED.get(subcommand, ()) if a in positional[:2]), None
    )
    if action is not None:
        return f"`git {subcommand} {action}` runs a command or writes where told"
    if subcommand == "config" and not _config_only_reads(rest):
        return "`git config` writing configuration can make git run programs"
    if subcommand == "help" and positional:
        return "`git help TOPIC` opens a manual viewer"
    # An alias or an external `git-NAME` program may stand for any subcommand.
    options = _OPTIONS.get(subcommand, _ANY_SUBCOMMAND)
    refused = options.refused(rest)
    if refused is not None:
        return f"{refused} makes git run a program, write where told or start the editor"
    reason = editor_refusal(subcommand, rest)
    return None if reason is None else f"{reason} (core.editor or $EDITOR: another program)"


def _config_only_reads(rest: tuple[str, ...]) -> bool:
    """`git config --get ...`, `git config get ...`, `git config --list`, `git config KEY`."""
    if any(argument in _GIT_CONFIG_READS for argument in rest):
        return True
    positional = [a for a in rest if not a.startswith("-")]
    if positional[:1] in (["get"], ["list"]):
        return True
    flags = [a for a in rest if a.startswith("-")]
    return len(positional) == 1 and all(flag in _GIT_CONFIG_SCOPES for flag in flags)
