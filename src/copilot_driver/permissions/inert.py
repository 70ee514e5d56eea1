"""Programs known to run no other program: what a line may hold while a deny rule holds. Pure.

A deny rule such as `shell(rm)` is a promise that `rm` does not run. The
policy can keep it only for programs it understands: a wrapper (`setarch
x86_64 rm V`, `prlimit rm V`), a build tool (`cmake -E env rm V`), a
package manager (`npm exec -c 'rm V'`), a database with a shell escape
(`sqlite3 x '.shell rm V'`) or a search tool with a preprocessor (`rg --pre
rm`) can each run the denied program in ways no table of options lists in
full. So while any shell deny rule is in force, a command is approved only
when its program is on RUNS_NOTHING_ELSE, called by its bare name (a path
may be anything), with no `NAME=value` prefix, and with no option the
program table (`programs.refusal`) refuses. Any other program needs an
explicit allow rule that names it: the workflow author then grants what it
does knowingly.

The list holds compiled programs and bash builtins only: a program that is a
script (`egrep`, `zcat`, `which`) runs its interpreter and the programs it
calls. `git`, `sed`, `awk`, `find`, `tar` and `sort` are here with their
table checks (git's aliases and external subcommands excluded below). What
git does on its own — hooks, filters, the pager its configuration names — is
the repository's configuration, which the sandbox keeps read-only.
"""

from __future__ import annotations

from copilot_driver.permissions import git, programs
from copilot_driver.permissions.bash import Command
from copilot_driver.permissions.options import words

RUNS_NOTHING_ELSE = frozenset(
    words(
        """
    ls cat head tail wc grep cut tr uniq sort comm join paste nl fold rev tac od base64 base32
    md5sum sha1sum sha256sum sha512sum cksum diff cmp basename dirname realpath readlink stat
    du df date seq sleep tee mkdir rmdir touch cp mv rm ln chmod jq
    echo printf pwd cd true false test type
    git sed awk gawk mawk nawk original-awk find tar
    """
    )
)
"""Programs whose only way to run another program is an option the table refuses."""


def runs_another(command: Command) -> str | None:
    """Why `command` could run a program the policy does not see, or None."""
    if command.assignments:
        variable = command.assignments[0].split("=", 1)[0].rstrip("+")
        return f"it assigns {variable}"
    name = command.name
    if "/" in name:
        return f"`{name}` is a program given by its path"
    if name not in RUNS_NOTHING_ELSE:
        return f"`{name}` is not a program the policy knows to run no other program"
    if name == "git":
        unknown = git.unknown_subcommand(command.words[1:])
        if unknown is not None:
            return f"`git {unknown}` may be an alias or an external git-{unknown} program"
    return programs.refusal(command)
