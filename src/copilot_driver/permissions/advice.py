"""Rules that can never match anything, and the rule probably meant. Pure.

A misspelt rule fails closed (the tool stays denied), which is safe but
baffling: the workflow author sees denials and a rule that looks right. The
driver reports each such rule at start, with the likely intended rule, so
the fix is one edit away:

    bash(git:*)    a tool name the runtime never asks about   -> shell(git:*)
    Read           permission names are lower case            -> read
    web-fetch      a near miss of a permission name           -> web_fetch
    shell(git:*    an unbalanced parenthesis                  -> shell(git:*)
    shell()        an empty command                           -> shell(NAME:*)
    shell(git*)    a glob where a name belongs                -> shell(git:*)
    shell(env:*)   a program no name rule covers (shell.py says why)
    *              no wildcard: a rule names what it grants            -> (none)
    github(*)      no wildcard in an MCP rule                         -> github
    read(src/*)    a permission kind takes no argument                -> read

and a rule that matches, but only literally: `shell(ls *)` is an exact rule
(it has a space), so its `*` is no wildcard and it allows the line `ls *`
as written, never `ls -la` (-> shell(ls:*)).

Only near misses of the permission names are reported: any other word
may be a custom tool or an MCP server the session really has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from copilot_driver.env import SERVER_ARGS

PERMISSION_NAMES = ("read", "write", "shell", "web_fetch")
"""The names a scoped rule uses for the runtime's built-in permission kinds."""

SYNONYMS = {
    "url": "web_fetch",
    "view": "read",
    "edit": "write",
    "create": "write",
    "bash": "shell",
    "sh": "shell",
}
"""Words authors use for a permission: the request kind `url`, and the runtime's own
tool names, which a rule never names (its permission kind does)."""

_CALL = re.compile(r"(?P<name>[^()\s]+)\((?P<inside>.*)\)", re.DOTALL)


_GLOB_AFTER_WORDS = re.compile(r"(?P<prefix>[^\s*?\[\]'\"]+(?:\s+[^\s*?\[\]'\"]+)*)\s*\*")
"""`git*`, `git log*`, `ls *`: words, then a `*` meant as "any arguments"."""
LITERAL_GLOB_REASON = (
    "an exact rule (one with a space) is matched as written, and its `*` is no wildcard"
)


_WILDCARD = re.compile(r"[*?]")
_NO_WILDCARD = (
    "`*` is no wildcard: a rule names a permission (read, write, shell, web_fetch), a "
    "shell command (shell(git:*)), an MCP server or a custom tool; list what the task "
    "needs (allowAllTools approves every request)"
)


@dataclass(frozen=True)
class RuleProblem:
    rule: str
    flag: str
    """Where the rule was given: `--allow-tool`, `--deny-tool`, or `allowedTools in VAR`."""
    reason: str
    suggestion: str | None = None
    literal: bool = False
    """The rule does match, but only its own text (an exact rule with a glob in it)."""

    def describe(self) -> str:
        if self.literal:
            body = self.rule.removeprefix("shell(").removesuffix(")")
            where = f"the rule {self.rule} ({self.flag})"
            text = f"{where} matches only the line `{body}`: {self.reason}"
        else:
            text = f"the rule {self.rule} ({self.flag}) matches no request: {self.reason}"
        return f"{text}; did you mean {self.suggestion}?" if self.suggestion else text


def allow_flag(source: str) -> str:
    """How an author gave the allow rules of `source` (a variable's name, or "none")."""
    if source in ("none", SERVER_ARGS.name):
        return "--allow-tool"
    return f"allowedTools in {source}"


def prefix_rule_for(body: str) -> str | None:
    """`shell(git:*)` for `git*`, `shell(git log:*)` for `git log*` or `git log *`."""
    body = body.strip()
    if body.endswith(":*"):  # already a prefix rule: its problem is elsewhere
        return None
    found = _GLOB_AFTER_WORDS.fullmatch(body)
    return f"shell({found['prefix']}:*)" if found else None


def literal_glob_problem(body: str, flag: str) -> RuleProblem:
    """An exact `shell(...)` rule with a `*` in it: it allows only its own text."""
    return RuleProblem(
        f"shell({body})", flag, LITERAL_GLOB_REASON, prefix_rule_for(body), literal=True
    )


def rule_problems(rules: Iterable[str], flag: str) -> list[RuleProblem]:
    """The problems of one list of rules, in order (shell rule semantics aside)."""
    return [problem for rule in rules if (problem := _problem(rule, flag)) is not None]


def shell_rule_problem(body: str, reason: str, flag: str) -> RuleProblem:
    """A `shell(...)` rule that `shell.ShellRules` found unusable, with the fix if known."""
    suggestion = "shell(NAME:*)" if not body.strip() else prefix_rule_for(body)
    return RuleProblem(f"shell({body})", flag, reason, suggestion)


def _problem(rule: str, flag: str) -> RuleProblem | None:
    if rule.count("(") != rule.count(")"):
        fixed = _balanced(rule)
        return RuleProblem(rule, flag, "its parentheses are unbalanced", fixed)
    call = _CALL.fullmatch(rule)
    if call is not None:
        name = _permission_name(call["name"])
        if name == "shell" and call["name"] != "shell":
            return RuleProblem(
                rule,
                flag,
                f"`{call['name']}(...)` is not a rule kind; shell commands are `shell(...)`",
                f"shell({call['inside']})",
            )
        if name is not None and name != "shell":
            return RuleProblem(
                rule,
                flag,
                f"`{name}` takes no argument: it grants every {name} request (a path or "
                f"address cannot be scoped), and `{call['name']}(...)` names an MCP server",
                name,
            )
        if _WILDCARD.search(call["name"]):
            return RuleProblem(rule, flag, _NO_WILDCARD)
        if name is None and _WILDCARD.search(call["inside"]):
            return RuleProblem(
                rule,
                flag,
                "`*` is no wildcard in an MCP rule: the server's name alone grants every "
                "tool of that server",
                call["name"],
            )
        return None
    if _WILDCARD.search(rule):
        return RuleProblem(rule, flag, _NO_WILDCARD)
    name = _permission_name(rule)
    if name is not None and name != rule:
        why = (
            "permission names are lower case"
            if rule.lower() == name
            else f"`{rule}` is not a permission name"
        )
        return RuleProblem(rule, flag, why, name)
    return None


def _permission_name(word: str) -> str | None:
    """The permission name `word` is a near miss of (itself if it is one), or None."""
    folded = word.lower().replace("-", "_")
    if folded in PERMISSION_NAMES:
        return folded
    if folded.replace("_", "") == "webfetch":
        return "web_fetch"
    return SYNONYMS.get(folded)


def _balanced(rule: str) -> str | None:
    """The rule with its missing closing parenthesis, when that is the only fault."""
    if rule.count("(") == rule.count(")") + 1 and rule.index("(") > 0:
        fixed = rule + ")"
        if _CALL.fullmatch(fixed):
            return fixed
    return None
