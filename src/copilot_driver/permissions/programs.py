"""What programs do with their arguments, as data: which ones a name rule can never cover,
and which options make a covered program run another program, load code, write where
told or start the editor. Pure.

A name or prefix rule (`shell(git:*)`, `shell(git log:*)`) lets the named
program do its ordinary work with literal arguments. It never covers:

- a program in NEVER_COVERED: shells, wrappers that run their arguments as
  a command (`env`, `xargs`, `timeout`, `sudo`, ...), and bash builtins that
  run code or change the shell's state for the commands after them
  (`eval`, `export`, `read`, `trap`, ...);
- an argument that PROGRAMS lists for that program, read the way the program
  reads it (`permissions.options`): short options in any `-xyz` cluster up to
  a letter that takes the rest as its value (`sort -uoF` holds `-o`, `sort
  -k2o` does not), long options in ANY abbreviation (`--u` for
  `--upload-pack`) with or without `=value`, whole words (`find -exec`), and
  for an interpreter only the options before its script or `-m MODULE`
  (`python -m pytest -c x` hands `-c` to pytest);
- an interpreter at the receiving end of a pipe (it would run the pipe's
  text as a program);
- what a program-specific check refuses (git's global options, subcommands
  and editors: `permissions.git`; tar's old-style option cluster and remote
  archives, rsync's remote hosts, make's variable overrides and makefiles
  read from its input, zip's log file, sed and awk scripts).

An exact rule that spells the whole command may still allow any of these.
The table lists what is known to run code or write where told; it is not a
sandbox: a covered program still does its own work (git runs the
repository's hooks, tar -x writes files), which docs/permissions.md states.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from copilot_driver.permissions import git
from copilot_driver.permissions.awk import awk_refusal
from copilot_driver.permissions.bash import Command
from copilot_driver.permissions.options import Options, cluster_letters, words
from copilot_driver.permissions.scripts import sed_refusal

Check = Callable[[tuple[str, ...]], str | None]
"""Arguments (after the program name) -> why they are not covered, or None."""


@dataclass(frozen=True)
class Program:
    options: Options = field(default_factory=Options)
    check: Check | None = None
    reads_program_from_stdin: bool = False
    """An interpreter: with its input piped in, it runs whatever the pipe carries."""


# -- programs that no name rule covers -----------------------------------------------------------

_SHELLS = words("sh bash dash zsh ksh mksh ash csh tcsh fish busybox")
_WRAPPERS = words(
    """
    env xargs parallel nohup nice ionice chrt taskset timeout stdbuf setsid flock chroot nsenter
    unshare setpriv capsh sudo doas su runuser pkexec sg newgrp strace ltrace gdb valgrind watch
    script expect screen tmux at batch systemd-run fakeroot firejail bwrap proot ssh npx pnpx
    bunx deno vim vi nvim ex view emacs ed
    """
)
_BUILTINS_THAT_RUN_CODE = words(
    ". source eval exec command builtin trap enable fc compgen complete bind coproc time"
)
_BUILTINS_THAT_CHANGE_THE_SHELL = words(
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


# -- git ------------------------------------------------------------------------------------------
# Its tables and its check (`git.refusal`, the PROGRAMS entry) are in permissions/git.py.


# -- others with checks --------------------------------------------------------------------------

TAR_OPTIONS = Options(
    short="IFg",
    long=words(
        """
        to-command checkpoint-action use-compress-program rsh-command rmt-command info-script
        new-volume-script remove-files index-file listed-incremental volno-file
        """
    ),
    flags="acdhijklmnoprstuvwxzABGJMOPRSUWZ",
    valued="bfgCFHIKLNTVX",
)
"""Options that run a program, or write or remove files where told (the snapshot of `-g`,
the log of `--index-file`, `--remove-files` removing what it archived); `-f ARCHIVE` is
tar's own work. GNU tar 1.34's letters."""


def _tar(args: tuple[str, ...]) -> str | None:
    refused = TAR_OPTIONS.refused(args)
    if refused is not None:
        return f"{refused} makes tar run a program or write where told"
    if args and not args[0].startswith("-") and any(c in TAR_OPTIONS.short for c in args[0]):
        return f"`{args[0]}` (old-style options) makes tar run a program or write where told"
    remote = next((arg for arg in args if ":" in arg), None) if ":" in "".join(args) else None
    if remote is not None:
        return f"`{remote}`: tar reaches an archive named HOST:PATH through a remote shell"
    return None


_MAKE_ASSIGNMENT = re.compile(r"(?:^|\x00)(?P<arg>[^-=\x00][^=\x00]*=[^\x00]*)")
"""`NAME=value` among make's arguments joined by NULs."""
_MAKE_OPTIONS = Options(short="E", long=words("eval"), flags="bdehikmnpqrstvwBLRS", valued="CEfIoW")
_DEVICES = frozenset({"dev", "proc"})


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
    device = next(
        (p for p in _makefile_paths(args) if p == "-" or _DEVICES & set(p.split("/"))), None
    )
    if device is not None:
        return (
            f"`{device}`: make would read its makefile from its input or a device "
            "(the text piped into it would run)"
        )
    return None


