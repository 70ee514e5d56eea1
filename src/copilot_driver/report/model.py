"""What the report knows of a session: turns, tool calls, permissions, notices.

Times are unix milliseconds: the Mermaid chart wants them, and arithmetic on
floats cannot overflow the way odd datetimes can.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from copilot_driver import records
from copilot_driver.formatting import shorten
from copilot_driver.permissions.summary import url_without_secrets
from copilot_driver.report.limits import clip
from copilot_driver.report.sandbox import SandboxSummary
from copilot_driver.report.usage import Usage
from copilot_driver.vocabulary import Denial, PolicyInForce, RunResult

_PATH_TOOLS = frozenset({"view", "create", "edit", "str_replace", "str_replace_editor", "read"})
_WHAT_CHARS = 200
NO_EVENTS = "no events yet"
"""The outcome of a file without an event record: a run that has written none so far."""
SHELL_TOOLS = frozenset({"bash", "powershell"})
"""The runtime's tools that run a shell command (its `read_`/`stop_` companions run none)."""


@dataclass
class PermissionRecord:
    request_id: str | None
    summary: str
    """As in the denial logs: `shell(git --version)`, `read(/path)`."""
    tool_call_id: str | None
    turn: int
    requested_ms: float | None = None
    decided_ms: float | None = None
    result: str | None = None
    """`approved...`, `denied...` (the runtime's kinds), or None: no decision recorded."""
    feedback: str | None = None
    policy: Denial | None = None
    """The driver's `policy.denial` record for it: why its policy said no, and the rule
    that would say yes (None: no allow rule can permit the request)."""
    """The driver's own account of this denial, when it wrote one."""

    @property
    def approved(self) -> bool:
        """`approved`, and the runtime's `approved-for-session` / `-for-location` variants."""
        return self.result is not None and self.result.startswith("approved")

    @property
    def denied(self) -> bool:
        return self.result is not None and self.result.startswith("denied")

    @property
    def verdict(self) -> str:
        if self.result is None:
            return "no decision"
        return "approved" if self.approved else "DENIED" if self.denied else self.result


@dataclass
class ToolCallRecord:
    call_id: str | None
    tool: str
    arguments: Any
    turn: int
    started_ms: float | None = None
    finished_ms: float | None = None
    success: bool | None = None
    """None: no `tool.execution_complete` (or one without `success`)."""
    completed: bool = False
    """A `tool.execution_complete` was seen (its timestamp may still be missing)."""
    error: str | None = None
    error_code: str | None = None
    permissions: list[PermissionRecord] = field(default_factory=list)

    @property
    def denied(self) -> bool:
        return self.success is False and (
            self.error_code == "denied" or any(p.denied for p in self.permissions)
        )

    @property
    def outcome(self) -> str:
        """`ok`, `DENIED`, `FAILED` or `no result`: what a reader scans for."""
        if not self.completed:
            return "no result"
        if self.success is True:
            return "ok"
        if self.denied:
            return "DENIED"
        return "FAILED" if self.success is False else "unknown"

    @property
    def duration_ms(self) -> float | None:
        return _elapsed_ms(self.started_ms, self.finished_ms)

    @property
    def sort_ms(self) -> float:
        return first_number(self.started_ms, self.finished_ms)

    @property
    def what(self) -> str:
        return _argument_summary(self.tool, self.arguments)


@dataclass
class Notice:
    """A notable event: a session error or warning, an abort, a guard stop."""

    kind: str
    message: str
    turn: int
    at_ms: float | None


@dataclass
class Turn:
    """One prompt of the conversation and what the agent did about it."""

    index: int
    prompt: str | None
    started_ms: float | None
    rounds: int = 0
    """`assistant.turn_start` events: model round-trips within this turn."""
    answer: str | None = None
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    permissions: list[PermissionRecord] = field(default_factory=list)


@dataclass
class GuardStop:
    """This project's driver stopped the session after `GH_AW_MAX_TOOL_DENIALS` denials."""

    denial_count: str
    threshold: str
    reason: str


