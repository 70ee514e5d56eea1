"""The policy's reading of a shell line, and bash's verdict on it: shared by the oracle tests.

Two checks run approved lines under bash and compare: the strace oracle
(`problems`, in tests/oracle/test_shell_policy_under_bash.py and on a sample
in test_reader_differential.py) and the argv printers (`differential`, in
test_reader_differential.py). Both predict through `reading`, and a mutation
(`mutated`) swaps the reader both for it and for the policy: a broken reader
makes the same prediction the policy makes, and bash is left to show it up.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import pytest

from copilot_driver.permissions import bash
from copilot_driver.permissions import policy as policy_module
from copilot_driver.permissions.bash import Command, ShellParseError, parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Policy
from copilot_driver.testing.argv_printer import ArgvPrinter, differences, expect
from copilot_driver.testing.bash_oracle import BashOracle

_BASH_PARSE_ERROR = re.compile(
    r"^(?:/bin/)?bash: -c: line \d+: (?:syntax error|unexpected EOF|unexpected token)", re.M
)
"""bash's own complaint about the line (a program's "syntax error", awk's say, is not)."""


def reading(command: str) -> list[Command]:
    """The policy's reading of a line (with the policy's reader, mutated or not)."""
    return parse_command(command)


def rule_names(rules: tuple[str, ...]) -> set[str]:
    """The program names a set of `shell(...)` rules names."""
    return {rule.removeprefix("shell(").split(":", 1)[0].split()[0].rstrip(")") for rule in rules}


@lru_cache(maxsize=16)
def _policy(rules: tuple[str, ...]) -> Policy:
    return Policy(PermissionConfig(False, rules, "test"))


def approved(rules: tuple[str, ...], command: str) -> bool:
    request = {
        "kind": "shell",
        "fullCommandText": command,
        "commands": [{"identifier": command, "readOnly": False}],
    }
    return _policy(rules).decide(request).allowed


def problems(
    oracle: BashOracle,
    rules: tuple[str, ...],
    command: str,
    *,
    exact: bool,
    no_new_files: bool = False,
) -> list[str]:
    """What bash did with an approved `command` beyond what the policy read.

    `exact`: every predicted external command must also have run (stub programs
    succeed, so only `||` can skip one): the oracle is not looking at nothing.
    `no_new_files`: the programs, too, left no new file behind.
    """
    commands = reading(command)
    observation = oracle.run(command)
    if no_new_files and observation.new_files:
        return [f"new files: {observation.new_files}"]
    found = oracle.violations(
        observation, allowed=rule_names(rules), predicted=[c.words for c in commands]
    )
    if _BASH_PARSE_ERROR.search(observation.stderr):
        found.append(f"bash could not parse it: {observation.stderr.strip()[:200]}")
    externals = Counter(c.words for c in commands if c.name not in oracle.builtins)
    ran = Counter(e.argv for e in observation.executions if e.by_shell)
    if exact and not any(c.follows == "||" for c in commands) and ran != externals:
        found.append(f"bash ran {sorted(ran)} where the policy read {sorted(externals)}")
    return found


# -- the differential check -----------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    line: str
    found: tuple[str, ...]
    """How bash and the reading part (see `copilot_driver.testing.argv_printer.differences`)."""
    read: tuple[tuple[str, ...], ...]
    """The policy's reading: each command's words."""

    def __str__(self) -> str:
        return f"{self.line!r}\n    read as {[list(w) for w in self.read]}\n    " + (
            "\n    ".join(self.found)
        )


def differential(
    printer: ArgvPrinter, rules: tuple[str, ...], lines: Sequence[str]
) -> tuple[list[str], list[Mismatch]]:
    """Run the lines of `lines` the policy approves; the approved ones, and every line where
    what bash did differs from the policy's reading."""
    chosen = [line for line in lines if approved(rules, line)]
    mismatches: list[Mismatch] = []
    for run in printer.run(chosen):
        try:
            commands = reading(run.line)
        except ShellParseError as error:  # approved by an exact rule only: nothing to compare
            mismatches.append(Mismatch(run.line, (f"approved, yet unreadable: {error}",), ()))
            continue
        found = differences(run, expect(commands, printer.statuses))
        if found:
            read = tuple(command.words for command in commands)
            mismatches.append(Mismatch(run.line, tuple(found), read))
    return chosen, mismatches


# -- broken readers -------------------------------------------------------------------------------

MUTATED_READINGS: dict[str, Callable[[str], str]] = {
    # The continuation read as an escaped newline (a newline inside the word).
    "continuations-kept": lambda text: text.replace("\\\n", "'\n'"),
    # Continuations dropped everywhere, single quotes included.
    "continuations-removed-in-single-quotes": lambda text: text.replace("\\\n", ""),
    # A comment starts at any `#`, not only at the start of a word.
    "comments-anywhere": lambda text: text.split("#", 1)[0],
    # Glob, brace and tilde characters taken as literal.
    "expansions-unchecked": lambda text: re.sub(r"([*?\[{~])", r"'\1'", text),
    # Digits glued to a redirection taken as its descriptor even when quotes touch them.
    "quoted-digits-as-descriptor": lambda text: re.sub(r"(?:''|\"\")(\d+)(?=[<>])", r"\1", text),
    # `\` + backslash-newline + x read as an escaped x.
    "escape-reads-through-continuations": lambda text: text.replace("\\\\\n", "\\"),
}
"""One of bash's rules broken: what a reader with that bug would see in a line."""
MUTATIONS = tuple(MUTATED_READINGS)


@contextmanager
def mutated(mutation: str) -> Iterator[None]:
    """The policy (and the prediction it makes, `reading`) reading lines with one rule broken."""
    misread = MUTATED_READINGS[mutation]

    def parse(text: str) -> list[Command]:
        return bash.parse_command(misread(text))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(policy_module, "parse_command", parse)
        patch.setattr(sys.modules[__name__], "parse_command", parse)
        yield