def _makefile_paths(args: tuple[str, ...]) -> Iterator[str]:
    """The values of `-f`, `--file`, `--makefile`, `-C` and `--directory` (in any
    abbreviation or cluster): `-f -`, `-f /dev/stdin`, `-C /dev/fd -f 0` read the input."""
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        if arg.startswith("--"):
            name, equals, value = arg[2:].partition("=")
            if name and any(full.startswith(name) for full in ("file", "makefile", "directory")):
                yield value if equals else following
        elif arg.startswith("-"):
            letters = cluster_letters(arg, _MAKE_OPTIONS.flags, _MAKE_OPTIONS.valued)
            for found in re.finditer("[fC]", letters):
                yield arg[found.end() + 1 :] or following


def _zip(args: tuple[str, ...]) -> str | None:
    """zip's two-letter `-lf PATH` (also in a cluster, `-qlf`) writes its log where told."""
    log = next(
        (a for a in args if a.startswith("-") and not a.startswith("--") and "lf" in a), None
    )
    if log is None:
        return None
    return f"`{log}`{'' if log == '-lf' else ' (holds `-lf`)'} makes zip write a log where told"


_RSYNC_COLON_VALUES = frozenset(words("--chown --usermap --groupmap --copy-as --stop-at"))


def _rsync(args: tuple[str, ...]) -> str | None:
    """A file named HOST:PATH, HOST::MODULE or rsync://HOST (a `:` before any `/`, as rsync
    reads it) reaches another machine through a remote shell or a daemon."""
    for arg in args:
        name, equals, value = arg.partition("=")
        where = value if arg.startswith("--") and equals else arg
        if ":" in where.split("/", 1)[0] and not (equals and name in _RSYNC_COLON_VALUES):
            return f"`{arg}`: rsync reaches HOST:PATH through a remote shell or a daemon"
    return None


def _interpreter(options: Options) -> Program:
    return Program(options=options, reads_program_from_stdin=True)


PYTHON = Options(short="c", flags="bBdEhiIOqRsStuvVx3", valued="cmW", stops="m", script_ends=True)
"""python 2 and 3: `-c` runs code; `-m MODULE` and the script end python's options; `-W`
takes a value in both (`-X` only in 3, `-Q` only in 2: not certain, so not listed)."""
PERL = Options(short="eEMmd", flags="acfhnpsStTuUvwWX", valued="eEIx", script_ends=True)
"""perl 5: `-I` and `-x` take the rest of their argument; `-i`, `-F`, `-l`, `-0`, `-C`, `-D`
and `-V` take a part of it and go on reading switches, even after a blank (`'-i.bak -e'`),
so they are not listed."""

PROGRAMS: Mapping[str, Program] = {
    "git": Program(check=git.refusal),
    "find": Program(
        options=Options(
            words=frozenset(
                words("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")
            )
        )
    ),
    "sed": Program(check=sed_refusal),
    **dict.fromkeys(words("awk gawk mawk nawk original-awk"), Program(check=awk_refusal)),
    "tar": Program(check=_tar),
    **dict.fromkeys(words("make gmake"), Program(check=_make)),
    "sort": Program(
        options=Options(
            short="o",
            long=words("compress-program output"),
            flags="bcdfghimnrsuzCMRV",
            valued="koStTy",
        )
    ),
    "zip": Program(
        options=Options(short="Tm", long=words("unzip-command test move logfile-path")),
        check=_zip,
    ),
    "rsync": Program(
        options=Options(
            short="eM",
            long=words(
                """
                rsh rsync-path remote-option log-file remove-source-files write-batch
                only-write-batch
                """
            ),
            valued="efBMT@",
        ),
        check=_rsync,
    ),
    "scp": Program(
        options=Options(short="SoFD", flags="12346ABCTdfOpqRrstv", valued="ciloDFJMPSX")
    ),
    "sftp": Program(options=Options(short="SoFD")),
    "man": Program(options=Options(short="PH", long=words("pager html"))),
    "printf": Program(options=Options(short="v")),
    **dict.fromkeys(words("python python2 python3 pypy pypy3"), _interpreter(PYTHON)),
    "perl": _interpreter(PERL),
    "ruby": _interpreter(
        Options(short="er", flags="acdhlnpsSvwyU", valued="CEFIer", script_ends=True)
    ),
    **dict.fromkeys(
        words("node nodejs bun"),
        _interpreter(
            Options(
                short="epr",
                long=words(
                    "eval print require import loader experimental-loader inspect inspect-brk"
                ),
                flags="chiv",
                valued="Cepr",
                script_ends=True,
            )
        ),
    ),
    "php": _interpreter(
        Options(short="rBREd", flags="aCehHilmnqsvw", valued="BcdEFfrRStz", script_ends=True)
    ),
    **dict.fromkeys(
        words("lua luajit"),
        _interpreter(Options(short="el", flags="EWiv", valued="el", script_ends=True)),
    ),
    "Rscript": _interpreter(Options(short="e", long=words("eval"))),
    "julia": _interpreter(
        Options(
            short="eEL",
            long=words("eval print load"),
            flags="hiqv",
            valued="CeEgHJLmOpPt",
            script_ends=True,
        )
    ),
    "tclsh": _interpreter(Options()),
}
"""Program name -> what a name or prefix rule does not cover of it. The letters are those of
GNU sort 9.1, GNU make 4.3, OpenSSH 9.2's scp, rsync 3.2.7, CPython 2.7 and 3.11, perl 5.36,
node 20 and ruby's, php's, lua's and julia's own option loops."""


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
