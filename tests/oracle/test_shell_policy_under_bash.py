"""The shell policy proven against bash itself (the execution oracle).

Every command the policy approves is run the way the runtime runs it
(`bash --norc --noprofile -c`) under strace (`copilot_driver.testing.bash_oracle`),
and must do exactly what the policy read: only programs the rules name are
executed, each with the argv the policy predicted word for word, through the
program on PATH; the shell opens no file for writing but /dev/null; no
socket is opened. Fed with the adversarial table, every family of tricks
that once got through, ordinary commands, and a hypothesis generator over
bash's syntax (at least 2,000 examples; more with ORACLE_EXAMPLES).

The oracle does not trust the verdict: a denied command is simply not run.
For the families, the test first proves each one is a real attack (run
without the policy, it executes its payload or creates its marker).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings

from copilot_driver.permissions import bash
from copilot_driver.permissions import policy as policy_module
from copilot_driver.permissions.bash import Command, parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Policy
from copilot_driver.testing.bash_oracle import BashOracle
from helpers.bash_syntax import RULES as GENERATED_RULES
from helpers.bash_syntax import command_lines
from helpers.sed_syntax import sed_scripts
from helpers.shell_corpus import (
    ADVERSARIAL,
    FAMILIES,
    ORDINARY,
    ORDINARY_RULES,
    TABLE_RULES,
    Family,
)

GENERATED_EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES", "2000"))
_BASH_PARSE_ERROR = re.compile(r"syntax error|unexpected EOF|unexpected token")


def rule_names(rules: tuple[str, ...]) -> set[str]:
    """The program names a set of `shell(...)` rules names."""
    return {rule.removeprefix("shell(").split(":", 1)[0].split()[0].rstrip(")") for rule in rules}


def approved(rules: tuple[str, ...], command: str) -> bool:
    request = {
        "kind": "shell",
        "fullCommandText": command,
        "commands": [{"identifier": command, "readOnly": False}],
    }
    return Policy(PermissionConfig(False, rules, "test")).decide(request).allowed


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
    commands = parse_command(command)
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


# -- the adversarial table, the families, ordinary commands --------------------------------------


@pytest.mark.parametrize(("name", "command"), ADVERSARIAL, ids=[name for name, _ in ADVERSARIAL])
def test_adversarial_table_under_bash(stub_oracle: BashOracle, name: str, command: str) -> None:
    if approved(TABLE_RULES, command):
        assert problems(stub_oracle, TABLE_RULES, command, exact=True) == []


@pytest.mark.parametrize("family", FAMILIES, ids=[family.id for family in FAMILIES])
def test_each_family_is_a_real_attack_and_is_denied(
    real_oracle: BashOracle, family: Family
) -> None:
    command = family.command(f"pwn-{family.id}")
    raw = real_oracle.run(command)
    marker = family.marker_path(f"pwn-{family.id}")
    if marker is not None:  # the attack is real: bash, unpoliced, runs the payload
        assert marker in raw.new_files, (command, raw)
    assert approved(family.rules, command) is False, command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_are_allowed_and_run_as_read(
    real_oracle: BashOracle, command: str
) -> None:
    assert approved(ORDINARY_RULES, command), command
    assert problems(real_oracle, ORDINARY_RULES, command, exact=False) == []
    first = parse_command(command)[0]
    ran = [e.argv for e in real_oracle.run(command).executions if e.by_shell]
    assert first.name in real_oracle.builtins or first.words in ran, (command, ran)


# -- a generator over bash's syntax --------------------------------------------------------------


def test_generated_command_lines_run_exactly_as_approved(stub_oracle: BashOracle) -> None:
    """Whatever the policy approves of thousands of generated lines runs exactly as read.

    Not vacuous: at least a fifth of the lines are approved and really run.
    """
    approvals: list[str] = []

    @settings(
        max_examples=GENERATED_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(command_lines())
    def check(command: str) -> None:
        if approved(GENERATED_RULES, command):
            approvals.append(command)
            assert problems(stub_oracle, GENERATED_RULES, command, exact=True) == [], command

    check()
    assert len(approvals) >= GENERATED_EXAMPLES // 5, f"only {len(approvals)} approvals"


# -- the oracle catches a broken parser ----------------------------------------------------------

TARGETED = (
    "git sta\\\ntus",  # a continuation inside a word
    "ls -la \\\n  src",  # between words
    'ls "a\\\nb"',  # inside double quotes
    "ls 'a\\\nb'",  # but not inside single quotes
    "ls a\\\\\ntouch M",  # an escaped backslash, then a newline
    "git log a#b; touch M",  # `#` inside a word starts no comment
    "ls ''1</dev/null F",  # quoted digits glued to `<` are an argument, not a descriptor
    'ls F ""2>/dev/null',
    "ls *",  # globs (the working folder holds files named -c and -exec)
    "ls [-]c",
    "ls {a,b}",  # brace expansion
    "ls ~",  # tilde expansion
    "ls x=~",
)
"""Commands whose reading depends on one of bash's rules."""


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
def _mutated(mutation: str) -> Iterator[None]:
    """The policy (and the prediction it makes) reading lines with one rule broken."""
    misread = MUTATED_READINGS[mutation]

    def parse(text: str) -> list[Command]:
        return bash.parse_command(misread(text))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(policy_module, "parse_command", parse)
        patch.setattr(sys.modules[__name__], "parse_command", parse)
        yield


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_broken_parser_makes_the_oracle_fail(stub_oracle: BashOracle, mutation: str) -> None:
    caught: list[str] = []
    with _mutated(mutation):
        for command in TARGETED:
            if approved(GENERATED_RULES, command):
                caught += problems(stub_oracle, GENERATED_RULES, command, exact=True)
    assert caught, f"the oracle saw nothing wrong with the parser mutated by {mutation}"


def test_the_targeted_commands_pass_with_the_real_parser(stub_oracle: BashOracle) -> None:
    for command in TARGETED:
        if approved(GENERATED_RULES, command):
            assert problems(stub_oracle, GENERATED_RULES, command, exact=True) == [], command


# -- sed scripts through the real sed --------------------------------------------------------------


def test_generated_sed_scripts_the_policy_covers_run_nothing_and_write_nothing(
    real_oracle: BashOracle,
) -> None:
    """`shell(sed:*)` covers a script only if real sed then runs no program and writes no file."""
    covered: list[str] = []
    rules = ("shell(sed:*)",)

    @settings(
        max_examples=max(GENERATED_EXAMPLES // 4, 100),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(sed_scripts())
    def check(script: str) -> None:
        command = f"sed -n {shlex.quote(script)} F"
        if approved(rules, command):
            covered.append(script)
            assert problems(real_oracle, rules, command, exact=True, no_new_files=True) == [], (
                script
            )

    check()
    assert len(covered) >= 20, f"only {len(covered)} scripts covered"
