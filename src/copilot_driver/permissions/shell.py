"""`shell(...)` rules (spec 5.3, 5.4): which command lines they allow or deny. Pure.

Allow rules (`--allow-tool`). A line is approved when an exact rule spells
the whole of it, or when it reads as a list of literal simple commands
(`bash.parse_command`) and EVERY one of them is covered by a name or prefix
rule:

    shell(NAME:*), shell(NAME)   name rule: the command's name is NAME
    shell(git checkout:*)        prefix rule: its first words are `git checkout`
                                 (whole words: not `git checkout-index`)
    shell(git status -s)         exact rule: the WHOLE line is exactly this text
                                 (or reads as exactly the same commands, joined
                                 by the same separators: spacing and quoting do
                                 not matter); never a grant for one segment

A name or prefix rule covers a command only when, beyond matching, it is
plain: no leading `NAME=value` assignment, every redirection to /dev/null
or between ASCII-digit descriptors, and nothing `programs.refusal` refuses
(wrappers, shells, state-changing builtins, options that run programs).

Deny rules (`--deny-tool`) win over every allow rule and are read broadly:
`shell(rm)` or `shell(rm:*)` denies any command named `rm` (by path too),
`shell(git push)` or `shell(git push:*)` any `git` command whose later words
include `push` (so `git -C x push` too) or the plumbing that does the same
(`send-pack`, `http-push`, a `remote-*` helper), and the exact text of a
rule always. While a shell deny rule is in force they also fail closed: a
line is denied when the policy cannot read it, and when one of its commands
is neither spelled by an exact rule, nor covered by a name or prefix rule,
nor a program known to run no other program (`inert.runs_another`): the
policy could not tell that the denied command is not among what it runs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from copilot_driver.errors import CopilotDriverError
from copilot_driver.permissions import inert, programs
from copilot_driver.permissions.bash import Command, Redirection, ShellParseError, parse_command

Shape = tuple[tuple[str, ...], tuple[str, ...], tuple[Redirection, ...]]
BLANKS = " \t\n"
"""What bash ignores around a command line (other whitespace is part of a word)."""
Line = tuple[tuple[str, Shape], ...]
"""A command line as exact rules compare it: each command's separator and shape."""


def line_of(commands: list[Command]) -> Line:
    return tuple((command.follows, command.shape()) for command in commands)


@dataclass(frozen=True)
class ShellRules:
    """The `shell(...)` allow rules of an allowlist, compiled once."""

    names: frozenset[str] = frozenset()
    """`shell(NAME)` and `shell(NAME:*)`: the command name alone decides."""
    prefixes: tuple[tuple[str, ...], ...] = ()
    """`shell(git checkout:*)`: the command's first words."""
    exact_texts: frozenset[str] = frozenset()
    """`shell(git status -s)`: whole lines, as written (stripped)..."""
    exact_lines: frozenset[Line] = frozenset()
    """... and as read, for the rules inside the literal subset."""
    unusable: tuple[str, ...] = ()
    """Rules that can never match anything (reported at start)..."""
    unusable_reasons: tuple[str, ...] = ()
    """... and why, one for each."""
    literal_globs: tuple[str, ...] = ()
    """Exact rules with an unquoted glob character: they match only their own text."""

    @staticmethod
    def compile(rules: list[str]) -> ShellRules:
        names: set[str] = set()
        prefixes: list[tuple[str, ...]] = []
        texts: set[str] = set()
        lines: set[Line] = set()
        unusable: list[str] = []
        reasons: list[str] = []
        literal_globs: list[str] = []
        for rule in rules:
            body = rule.strip()
            if not body:
                unusable.append(rule)
                reasons.append("it names no command")
                continue
            if is_exact(body):
                texts.add(body)
                if _has_unquoted_glob(body):
                    literal_globs.append(body)
                with contextlib.suppress(ShellParseError):  # else matched by its text alone
                    lines.add(line_of(parse_command(body)))
                continue
            try:
                words = _rule_words(body.removesuffix(":*"))
            except _UnusableRuleError as error:
                unusable.append(rule)
                reasons.append(str(error))
                continue
            except ShellParseError as error:
                unusable.append(rule)
                reasons.append(f"it contains {error}")
                continue
            except ValueError:  # not exactly one command
                unusable.append(rule)
                reasons.append(
                    "a name or prefix rule names one command, and this one holds several"
                )
                continue
            if len(words) == 1:
                names.add(words[0])
            else:
                prefixes.append(words)
        return ShellRules(
            frozenset(names),
            tuple(prefixes),
            frozenset(texts),
            frozenset(lines),
            tuple(unusable),
            tuple(reasons),
            tuple(literal_globs),
        )

    def spells(self, text: str, commands: list[Command] | None) -> bool:
        """Whether an exact rule is the whole line `text` (`commands`: its reading, if any)."""
        if self.exact_texts and text.strip(BLANKS) in self.exact_texts:
            return True
        return commands is not None and line_of(commands) in self.exact_lines

    def matches(self, command: Command) -> bool:
        """Whether a name or prefix rule names this command (before `plain_refusal`)."""
        words = command.words
        return words[0] in self.names or any(words[: len(p)] == p for p in self.prefixes)

    def verdict(self, commands: list[Command]) -> str | None:
        """None when a name or prefix rule covers every command, else why the first one
        that is not, is not."""
        for command in commands:
            if not self.matches(command):
                if self.exact_texts and len(commands) > 1:
                    return (
                        f"`{command.text}` matches no name or prefix rule (an exact rule "
                        "allows only the whole command line it spells)"
                    )
                return f"`{command.text}` matches no shell rule"
            reason = plain_refusal(command)
            if reason is not None:
                return f"`{command.text}` is not covered by a name or prefix rule: {reason}"
        return None


