"""The scoped allowlist: decide(request) -> Decision. Pure; fails closed.

A request is the runtime's permission request in its wire form (the
camelCase dict of `PermissionRequest.to_dict()`), so this module needs no
SDK. Scoped mode (spec 5.3):

    read         only with `read`
    write        only with `write`
    url          only with `web_fetch`
    custom-tool  only with the tool's name
    mcp          with `SERVER`, or `SERVER(TOOL)` where TOOL is the tool's bare
                 name or its server-prefixed name (`fake(add)`, `fake(fake-add)`)
    shell        with `shell`, or when the command line reads as literal simple
                 commands (`bash.py`), each covered by a `shell(...)` rule
                 (`shell.py`), and the runtime's own parse agrees with ours
    anything else (memory, hook, workflow, extension-*, unknown): rejected

Anything missing or malformed in a request is a rejection, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from copilot_driver.permissions.bash import Command, ShellParseError, parse_command
from copilot_driver.permissions.config import PermissionConfig
from copilot_driver.permissions.shell import ShellRules

DENIAL_FEEDBACK = "Tool invocation is not allowed by workflow tool permissions."
SUMMARY_CHARS = 160
REASON_CHARS = 300
_MCP_RULE = re.compile(r"(?P<server>[^()\s]+)\((?P<tool>[^()\s]+)\)")
_SHELL_RULE = re.compile(r"shell\((?P<rule>.*)\)", re.DOTALL)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    kind: str
    summary: str
    """Compact and secret-free: `shell(git status)`, `mcp(github.get_file_contents)`, ..."""
    reason: str


class Policy:
    """A PermissionConfig compiled for fast decisions (microseconds each)."""

    def __init__(
        self, config: PermissionConfig, *, mask: Callable[[str], str] | None = None
    ) -> None:
        """`mask` hides secrets in summaries and reasons *before* they are shortened,
        so a secret cut in half can never slip past the log's redaction."""
        self.config = config
        self._mask: Callable[[str], str] = mask or (lambda text: text)
        self.approves_everything = config.mode != "scoped"
        tools = config.allowed_tools
        self._names = frozenset(tools)
        self._mcp_tools = frozenset(
            (match["server"], match["tool"])
            for t in tools
            if (match := _MCP_RULE.fullmatch(t)) and match["server"] != "shell"
        )
        shell_rules = [m["rule"] for t in tools if (m := _SHELL_RULE.fullmatch(t))]
        self._shell = ShellRules.compile(shell_rules)

    @property
    def unusable_rules(self) -> tuple[str, ...]:
        """`shell(...)` rules that cannot match anything (logged at start)."""
        return tuple(f"shell({rule})" for rule in self._shell.unusable)

    @property
    def unusable_reasons(self) -> tuple[str, ...]:
        """Why each of `unusable_rules` matches nothing."""
        return self._shell.unusable_reasons

    def decide(self, request: Mapping[str, Any]) -> Decision:
        kind = request.get("kind") if isinstance(request, Mapping) else None
        kind = kind if isinstance(kind, str) else "unknown"
        summary = summarise(request, self._mask) if isinstance(request, Mapping) else "unknown"
        if self.approves_everything:
            return Decision(True, kind, summary, f"permission mode {self.config.mode}")
        try:
            reason = self._denial_reason(kind, request)
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            reason = f"malformed {kind} request ({type(error).__name__})"
        except Exception as error:  # a bug here denies; it never approves
            reason = f"the policy failed to read the {kind} request ({type(error).__name__})"
        if reason is None:
            return Decision(True, kind, summary, "allowed by the workflow tool permissions")
        return Decision(False, kind, summary, _shorten(self._mask(reason), REASON_CHARS))

    def _denial_reason(self, kind: str, request: Mapping[str, Any]) -> str | None:
        """None when `request` is allowed, else why not."""
        if request.get("managedApprovalRequired") is True:
            # Org-managed settings want a person to approve; CI has none.
            return "the request requires managed (interactive) approval"
        names = self._names
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
            bare = tool.removeprefix(f"{server}-")
            if server in names or (server, tool) in self._mcp_tools:
                return None
            if (server, bare) in self._mcp_tools:
                return None
            return f"MCP tool `{server}({bare})` is not in the allowlist"
        if kind == "shell":
            return None if "shell" in names else self._shell_denial(request)
        return f"request kind `{kind}` is never allowed in scoped mode"

    def _shell_denial(self, request: Mapping[str, Any]) -> str | None:
        command = _text(request, "fullCommandText")
        try:
            commands = parse_command(command)
        except ShellParseError as error:
            return f"the command contains {error}"
        disagreement = _runtime_disagreement(commands, request)
        if disagreement:
            return disagreement
        return self._shell.verdict(commands)


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


def summarise(request: Mapping[str, Any], mask: Callable[[str], str] = str) -> str:
    """The compact request summary of denial logs (spec 6.3): never a secret.

    Never raises: a malformed field shows as `?`.
    """
    kind = request.get("kind")

    def field(key: str, transform: Callable[[str], str] = str) -> str:
        value = request.get(key)
        return _shorten(mask(transform(value))) if isinstance(value, str) else "?"

    if kind == "shell":
        return f"shell({field('fullCommandText')})"
    if kind == "mcp":
        server = field("serverName")
        return f"mcp({server}.{field('toolName').removeprefix(server + '-')})"
    if kind == "url":
        return f"url({field('url', url_without_secrets)})"
    if kind == "write":
        return f"write({field('fileName')})"
    if kind == "read":
        return f"read({field('path')})"
    if kind == "custom-tool":
        return f"custom-tool({field('toolName')})"
    return _shorten(mask(kind)) if isinstance(kind, str) else "unknown"


def _text(request: Mapping[str, Any], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str):
        raise TypeError(f"{key} is not a string")
    return value


def _shorten(text: str, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def url_without_secrets(url: str) -> str:
    """Drop user info, query and fragment: they may carry credentials."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "?"
