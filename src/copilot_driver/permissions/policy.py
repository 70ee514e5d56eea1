"""The scoped allowlist: decide(request) -> Decision. Pure; fails closed.

A request is the runtime's permission request in its wire form (the
camelCase dict of `PermissionRequest.to_dict()`), so this module needs no
SDK. Scoped mode (spec 5.3):

    read         only with `read`
    write        only with `write`
    url          only with `web_fetch`
    custom-tool  only with the tool's name
    mcp          with `SERVER`, or `SERVER(TOOL)` where TOOL is the raw name the
                 MCP server gives the tool (see `mcp_tool_matches`)
    shell        with `shell`, with an exact `shell(...)` rule that spells the
                 whole line, or when the line reads as literal simple commands
                 (`bash.py`), each covered by a name or prefix rule (`shell.py`),
                 and the runtime's own parse agrees with ours
    workflow     with `workflow`, and only when the tool contract turns
                 `dynamicWorkflows` on (`PermissionConfig.workflow_kind`)
    anything else (memory, hook, extension-*, unknown): rejected

Deny rules (`--deny-tool`, the same grammar) are checked first, in every
mode, and win over any allow rule; a request a deny rule matches is denied
even under allow-all. Anything missing or malformed in a request is a
rejection, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from copilot_driver.formatting import shorten
from copilot_driver.permissions.advice import (
    RuleProblem,
    allow_flag,
    literal_glob_problem,
    rule_problems,
    shell_rule_problem,
)
from copilot_driver.permissions.bash import Command, ShellParseError, parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.grants import CodeGrant, code_execution_grants
from copilot_driver.permissions.shell import ShellDenyRules, ShellRules
from copilot_driver.permissions.summary import summarise

DENIAL_FEEDBACK = "Tool invocation is not allowed by workflow tool permissions."
REASON_CHARS = 300
SUGGESTED_RULE_CHARS = 4096
"""An exact rule longer than this is no rule anyone writes: none is suggested (and a
long line is then read once, not three times)."""
_MCP_RULE = re.compile(r"(?P<server>[^()\s]+)\((?P<tool>[^()\s]+)\)")
_SHELL_RULE = re.compile(r"shell\((?P<rule>.*)\)", re.DOTALL)
_NOT_IN_WIRE_NAMES = re.compile(r"[^A-Za-z0-9_-]")
"""The runtime names an MCP tool `SERVER-TOOL`, each of these characters of TOOL
replaced by `-` (measured on the Copilot CLI 1.0.102: `x.y` -> `fake-x-y`)."""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    kind: str
    summary: str
    """Compact and secret-free: `shell(git status)`, `mcp(github.get_file_contents)`, ..."""
    reason: str
    allow_rule: str | None = None
    """For a denial: the narrowest `--allow-tool` rule that would allow this request,
    or None when no allow rule can (a deny rule matched, managed approval, an
    unreadable request, a kind scoped mode never allows)."""


class Policy:
    """A PermissionConfig compiled for fast decisions (microseconds each)."""

    def __init__(
        self,
        config: PermissionConfig,
        *,
        mask: Callable[[str], str] | None = None,
        suggests_rules: bool = True,
    ) -> None:
        """`mask` hides secrets in summaries and reasons *before* they are shortened,
        so a secret cut in half can never slip past the log's redaction.
        `suggests_rules`: denials carry the rule that would allow them."""
        self.config = config
        self._suggests_rules = suggests_rules
        self._mask: Callable[[str], str] = mask or (lambda text: text)
        self._deny = _Rules.of(config.denied_tools)
        self._shell_deny = ShellDenyRules.compile(
            self._deny.shell, everything="shell" in self._deny.names
        )
        self.approves_everything = config.mode != "scoped" and not config.denied_tools
        self._allow = _Rules.of(config.allowed_tools)
        self._shell = ShellRules.compile(self._allow.shell)

    @property
    def rule_problems(self) -> tuple[RuleProblem, ...]:
        """Rules that can never match a request, with the rule probably meant (logged at
        start; they change no decision)."""
        flag = allow_flag(self.config.source)
        shell = [
            shell_rule_problem(body, reason, flag)
            for body, reason in zip(self._shell.unusable, self._shell.unusable_reasons, strict=True)
        ]
        literal = [literal_glob_problem(body, flag) for body in self._shell.literal_globs]
        return (
            *rule_problems(self.config.allowed_tools, flag),
            *shell,
            *literal,
            *rule_problems(self.config.denied_tools, "--deny-tool"),
        )

    @property
    def code_execution_grants(self) -> list[CodeGrant]:
        """Allow rules naming a program that runs code by design (logged at start)."""
        return code_execution_grants(self._allow.shell)

    def decide(self, request: Mapping[str, Any]) -> Decision:
        kind = request.get("kind") if isinstance(request, Mapping) else None
        kind = kind if isinstance(kind, str) else "unknown"
        summary = summarise(request, self._mask) if isinstance(request, Mapping) else "unknown"
        if self.approves_everything:
            return Decision(True, kind, summary, f"permission mode {self.config.mode}")
        try:
            reason = self._deny_rule_reason(kind, request)
            if reason is None and self.config.mode != "scoped":
                return Decision(True, kind, summary, f"permission mode {self.config.mode}")
            if reason is None:
                reason = self._denial_reason(kind, request)
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            reason = f"malformed {kind} request ({type(error).__name__})"
        except Exception as error:  # a bug here denies; it never approves
            reason = f"the policy failed to read the {kind} request ({type(error).__name__})"
        if reason is None:
            return Decision(True, kind, summary, "allowed by the workflow tool permissions")
        return Decision(
            False,
            kind,
            summary,
            shorten(self._mask(reason), REASON_CHARS),
            self._allow_rule(kind, request) if self._suggests_rules else None,
        )

    def _allow_rule(self, kind: str, request: Mapping[str, Any]) -> str | None:
        """The narrowest rule that would allow a request this policy denied, or None.

        Never suggested: anything a deny rule matches (only removing that rule
        helps), managed approval, and a rule the mask would change (it would
        carry a secret). A shell command gets its exact rule, `shell(TEXT)`,
        which grants that text and nothing else. A rule is offered only if the
        same decision, with it added, allows the request.
        """
        try:
            if request.get("managedApprovalRequired") is True or self.config.mode == "allow-all":
                return None
            if self._deny_rule_reason(kind, request) is not None:
                return None
            rule = _narrowest_rule(kind, request, workflow_kind=self.config.workflow_kind)
        except Exception:  # unreadable: nothing to suggest
            return None
        if rule is None or self._mask(rule) != rule:
            return None
        widened = replace(self.config, allowed_tools=(*self.config.allowed_tools, rule))
        return rule if Policy(widened, suggests_rules=False).decide(request).allowed else None

    def _deny_rule_reason(self, kind: str, request: Mapping[str, Any]) -> str | None:
        """Why a `--deny-tool` rule denies `request`, or None. Read broadly: a deny rule
        matches whatever it could mean."""
        if not self.config.denied_tools:
            return None
        names = self._deny.names
        if kind in ("read", "write", "workflow") and kind in names:
            return f"`{kind}` is denied by --deny-tool {kind}"
        if kind == "url" and "web_fetch" in names:
            return "`web_fetch` is denied by --deny-tool web_fetch"
        if kind == "custom-tool" and _text(request, "toolName") in names:
            return f"custom tool `{_text(request, 'toolName')}` is denied by --deny-tool"
        if kind == "mcp":
            server, tool = _text(request, "serverName"), _text(request, "toolName")
            title = request.get("toolTitle")
            if server in names:
                return f"MCP server `{server}` is denied by --deny-tool {server}"
            for denied_server, denied_tool in self._deny.mcp:
                if denied_server == server and (
                    tool in (denied_tool, wire_name(server, denied_tool)) or title == denied_tool
                ):
                    return f"MCP tool `{server}({denied_tool})` is denied by --deny-tool"
        if kind == "shell":
            return self._shell_deny.verdict(_text(request, "fullCommandText"), self._shell)
        return None

    def _denial_reason(self, kind: str, request: Mapping[str, Any]) -> str | None:
        """None when `request` is allowed, else why not."""
        if request.get("managedApprovalRequired") is True:
            # Org-managed settings want a person to approve; CI has none.
            return "the request requires managed (interactive) approval"
        names = self._allow.names
        if kind == "read":
            return None if "read" in names else "`read` is not in the allowlist"
        if kind == "write":
            return None if "write" in names else "`write` is not in the allowlist"
        if kind == "url":
            return None if "web_fetch" in names else "`web_fetch` is not in the allowlist"
        if kind == "custom-tool":
            tool = _text(request, "toolName")
            return None if tool in names else f"custom tool `{tool}` is not in the allowlist"
        if kind == "mcp":
            server, tool = _text(request, "serverName"), _text(request, "toolName")
            title = request.get("toolTitle")
            # `workflow` grants the workflow kind, never an MCP server of that name.
            if (server in names and server != "workflow") or any(
                granted_server == server and mcp_tool_matches(granted_tool, server, tool, title)
                for granted_server, granted_tool in self._allow.mcp
            ):
                return None
            shown = tool.removeprefix(f"{server}-")
            return f"MCP tool `{server}({shown})` is not in the allowlist"
        if kind == "shell":
            return None if "shell" in names else self._shell_denial(request)
        if kind == "workflow" and self.config.workflow_kind:
            return None if "workflow" in names else "`workflow` is not in the allowlist"
        return f"request kind `{kind}` is never allowed in scoped mode"

    def _shell_denial(self, request: Mapping[str, Any]) -> str | None:
        command = _text(request, "fullCommandText")
        try:
            commands: list[Command] | None = parse_command(command)
        except ShellParseError as error:
            commands, unreadable = None, error
        if self._shell.spells(command, commands):
            return None  # an exact rule: what runs is exactly the text it grants
        if commands is None:
            return f"the command contains {unreadable}"
        disagreement = _runtime_disagreement(commands, request)
        if disagreement:
            return disagreement
        return self._shell.verdict(commands)


def _narrowest_rule(kind: str, request: Mapping[str, Any], *, workflow_kind: bool) -> str | None:
    simple = {"read": "read", "write": "write", "url": "web_fetch"}
    if kind in simple:
        return simple[kind]
    if kind == "workflow":
        return "workflow" if workflow_kind else None
    if kind == "custom-tool":
        tool = _text(request, "toolName")
        return tool if _BARE_NAME.fullmatch(tool) else None
    if kind == "mcp":
        server, tool = _text(request, "serverName"), _text(request, "toolName")
        title = request.get("toolTitle")
        if not isinstance(title, str) or wire_name(server, title) != tool:
            return None
        rule = f"{server}({title})"
        return rule if server != "workflow" and _MCP_RULE.fullmatch(rule) else None
    if kind == "shell":
        command = _text(request, "fullCommandText").strip(" \t\n")
        return f"shell({command})" if command and len(command) <= SUGGESTED_RULE_CHARS else None
    return None


_BARE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class _Rules:
    """One list of rules (allow or deny), sorted by what they name."""

    names: frozenset[str]
    """Every rule as written: `read`, `shell`, a custom tool, an MCP server, ..."""
    mcp: frozenset[tuple[str, str]]
    """`SERVER(TOOL)` rules."""
    shell: list[str]
    """The insides of `shell(...)` rules."""

    @staticmethod
    def of(rules: tuple[str, ...]) -> _Rules:
        mcp = (_MCP_RULE.fullmatch(rule) for rule in rules)
        shell = (_SHELL_RULE.fullmatch(rule) for rule in rules)
        return _Rules(
            frozenset(rules),
            frozenset((m["server"], m["tool"]) for m in mcp if m and m["server"] != "shell"),
            [m["rule"] for m in shell if m],
        )


def wire_name(server: str, tool: str) -> str:
    """The name the runtime gives MCP tool `tool` of `server` in its requests."""
    return f"{server}-{_NOT_IN_WIRE_NAMES.sub('-', tool)}"


def mcp_tool_matches(granted: str, server: str, wire: str, title: Any) -> bool:
    """Whether `SERVER(granted)` grants the MCP request for the runtime's tool `wire`.

    The request names the tool only by `wire` (`SERVER-TOOL`, see `wire_name`)
    and by `title` (the tool's title if it has one, else its raw name). The
    grant's wire name must be the request's. Where one wire name can stand for
    several raw names (`x.y` and `x-y` both become `fake-x-y`), the title
    decides: a granted name the runtime renames is confirmed only by a title
    equal to it, and a title that is another raw name of the same wire name
    is another tool. Neither the wire name nor a stripped prefix is ever taken
    for the raw name.
    """
    if wire != wire_name(server, granted):
        return False
    if title == granted:
        return True
    if _NOT_IN_WIRE_NAMES.search(granted):
        return False
    return not (isinstance(title, str) and wire_name(server, title) == wire)


def _runtime_disagreement(segments: list[Command], request: Mapping[str, Any]) -> str | None:
    """Cross-check our parse with the runtime's (`commandSegments`, `commands`).

    The runtime names each segment by its command (`git status`, `ls`); if it
    sees a different number of commands, or a different program, one of the
    two parsers is wrong about what will run, and the request is denied.
    """
    full_text = _text(request, "fullCommandText")
    for command in request.get("commands") or ():
        identifier = command.get("identifier") if isinstance(command, Mapping) else None
        if not isinstance(identifier, str) or identifier not in full_text:
            return "the runtime's command list does not match the command text"
    runtime_segments = request.get("commandSegments")
    if runtime_segments is None:
        return None
    if not isinstance(runtime_segments, list) or len(runtime_segments) != len(segments):
        count = len(runtime_segments) if isinstance(runtime_segments, list) else "no"
        return f"the runtime sees {count} commands where the policy sees {len(segments)}"
    for ours, theirs in zip(segments, runtime_segments, strict=True):
        identifier = theirs.get("identifier") if isinstance(theirs, Mapping) else None
        if not isinstance(identifier, str):
            return "the runtime's command segments are malformed"
        try:
            (their_segment,) = parse_command(identifier)
            their_name = their_segment.name
        except ValueError:
            return f"the runtime names a command `{identifier}` the policy cannot read"
        if their_name != ours.name:
            return f"the runtime sees `{their_name}` where the policy sees `{ours.name}`"
    return None


def _text(request: Mapping[str, Any], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key} is not a string")
    return value