@dataclass
class Timeline:
    """Everything the renderers show, and the counts that say how much could be read."""

    session_id: str | None = None
    copilot_version: str | None = None
    model: str | None = None
    cwd: str | None = None
    start_ms: float | None = None
    end_ms: float | None = None
    turns: list[Turn] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    guard_stop: GuardStop | None = None
    shutdown: bool = False
    lines: int = 0
    events: int = 0
    skipped: int = 0
    skip_examples: list[str] = field(default_factory=list)
    """The first few skipped lines, as `line N: why`."""
    unknown_types: Counter[str] = field(default_factory=Counter)
    untimed: int = 0
    """Events without a usable timestamp (shown, but not placed in time)."""
    orphan_completions: int = 0
    """`tool.execution_complete` events whose start was never seen."""
    usage: Usage | None = None
    """From `session.shutdown`; None when the session never shut down."""
    result: RunResult | None = None
    """From the `result.json` beside the events file, when there is one."""
    sandbox: SandboxSummary | None = None
    """From the harness's `sandbox.json` beside the events file, when there is one."""
    policy: PolicyInForce | None = None
    """The tool policy in force: the events file's `policy.in_force` record, else
    result.json's `policy`; None when neither says."""

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [call for turn in self.turns for call in turn.tool_calls]

    @property
    def permissions(self) -> list[PermissionRecord]:
        return [p for turn in self.turns for p in turn.permissions]

    @property
    def shell_commands(self) -> int:
        """Shell commands that ran (or may have: no result), denied ones left out: what they
        changed in files is nowhere in the events."""
        return sum(
            call.tool.rsplit(".", 1)[-1] in SHELL_TOOLS and call.outcome != "DENIED"
            for call in self.tool_calls
        )

    @property
    def final_answer(self) -> str | None:
        answers = [turn.answer for turn in self.turns if turn.answer]
        return answers[-1] if answers else None

    @property
    def duration_ms(self) -> float | None:
        return _elapsed_ms(self.start_ms, self.end_ms)

    @property
    def tool_time_ms(self) -> float | None:
        """Time in which at least one tool ran: parallel calls are counted once."""
        spans = sorted(
            (start, max(start, end))
            for call in self.tool_calls
            if (start := call.started_ms) is not None and (end := call.finished_ms) is not None
        )
        if not spans:
            return None
        total = 0.0
        start, end = spans[0]
        for next_start, next_end in spans[1:]:
            if next_start > end:
                total += end - start
                start, end = next_start, next_end
            else:
                end = max(end, next_end)
        return total + max(0.0, end - start)

    @property
    def outcome(self) -> str:
        """One phrase for the summary: the most serious thing that happened."""
        if self.guard_stop:
            guard = self.guard_stop
            return f"stopped by the denial guard ({guard.denial_count}/{guard.threshold} denials)"
        for kind in (records.SESSION_ERROR, records.ABORT):
            notice = next((n for n in self.notices if n.kind == kind), None)
            if notice:
                label = "error" if kind == records.SESSION_ERROR else "aborted"
                return f"{label}: {shorten(notice.message, 80)}"
        if self.final_answer:
            return "answered"
        if self.shutdown:
            return "ended without an answer"
        return NO_EVENTS if self.events == 0 else f"incomplete (no {records.SESSION_SHUTDOWN})"


def first_number(*values: float | None) -> float:
    """The first value that is not None; infinity (sorts last) when there is none."""
    for value in values:
        if value is not None:
            return value
    return float("inf")


def _elapsed_ms(start_ms: float | None, end_ms: float | None) -> float | None:
    """Clamped at zero: a clock step between two events is not a negative duration."""
    if start_ms is None or end_ms is None:
        return None
    return max(0.0, end_ms - start_ms)


def _argument_summary(tool: str, arguments: Any) -> str:
    """What the call was about, in a few words: the command, the path, the URL."""
    if isinstance(arguments, dict):
        bare = tool.rsplit(".", 1)[-1]
        if bare == "bash" and isinstance(arguments.get("command"), str):
            return clip(arguments["command"], _WHAT_CHARS)
        if bare in _PATH_TOOLS and isinstance(arguments.get("path"), str):
            return clip(arguments["path"], _WHAT_CHARS)
        if bare == "web_fetch" and isinstance(arguments.get("url"), str):
            return clip(url_without_secrets(arguments["url"]), _WHAT_CHARS)
    if arguments is None:
        return ""
    try:
        text = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "?"
    return clip(text, _WHAT_CHARS)
