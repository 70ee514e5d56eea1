"""An events file's lines -> a Timeline, without ever raising on content.

Lines that are not records are counted as skipped (the first few with the
reason), event types the report does not interpret are counted by name, and
fields of the wrong type are treated as missing. Tool results are matched to
their calls by `toolCallId` alone: this project's driver copies `toolName`
onto `tool.execution_complete`, other drivers may not.

The driver's `policy.denial` records are matched to the runtime's permission
events once the whole file is read: by `toolCallId`, else by the request's
summary, in order. A denial with no permission event to match (a run cut short)
is shown as a permission of its own.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from copilot_driver import records, vocabulary
from copilot_driver.permissions.summary import summarise
from copilot_driver.report import model
from copilot_driver.report.sandbox import SANDBOX_FILE, read_sandbox_file
from copilot_driver.report.usage import usage_from_shutdown
from copilot_driver.vocabulary import Denial, PolicyInForce, read_result

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SKIP_EXAMPLES = 5
_JSON_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_NOT_SHOWN = records.UNREPORTED_TYPES | {records.ASSISTANT_TURN_END}
"""Known types the timeline has no use for (a model round is counted at its start)."""
_NOT_RECORDED = "(request not recorded)"


def events_file(path: Path) -> Path:
    """`path` itself, or the events file in it when it is a session folder."""
    return path / vocabulary.EVENTS_FILE_NAME if path.is_dir() else path


def load_timeline(path: Path) -> model.Timeline:
    """An events file, or a session folder holding one, with the `result.json` and the
    harness's `sandbox.json` beside it when there are (result.json's policy stands in
    for a missing `policy.in_force` record). Raises OSError when the events file cannot
    be read; never on its content."""
    events = events_file(path)
    with events.open(encoding="utf-8", errors="replace") as lines:
        timeline = parse_timeline(lines)
    timeline.result = read_result(events)
    if timeline.policy is None and timeline.result is not None:
        timeline.policy = timeline.result.policy
    timeline.sandbox = read_sandbox_file(events.with_name(SANDBOX_FILE))
    return timeline


def parse_timeline(lines: Iterable[str]) -> model.Timeline:
    builder = _Builder()
    for number, line in enumerate(lines, start=1):
        builder.line(number, line)
    return builder.finish()


class _Builder:
    def __init__(self) -> None:
        self.timeline = model.Timeline()
        self.calls: dict[str, model.ToolCallRecord] = {}
        self.requests: dict[str, model.PermissionRecord] = {}
        self.denials: list[_PlacedDenial] = []

    def line(self, number: int, line: str) -> None:
        timeline = self.timeline
        timeline.lines += 1
        if not line.strip():
            return
        record = records.parse_line(line)
        if record is None:
            self.skip(number, _why_not_a_record(line))
            return
        event_type = records.event_type(record)
        if event_type is None:
            self.skip(number, "no event type")
            return
        timeline.events += 1
        at_ms = _unix_ms(records.event_time(record))
        if at_ms is None:
            timeline.untimed += 1
        else:
            timeline.start_ms = at_ms if timeline.start_ms is None else timeline.start_ms
            timeline.end_ms = at_ms if timeline.end_ms is None else max(timeline.end_ms, at_ms)
        handler = _HANDLERS.get(event_type)
        if handler is not None:
            handler(self, records.event_data(record), at_ms)
        elif event_type not in _NOT_SHOWN:
            timeline.unknown_types[event_type] += 1

    def skip(self, number: int, why: str) -> None:
        self.timeline.skipped += 1
        if len(self.timeline.skip_examples) < _SKIP_EXAMPLES:
            self.timeline.skip_examples.append(f"line {number}: {why}")

    def turn(self, at_ms: float | None) -> model.Turn:
        """The current turn; events before any prompt get a turn without one."""
        if not self.timeline.turns:
            self.timeline.turns.append(model.Turn(index=1, prompt=None, started_ms=at_ms))
        return self.timeline.turns[-1]

    def session_start(self, data: dict[str, Any], at_ms: float | None) -> None:
        timeline = self.timeline
        timeline.session_id = _str(data, "sessionId") or timeline.session_id
        timeline.copilot_version = _str(data, "copilotVersion") or timeline.copilot_version
        timeline.model = _str(data, "selectedModel") or timeline.model
        timeline.cwd = _str(_dict(data, "context"), "cwd") or timeline.cwd
        if at_ms is not None:
            timeline.start_ms = at_ms  # the session's start, even if other lines came first

    def session_shutdown(self, data: dict[str, Any], at_ms: float | None) -> None:
        self.timeline.shutdown = True
        self.timeline.usage = usage_from_shutdown(data)

    def user_message(self, data: dict[str, Any], at_ms: float | None) -> None:
        turns = self.timeline.turns
        current = turns[-1] if turns else None
        # Drivers that write gh-aw's `user.message` (`{}`) keep the prompt's text out.
        prompt = _str(data, "content") or PROMPT_NOT_RECORDED
        if current and current.prompt is None and not current.tool_calls and not current.rounds:
            current.prompt = prompt  # the implicit turn opened by an early event
        else:
            turns.append(model.Turn(len(turns) + 1, prompt, at_ms))

    def turn_start(self, data: dict[str, Any], at_ms: float | None) -> None:
        self.turn(at_ms).rounds += 1

    def assistant_message(self, data: dict[str, Any], at_ms: float | None) -> None:
        content = _str(data, "content")
        if content and content.strip():
            self.turn(at_ms).answer = content

    def guard_stop(self, data: dict[str, Any], at_ms: float | None) -> None:
        guard = model.GuardStop(
            _scalar(data.get("denialCount")),
            _scalar(data.get("threshold")),
            _str(data, "reason") or "the driver stopped the session",
        )
        self.timeline.guard_stop = guard
        message = f"{guard.denial_count}/{guard.threshold} denials; {guard.reason}"
        self.notice("guard stop", message, at_ms)

    def budget_stop(self, data: dict[str, Any], at_ms: float | None) -> None:
        reason = _str(data, "reason") or "the driver stopped the session"
        message = f"tool call {_scalar(data.get('callCount'))} past a budget of "
        self.notice("budget stop", f"{message}{_scalar(data.get('limit'))}; {reason}", at_ms)

    def budget_debit(self, data: dict[str, Any], at_ms: float | None) -> None:
        """A call counted against the budget: a notice only for one past it (denied)."""
        if data.get("exhausted") is True:
            message = (
                f"tool call {_scalar(data.get('callCount'))} ({_str(data, 'toolName') or 'a tool'})"
                f" past a budget of {_scalar(data.get('limit'))}: denied, the model told to answer"
            )
            self.notice("budget denial", message, at_ms)

    def session_error(self, data: dict[str, Any], at_ms: float | None) -> None:
        self.session_notice(records.SESSION_ERROR, data, at_ms)

    def session_warning(self, data: dict[str, Any], at_ms: float | None) -> None:
        self.session_notice(records.SESSION_WARNING, data, at_ms)

    def session_notice(self, kind: str, data: dict[str, Any], at_ms: float | None) -> None:
        message = _str(data, "message") or _str(data, "errorType") or "(no message)"
        self.notice(kind, message, at_ms)

    def abort(self, data: dict[str, Any], at_ms: float | None) -> None:
        self.notice(records.ABORT, _str(data, "reason") or "(no reason)", at_ms)

    def notice(self, kind: str, message: str, at_ms: float | None) -> None:
        turn = self.timeline.turns[-1].index if self.timeline.turns else 0
        self.timeline.notices.append(model.Notice(kind, message, turn, at_ms))

    def tool_start(self, data: dict[str, Any], at_ms: float | None) -> None:
        turn = self.turn(at_ms)
        call_id = _str(data, "toolCallId")
        call = model.ToolCallRecord(
            call_id, _tool_name(data), data.get("arguments"), turn.index, started_ms=at_ms
        )
        turn.tool_calls.append(call)
        if call_id is not None:
            self.calls[call_id] = call

    def tool_complete(self, data: dict[str, Any], at_ms: float | None) -> None:
        call_id = _str(data, "toolCallId")
        call = self.calls.get(call_id) if call_id is not None else None
        if call is None or call.completed:
            self.timeline.orphan_completions += 1
            turn = self.turn(at_ms)
            call = model.ToolCallRecord(call_id, _tool_name(data), None, turn.index)
            turn.tool_calls.append(call)
        call.completed = True
        call.finished_ms = at_ms
        success = data.get("success")
        call.success = success if isinstance(success, bool) else None
        error = data.get("error")
        if isinstance(error, dict):
            call.error = _str(error, "message")
            call.error_code = _str(error, "code")
        elif isinstance(error, str):
            call.error = error
        # The runtime says `success: true` for a shell command that ran and failed
        # (`fatal: not a git repository`, exit 128): its exit status says otherwise.
        exit_code = _dict(data, "shellExecution").get("exitCode")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
            call.success = False
            call.error = call.error or f"the command exited with status {exit_code}"
        if call.tool == "?":
            call.tool = _tool_name(data)

    def permission_requested(self, data: dict[str, Any], at_ms: float | None) -> None:
        request = _dict(data, "permissionRequest")
        turn = self.turn(at_ms)
        record = model.PermissionRecord(
            request_id=_str(data, "requestId"),
            summary=summarise(request) if request else "unknown",
            tool_call_id=_str(data, "toolCallId") or _str(request, "toolCallId"),
            turn=turn.index,
            requested_ms=at_ms,
        )
        turn.permissions.append(record)
        if record.request_id is not None:
            self.requests[record.request_id] = record

    def permission_completed(self, data: dict[str, Any], at_ms: float | None) -> None:
        request_id = _str(data, "requestId")
        record = self.requests.get(request_id) if request_id is not None else None
        if record is None:
            turn = self.turn(at_ms)
            tool_call_id = _str(data, "toolCallId")
            record = model.PermissionRecord(request_id, _NOT_RECORDED, tool_call_id, turn.index)
            turn.permissions.append(record)
        result = _dict(data, "result")
        record.decided_ms = at_ms
        record.result = _str(result, "kind") or "unknown"
        record.feedback = _str(result, "feedback")

    def policy_denial(self, data: dict[str, Any], at_ms: float | None) -> None:
        denial = Denial.from_record_data(data)
        self.denials.append(_PlacedDenial(denial, self.turn(at_ms).index, at_ms))

    def policy_in_force(self, data: dict[str, Any], at_ms: float | None) -> None:
        """The first record is the run's policy (a later one would be another run's)."""
        if self.timeline.policy is None:
            self.timeline.policy = PolicyInForce.from_json(data)

    def match_denials(self) -> None:
        """Each `policy.denial` onto its permission: by tool call first, then the rest by
        summary, in order; one without a match becomes a permission of its own.

        A permission the runtime never decided counts as denied once the driver's
        record of the denial is matched to it."""
        by_call: dict[str, deque[model.PermissionRecord]] = {}
        by_summary: dict[str, deque[model.PermissionRecord]] = {}
        for permission in self.timeline.permissions:
            if permission.denied or permission.result is None:
                if permission.tool_call_id is not None:
                    by_call.setdefault(permission.tool_call_id, deque()).append(permission)
                by_summary.setdefault(permission.summary, deque()).append(permission)
        by_summary_only = []
        for placed in self.denials:
            call_id = placed.denial.tool_call_id
            record = _first_unmatched(by_call.get(call_id)) if call_id is not None else None
            if record is None:
                by_summary_only.append(placed)
            else:
                _take_denial(record, placed)
        for placed in by_summary_only:
            denial = placed.denial
            record = _first_unmatched(by_summary.get(denial.summary))
            if record is None:
                record = model.PermissionRecord(
                    None, denial.summary, denial.tool_call_id, placed.turn, placed.at_ms
                )
                self.timeline.turns[placed.turn - 1].permissions.append(record)
            _take_denial(record, placed)

    def finish(self) -> model.Timeline:
        """Match the policy's denials, attach permissions to their tool calls and put
        calls in start order."""
        self.match_denials()
        for turn in self.timeline.turns:
            for permission in turn.permissions:
                call_id = permission.tool_call_id
                call = self.calls.get(call_id) if call_id is not None else None
                if call is not None:
                    call.permissions.append(permission)
            turn.tool_calls.sort(key=lambda call: call.sort_ms)
        return self.timeline


PROMPT_NOT_RECORDED = "(the prompt's text is not recorded)"

_Handler = Callable[[_Builder, dict[str, Any], float | None], None]
_HANDLERS: dict[str, _Handler] = {
    records.SESSION_START: _Builder.session_start,
    records.SESSION_SHUTDOWN: _Builder.session_shutdown,
    records.SESSION_ERROR: _Builder.session_error,
    records.SESSION_WARNING: _Builder.session_warning,
    records.USER_MESSAGE: _Builder.user_message,
    records.ASSISTANT_TURN_START: _Builder.turn_start,
    records.ASSISTANT_MESSAGE: _Builder.assistant_message,
    records.TOOL_EXECUTION_START: _Builder.tool_start,
    records.TOOL_EXECUTION_COMPLETE: _Builder.tool_complete,
    records.PERMISSION_REQUESTED: _Builder.permission_requested,
    records.PERMISSION_COMPLETED: _Builder.permission_completed,
    records.ABORT: _Builder.abort,
    records.GUARD_TOOL_DENIALS_EXCEEDED: _Builder.guard_stop,
    records.GUARD_TOOL_CALL_BUDGET_DEBIT: _Builder.budget_debit,
    records.GUARD_TOOL_CALL_BUDGET_EXCEEDED: _Builder.budget_stop,
    records.POLICY_DENIAL: _Builder.policy_denial,
    records.POLICY_IN_FORCE: _Builder.policy_in_force,
}
"""The types the timeline interprets, each with the builder's method that takes it in."""