def _has_unquoted_glob(body: str) -> bool:
    """A `*` or `?` outside quotes (an author's wildcard, not a quoted argument)."""
    quote = ""
    for char in body:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "*?":
            return True
    return False


def is_exact(body: str) -> bool:
    """A rule with blanks that does not end in `:*` is an exact rule (spec 5.4)."""
    return not body.endswith(":*") and any(c.isspace() for c in body)


@dataclass(frozen=True)
class DenyRule:
    rule: str
    """As written, `shell(...)`, for messages."""
    text: str
    """The rule's command text, stripped: a line exactly this is denied."""
    words: tuple[str, ...] | None
    """The rule's words (`git`, `push`), or None when the text is outside the literal subset."""

    def matches(self, command: Command) -> bool:
        """`command` has the rule's name (by path too) and its later words, in order;
        git's plumbing counts as the porcelain it performs (`send-pack` as `push`)."""
        if self.words is None or command.name.rsplit("/", 1)[-1] != self.words[0]:
            return False
        names = _git_names if self.words[0] == "git" else _itself
        remaining = iter(command.words[1:])
        return all(any(word in names(said) for said in remaining) for word in self.words[1:])


@dataclass(frozen=True)
class ShellDenyRules:
    """The `shell` and `shell(...)` deny rules of a configuration, compiled once."""

    everything: str | None = None
    """The bare `shell` deny rule, if given: every command is denied."""
    rules: tuple[DenyRule, ...] = ()

    @staticmethod
    def compile(rules: list[str], *, everything: bool = False) -> ShellDenyRules:
        compiled = []
        for body in rules:
            text = body.strip()
            try:
                (command,) = parse_command(text.removesuffix(":*"))
                words: tuple[str, ...] | None = command.words
            except ValueError:  # unreadable, or several commands: its text alone
                words = None
            compiled.append(DenyRule(f"shell({body})", text, words))
        return ShellDenyRules("shell" if everything else None, tuple(compiled))

    @property
    def active(self) -> bool:
        return self.everything is not None or bool(self.rules)

    def verdict(self, text: str, allowed: ShellRules) -> str | None:
        """Why a deny rule denies the line `text`, or None. `allowed`: the allow rules,
        which vouch for the commands they name."""
        if self.everything is not None:
            return "every shell command is denied by --deny-tool shell"
        if not self.rules:
            return None
        first = self.rules[0].rule
        for rule in self.rules:
            if text.strip(BLANKS) == rule.text:
                return f"it is denied by --deny-tool {rule.rule}"
        try:
            commands = parse_command(text)
        except ShellParseError as error:
            return (
                f"the command contains {error}, so the policy cannot tell that it does not "
                f"run what --deny-tool {first} denies"
            )
        spelled = allowed.spells(text, commands)
        for command in commands:
            for rule in self.rules:
                if rule.matches(command):
                    return f"`{command.text}` is denied by --deny-tool {rule.rule}"
            if spelled or (allowed.matches(command) and plain_refusal(command) is None):
                continue
            reason = inert.runs_another(command)
            if reason is not None:
                fix = f"--allow-tool 'shell({command.name}:*)'"
                return (
                    f"`{command.text}` could run another program ({reason}), so the policy "
                    f"cannot tell that it does not run what --deny-tool {first} denies; "
                    f"to allow it knowingly, add {fix}"
                )
        return None


_GIT_PLUMBING = {
    "send-pack": ("send-pack", "push"),
    "http-push": ("http-push", "push"),
    "fetch-pack": ("fetch-pack", "fetch"),
    "http-fetch": ("http-fetch", "fetch"),
}
"""git subcommands that do what a porcelain subcommand does: a deny rule naming the
porcelain names them too."""


def _itself(word: str) -> tuple[str, ...]:
    return (word,)


def _git_names(word: str) -> tuple[str, ...]:
    if word.startswith("remote-"):  # a transport helper (`git remote-ext`) pushes and fetches
        return (word, "push", "fetch")
    return _GIT_PLUMBING.get(word, (word,))


class _UnusableRuleError(CopilotDriverError, ValueError):
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
