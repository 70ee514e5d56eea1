"""What programs do with their arguments, as data: which ones a name rule can never cover,
and which options make a covered program run another program or load code. Pure.

A name or prefix rule (`shell(git:*)`, `shell(git log:*)`) lets the named
program do its ordinary work with literal arguments. It never covers:

- a program in NEVER_COVERED: shells, wrappers that run their arguments as
  a command (`env`, `xargs`, `timeout`, `sudo`, ...), and bash builtins that
  run code or change the shell's state for the commands after them
  (`eval`, `export`, `read`, `trap`, ...);
- an argument that PROGRAMS lists for that program: short options matched
  anywhere in a `-xyz` cluster, long options matched by ANY prefix
  (`--u` for `--upload-pack`: getopt and git accept unique abbreviations),
  with or without `=value`, and whole words (`find -exec`);
- an interpreter at the receiving end of a pipe (it would run the pipe's
  text as a program);
- what a program-specific check refuses (git's global options and
  subcommands, tar's old-style option cluster and remote archives, sed and
  awk scripts, make's variable overrides).

An exact rule that spells the whole command may still allow any of these.
The table lists what is known to run code; it is not a sandbox: a covered
program still does its own work (git runs the repository's hooks, tar -x
writes files), which docs/permissions.md states.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from copilot_driver.permissions.bash import Command
from copilot_driver.permissions.scripts import awk_refusal, sed_refusal

Check = Callable[[tuple[str, ...]], str | None]
"""Arguments (after the program name) -> why they are not covered, or None."""


@dataclass(frozen=True)
class Options:
    """Arguments refused to a name or prefix rule."""

    short: str = ""
    """Letters refused anywhere in a `-xyz` cluster (so also `-qx`, `-xVALUE`)."""
    long: tuple[str, ...] = ()
    """`--name`s refused as written, abbreviated to any prefix, and with `=value`."""
    words: frozenset[str] = frozenset()
    """Whole arguments refused (find's `-exec`, zip's `-TT`)."""
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    """All of the above as one expression over the arguments joined by NULs (which a
    command never holds), so a long command is scanned at the speed of `re`."""

    def __post_init__(self) -> None:
        choices = [re.escape(word) for word in self.words]
        prefixes = {name[:end] for name in self.long for end in range(1, len(name) + 1)}
        if prefixes:
            spelled = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
            choices.append(f"--(?:{spelled})(?:=[^\x00]*)?")
        if self.short:
            choices.append(f"-(?!-)[^\x00]*?[{re.escape(self.short)}][^\x00]*")
        pattern = f"(?:^|\x00)(?P<arg>{'|'.join(choices)})(?=\x00|$)" if choices else None
        object.__setattr__(self, "_pattern", re.compile(pattern) if pattern else None)

    def refused(self, args: Sequence[str]) -> str | None:
        """The first argument these options refuse, quoted for a message, or None."""
        if self._pattern is None:
            return None
        found = self._pattern.search("\x00".join(args))
        return None if found is None else self._describe(found.group("arg"))

    def _describe(self, arg: str) -> str:
        if arg.startswith("--") and arg not in self.words:
            given = arg[2:].split("=", 1)[0]
            match = next(name for name in self.long if name.startswith(given))
            return f"`{arg}`" if given == match else f"`{arg}` (may abbreviate `--{match}`)"
        letter = next((letter for letter in arg[1:] if letter in self.short), None)
        if arg in self.words or letter is None or len(arg) == 2:
            return f"`{arg}`"
        return f"`{arg}` (holds `-{letter}`)"


@dataclass(frozen=True)
class Program:
    options: Options = field(default_factory=Options)
    check: Check | None = None
    reads_program_from_stdin: bool = False
    """An interpreter: with its input piped in, it runs whatever the pipe carries."""


def _words(text: str) -> tuple[str, ...]:
    """A list written as data: words separated by blanks and newlines."""
    return tuple(text.split())


# -- programs that no name rule covers -----------------------------------------------------------

_SHELLS = _words("sh bash dash zsh ksh mksh ash csh tcsh fish busybox")
_WRAPPERS = _words(
    """
    env xargs parallel nohup nice ionice chrt taskset timeout stdbuf setsid flock chroot nsenter
    unshare setpriv capsh sudo doas su runuser pkexec sg newgrp strace ltrace gdb valgrind watch
    script expect screen tmux at batch systemd-run fakeroot firejail bwrap proot ssh npx pnpx
    bunx deno vim vi nvim ex view emacs ed
    """
)
_BUILTINS_THAT_RUN_CODE = _words(
    ". source eval exec command builtin trap enable fc compgen complete bind coproc time"
)
_BUILTINS_THAT_CHANGE_THE_SHELL = _words(
    """
    export declare typeset local readonly unset set shopt alias unalias hash let read mapfile
    readarray getopts ulimit umask
    """
)

NEVER_COVERED: Mapping[str, str] = {
    **dict.fromkeys(_SHELLS, "a shell runs its arguments as commands"),
    **dict.fromkeys(_WRAPPERS, "it runs another command"),
    **dict.fromkeys(_BUILTINS_THAT_RUN_CODE, "a bash builtin that runs code"),
    **dict.fromkeys(
        _BUILTINS_THAT_CHANGE_THE_SHELL, "a bash builtin that changes what later commands run"
    ),
}
"""Program name -> why no name or prefix rule ever covers it."""


# -- git -----------------------------------------------------------------------------------------

GIT_LONG = _words(
    """
    exec exec-path upload-pack receive-pack config config-env template output
    open-files-in-pager help
    """
)
"""Long options that run a program, set configuration or write where told, in any subcommand
(`--help` opens the manual viewer). Those of subcommands refused whole (send-email's
`--sendmail-cmd`, filter-branch's filters) need no entry here."""
GIT_SHORT = {
    "clone": "cu",
    "ls-remote": "u",
    "rebase": "x",
    "grep": "O",
    "archive": "o",
    "help": "wim",
}
"""Per subcommand, short options that do the same (`clone -c`, `rebase -x`, `help -w`)."""
GIT_SUBCOMMANDS = frozenset(
    _words(
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
alias or an external `git-NAME` program, so every subcommand's short options are refused."""

GIT_SUBCOMMANDS_NEVER_COVERED = frozenset(
    _words(
        """
        difftool mergetool filter-branch instaweb send-email daemon web--browse credential p4 svn
        upload-pack receive-pack upload-archive shell archimport cvsimport cvsserver
        cvsexportcommit quiltimport hook fsmonitor--daemon sh-setup merge-index merge-one-file
        for-each-repo http-backend http-fetch http-push imap-send
        """
    )
)
"""Subcommands whose job is to run other programs or serve requests."""
GIT_ACTIONS_NEVER_COVERED = {"bisect": "run", "submodule": "foreach"}
GIT_GLOBAL_WITH_VALUE = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"}
)
GIT_GLOBAL_FLAGS = frozenset(
    _words(
        """
        -p -P --paginate --no-pager --bare --no-replace-objects --no-lazy-fetch
        --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
        --no-optional-locks --no-advice -v --version -h --html-path --man-path --info-path
        """
    )
)
_GIT_CONFIG_READS = frozenset(
    _words("--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l")
)
_GIT_CONFIG_SCOPES = frozenset(
    {"--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope"}
)


def _git(args: tuple[str, ...]) -> str | None:
    """git [global options] SUBCOMMAND [arguments]."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        name = option.split("=", 1)[0]
        if option.startswith("-c") or name == "--config-env" or name.startswith("--exec"):
            return f"`{option}` sets configuration or the program path, which can run programs"
        if option in GIT_GLOBAL_WITH_VALUE:
            index += 2
        elif (name in GIT_GLOBAL_WITH_VALUE and "=" in option) or option in GIT_GLOBAL_FLAGS:
            index += 1
        else:
            return f"`{option}` is an option before git's subcommand that the policy does not know"
    if index >= len(args):
        return None
    subcommand, rest = args[index], args[index + 1 :]
    if subcommand in GIT_SUBCOMMANDS_NEVER_COVERED or subcommand.startswith(
        ("credential-", "remote-")
    ):
        return f"`git {subcommand}` runs other programs"
    action = GIT_ACTIONS_NEVER_COVERED.get(subcommand)
    positional = [arg for arg in rest if not arg.startswith("-")]
    if action is not None and action in positional[:2]:
        return f"`git {subcommand} {action}` runs a command"
    if subcommand == "config" and not _git_config_only_reads(rest):
        return "`git config` writing configuration can make git run programs"
    if subcommand == "help" and positional:
        return "`git help TOPIC` opens a manual viewer"
    # An alias or an external `git-NAME` program may stand for any subcommand.
    options = _GIT_OPTIONS.get(subcommand, _GIT_ANY_SUBCOMMAND)
    refused = options.refused(rest)
    return None if refused is None else f"{refused} makes git run a program or write where told"


_GIT_OPTIONS = {
    subcommand: Options(short=GIT_SHORT.get(subcommand, ""), long=GIT_LONG)
    for subcommand in GIT_SUBCOMMANDS
}
_GIT_ANY_SUBCOMMAND = Options(short="".join(GIT_SHORT.values()), long=GIT_LONG)


def _git_config_only_reads(rest: tuple[str, ...]) -> bool:
    """`git config --get ...`, `git config get ...`, `git config --list`, `git config KEY`."""
    if any(argument in _GIT_CONFIG_READS for argument in rest):
        return True
    positional = [a for a in rest if not a.startswith("-")]
    if positional[:1] in (["get"], ["list"]):
        return True
    flags = [a for a in rest if a.startswith("-")]
    return len(positional) == 1 and all(flag in _GIT_CONFIG_SCOPES for flag in flags)


# -- others with checks --------------------------------------------------------------------------

TAR_OPTIONS = Options(
    short="IF",
    long=_words(
        """
        to-command checkpoint-action use-compress-program rsh-command rmt-command info-script
        new-volume-script
        """
    ),
)


def _tar(args: tuple[str, ...]) -> str | None:
    refused = TAR_OPTIONS.refused(args)
    if refused is not None:
        return f"{refused} makes tar run a program"
    if args and not args[0].startswith("-") and any(c in TAR_OPTIONS.short for c in args[0]):
        return f"`{args[0]}` (old-style options) makes tar run a program"
    remote = next((arg for arg in args if ":" in arg), None) if ":" in "".join(args) else None
    if remote is not None:
        return f"`{remote}`: tar reaches an archive named HOST:PATH through a remote shell"
    return None


_MAKE_ASSIGNMENT = re.compile(r"(?:^|\x00)(?P<arg>[^-=\x00][^=\x00]*=[^\x00]*)")
"""`NAME=value` among make's arguments joined by NULs."""
_MAKE_OPTIONS = Options(short="E", long=_words("eval"))


def _make(args: tuple[str, ...]) -> str | None:
    refused = _MAKE_OPTIONS.refused(args)
    if refused is not None:
        return f"{refused} makes make evaluate code"
    override = (
        next((arg for arg in args if _MAKE_ASSIGNMENT.match(arg)), None)
        if "=" in "".join(args)
        else None
    )
    if override is not None:
        return f"`{override}` overrides a make variable, which can change the commands make runs"
    return None


def _interpreter(options: Options) -> Program:
    return Program(options=options, reads_program_from_stdin=True)


PROGRAMS: Mapping[str, Program] = {
    "git": Program(check=_git),
    "find": Program(
        options=Options(
            words=frozenset(
                _words("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")
            )
        )
    ),
    "sed": Program(check=sed_refusal),
    **dict.fromkeys(_words("awk gawk mawk nawk"), Program(check=awk_refusal)),
    "tar": Program(check=_tar),
    **dict.fromkeys(_words("make gmake"), Program(check=_make)),
    "sort": Program(options=Options(long=_words("compress-program"))),
    "zip": Program(options=Options(short="T", long=_words("unzip-command test"))),
    "rsync": Program(options=Options(short="e", long=_words("rsh rsync-path"))),
    "scp": Program(options=Options(short="SoF")),
    "sftp": Program(options=Options(short="SoFD")),
    "man": Program(options=Options(short="PH", long=_words("pager html"))),
    "printf": Program(options=Options(short="v")),
    **dict.fromkeys(_words("python python2 python3 pypy pypy3"), _interpreter(Options(short="c"))),
    "perl": _interpreter(Options(short="eEMmd")),
    "ruby": _interpreter(Options(short="er")),
    **dict.fromkeys(
        _words("node nodejs bun"),
        _interpreter(
            Options(
                short="epr",
                long=_words(
                    "eval print require import loader experimental-loader inspect inspect-brk"
                ),
            )
        ),
    ),
    "php": _interpreter(Options(short="rBREd")),
    **dict.fromkeys(_words("lua luajit"), _interpreter(Options(short="el"))),
    "Rscript": _interpreter(Options(short="e", long=_words("eval"))),
    "julia": _interpreter(Options(short="eEL", long=_words("eval print load"))),
    "tclsh": _interpreter(Options()),
}
"""Program name -> what a name or prefix rule does not cover of it."""

_VERSIONED_PYTHON = re.compile(r"python[23](\.[0-9]+)?")


def program(name: str) -> Program | None:
    """The table's entry for a command name (`/usr/bin/git` is git), if any."""
    base = name.rsplit("/", 1)[-1]
    found = PROGRAMS.get(base)
    if found is None and _VERSIONED_PYTHON.fullmatch(base):
        found = PROGRAMS["python3"]
    return found


def never_covered(name: str) -> str | None:
    """Why no name or prefix rule covers a program, or None."""
    return NEVER_COVERED.get(name.rsplit("/", 1)[-1])


def refusal(command: Command) -> str | None:
    """Why a name or prefix rule naming the program does not cover `command`, or None."""
    reason = never_covered(command.name)
    if reason is not None:
        return f"`{command.name}`: {reason}"
    entry = program(command.name)
    if entry is None:
        return None
    args = command.words[1:]
    if command.piped and entry.reads_program_from_stdin:
        return f"`{command.name}` would run the text piped into it as a program"
    option = entry.options.refused(args)
    if option is not None:
        return f"{option} makes {command.name} run a program or write where told"
    return entry.check(args) if entry.check is not None else None
