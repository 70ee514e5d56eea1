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
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from copilot_driver.permissions.bash import parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.policy import Policy
from copilot_driver.testing.bash_oracle import BashOracle
from copilot_driver.testing.fixtures import missing_component
from helpers.awk_syntax import AWKS, awk_programs
from helpers.bash_syntax import RULES as GENERATED_RULES
from helpers.bash_syntax import command_lines
from helpers.sed_syntax import sed_scripts
from helpers.shell_corpus import (
    ADVERSARIAL,
    DENY_RULE_FAMILIES,
    FAMILIES,
    ORDINARY,
    ORDINARY_RULES,
    TABLE_RULES,
    Family,
)
from helpers.shell_oracle import MUTATIONS, approved, mutated, problems

GENERATED_EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES", "2000"))
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
    if family.victim is not None:  # ... removes the file it names
        assert family.victim in raw.removed_files, (command, raw)
    if family.runs is not None:  # ... makes a program run another
        ran = {Path(e.path).name for e in raw.executions if not e.by_shell}
        assert family.runs in ran, (command, raw)
    assert approved(family.rules, command) is False, command


@pytest.mark.parametrize("family", DENY_RULE_FAMILIES, ids=[f.id for f in DENY_RULE_FAMILIES])
def test_each_deny_rule_family_is_a_real_attack_and_is_denied(
    workspace_template: Path, tmp_path: Path, family: Family
) -> None:
    """Run by bash with the machine's own programs and nothing policing it, the line runs
    the denied program (its marker appears); under `--allow-all-tools` and the family's
    deny rules, the policy denies it."""
    work = tmp_path / "work"
    shutil.copytree(workspace_template, work, symlinks=True)
    marker = f"pwn-{family.id}"
    command = family.command(marker)
    program = shlex.split(command)[0]
    if shutil.which(program) is None:
        missing_component(
            f"`{program}` (for the deny-rule family {family.id})",
            FileNotFoundError(f"{program} is not on PATH"),
        )
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LC_ALL": "C.UTF-8"}
    subprocess.run(
        ["/bin/bash", "--norc", "--noprofile", "-c", command],
        cwd=work,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    path = family.marker_path(marker)
    assert path is not None
    assert (work / path).exists(), command
    policy = Policy(PermissionConfig(True, (), "test", denied_tools=family.rules))
    decision = policy.decide({"kind": "shell", "fullCommandText": command})
    assert decision.allowed is False, command
    assert f"--deny-tool {family.rules[0]}" in decision.reason, decision.reason


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


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_broken_parser_makes_the_oracle_fail(stub_oracle: BashOracle, mutation: str) -> None:
    caught: list[str] = []
    with mutated(mutation):
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


# -- awk programs through every awk installed ------------------------------------------------------


def test_generated_awk_programs_the_policy_covers_run_nothing_and_write_nothing(
    real_oracle: BashOracle,
) -> None:
    """`shell(awk:*)` covers a program only if every awk on the machine (gawk, mawk, the one
    true awk: whichever `awk` is) then runs no program, writes no file, opens no socket."""
    covered: list[str] = []

    @settings(
        max_examples=max(GENERATED_EXAMPLES // 8, 100),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(awk_programs())
    def check(program: str) -> None:
        if not approved(("shell(awk:*)",), f"awk {shlex.quote(program)} F"):
            return
        covered.append(program)
        for awk in AWKS:
            command = f"{awk} {shlex.quote(program)} F"
            rules = (f"shell({awk}:*)",)
            found = problems(real_oracle, rules, command, exact=True, no_new_files=True)
            assert found == [], (awk, program)

    check()
    assert len(covered) >= 20, f"only {len(covered)} programs covered"