@dataclass(frozen=True)
class _PlacedDenial:
    """A `policy.denial` record and where it came: its turn and its time."""

    denial: Denial
    turn: int
    at_ms: float | None


def _take_denial(record: model.PermissionRecord, placed: _PlacedDenial) -> None:
    record.policy = placed.denial
    if record.summary == _NOT_RECORDED:
        record.summary = placed.denial.summary
    if record.result is None:
        record.result, record.decided_ms = "denied", placed.at_ms


def _first_unmatched(
    candidates: deque[model.PermissionRecord] | None,
) -> model.PermissionRecord | None:
    """The first permission without a policy denial yet (matched ones are dropped)."""
    while candidates:
        if candidates[0].policy is None:
            return candidates.popleft()
        candidates.popleft()
    return None


def _why_not_a_record(line: str) -> str:
    """Why `records.parse_line` found no record in a line that is not blank."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return "not JSON"
    return f"a JSON {_JSON_NAMES.get(type(value), 'value')}, not an object"


def _str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _dict(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _scalar(value: Any) -> str:
    return str(value) if isinstance(value, str | int | float) else "?"


def _tool_name(data: Mapping[str, Any]) -> str:
    """`bash`, or `server.tool` for an MCP tool (as the permission summaries name it)."""
    tool = _str(data, "toolName") or "?"
    server = _str(data, "mcpServerName")
    if server:
        return f"{server}.{tool.removeprefix(server + '-')}"
    return tool


def _unix_ms(moment: datetime | None) -> float | None:
    """None for no time, and for one too far from 1970 to subtract."""
    if moment is None:
        return None
    try:
        return (moment - _EPOCH) / timedelta(milliseconds=1)
    except OverflowError:
        return None
