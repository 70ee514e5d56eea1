"""`shell(...)` rules (spec 5.3, 5.4): which commands of a command line each rule covers. Pure.

The policy approves a shell request only when the whole line reads as a list
of literal simple commands (`bash.parse_command`) and EVERY one of them is
covered by some rule:

    shell(NAME:*), shell(NAME)   name rule: the command's name is NAME
    shell(git checkout:*)        prefix rule: its first words are `git checkout`
                                 (whole words: not `git checkout-index`)
    shell(git status -s)         exact rule: the command is exactly this one
                                 (words, assignments, redirections; spacing and
                                 quoting do not matter)

A name or prefix rule covers a command only when, beyond matching, it is
plain: no leading `NAME=value` assignment, every redirection to /dev/null
or between ASCII-digit descriptors, and nothing `programs.refusal` refuses
(wrappers, shells, state-changing builtins, options that run programs). An
exact rule covers the command it spells out, assignments, options and
redirections included (the line must still read as literal commands).
"""

from __future__ import annotations

from dataclasses import dataclass

from copilot_driver.permissions import programs
from copilot_driver.permissions.bash import Command, Redirection, ShellParseError, parse_command

Shape = tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]


@dataclass(frozen=True)
class ShellRules:
    """The `shell(...)` entries of an allowlist, compiled once."""

    names: frozenset[str] = frozenset()
    """`shell(NAME)` and `shell(NAME:*)`: the command name alone decides."""
    prefixes: tuple[tuple[str, ...], ...] = ()
    """`shell(git checkout:*)`: the command's first words."""
    exact: frozenset[Shape] = frozenset()
    """`shell(git status -s)`: whole commands, by shape."""
    unusable: tuple[str, ...] = ()
    """Rules that can never match anything (reported at start)..."""
    unusable_reasons: tuple[str, ...] = ()
    """... and why, one for each."""

    @staticmethod
    def compile(rules: list[str]) -> ShellRules:
        names: set[str] = set()
        prefixes: list[tuple[str, ...]] = []
        exact: set[Shape] = set()
        unusable: list[str] = []
        reasons: list[str] = []
        for rule in rules:
            body = rule.strip()
            try:
                if body.endswith(":*") or not any(c.isspace() for c in body):
                    words = _rule_words(body.removesuffix(":*"))
                    if len(words) == 1:
                        names.add(words[0])
                    else:
                        prefixes.append(words)
                else:
                    (command,) = parse_command(body)
                    exact.add(command.shape())
            except _UnusableRuleError as error:
                unusable.append(rule)
                reasons.append(str(error))
            except ShellParseError as error:
                unusable.append(rule)
                reasons.append(f"it contains {error}")
            except ValueError:  # not exactly one command
                unusable.append(rule)
                reasons.append("a rule names one command, and this one holds several")
        return ShellRules(
            frozenset(names), tuple(prefixes), frozenset(exact), tuple(unusable), tuple(reasons)
        )

    def matches(self, command: Command) -> bool:
        """Whether a name or prefix rule names this command (before `plain_refusal`)."""
        words = command.words
        return words[0] in self.names or any(words[: len(p)] == p for p in self.prefixes)

    def verdict(self, commands: list[Command]) -> str | None:
        """None when every command is covered, else why the first one that is not, is not."""
        for command in commands:
            if command.shape() in self.exact:
                continue
            if not self.matches(command):
                return f"`{command.text}` matches no shell rule"
            reason = plain_refusal(command)
            if reason is not None:
                return f"`{command.text}` is not covered by a name or prefix rule: {reason}"
        return None


class _UnusableRuleError(ValueError):
    """A rule that reads well but can never cover anything; the message says why."""


def _rule_words(text: str) -> tuple[str, ...]:
    """The words of a name or prefix rule: one plain command, nothing else."""
    (command,) = parse_command(text)
    if command.assignments or command.redirections:
        raise _UnusableRuleError("a name or prefix rule holds no assignment or redirection")
    reason = programs.never_covered(command.name)
    if reason is not None:
        raise _UnusableRuleError(f"no name rule covers `{command.name}` ({reason})")
    return command.words


def plain_refusal(command: Command) -> str | None:
    """Why a name or prefix rule that matches `command` still does not cover it, or None."""
    if command.assignments:
        variable = command.assignments[0].split("=", 1)[0].rstrip("+")
        return f"it assigns {variable}, which a name rule never covers"
    for redirection in command.redirections:
        if not redirection.is_harmless:
            return f"it redirects `{redirection}` (only /dev/null and descriptor copies are)"
    return programs.refusal(command)
