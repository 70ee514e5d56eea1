"""The run report: a session's events file rendered as a timeline people read.

`python -m copilot_driver.timeline EVENTS_JSONL [--format text|markdown]`

Why it is shaped this way:
- It reads only the events file (spec 3.3), never the driver's logs or the
  SDK, so it also reports on files written by other conforming drivers, and
  on files from runs that crashed half-way.
- A report is most needed when a run went wrong, so parsing never raises on
  content: lines that are not JSON objects are counted as skipped, event
  types it does not interpret are counted and named, fields of the wrong
  type are treated as missing. Only an unreadable *file* is an error.
- Tool calls are matched by `toolCallId` alone: this project's driver copies
  `toolName` onto `tool.execution_complete`, other drivers may not.
- Permission summaries come from `permissions.policy.summarise`, so the report
  names requests exactly as the denial logs do (and drops URL queries).
- Times are kept as unix milliseconds: the Mermaid chart wants them, and
  arithmetic on floats cannot overflow the way odd datetimes can.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from copilot_driver.permissions.policy import summarise, url_without_secrets

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WIDTH = 96
"""Text lines stay within this many columns (a 100-column terminal, with margin)."""
_ANSWER_LINES = 6
_MD_ANSWER_LINES = 40
_MD_ANSWER_CHARS = 4000
_MD_NOTICE_CHARS = 400
_SKIP_EXAMPLES = 5
_JSON_NAMES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_UNKNOWN_LISTED = 10
_PATH_TOOLS = frozenset({"view", "create", "edit", "str_replace", "str_replace_editor", "read"})

_HANDLED = frozenset(
    [
        "session.start",
        "session.shutdown",
        "session.error",
        "session.warning",
        "user.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
        "permission.requested",
        "permission.completed",
        "abort",
        "guard.tool_denials_exceeded",
    ]
)
_IGNORED = frozenset(
    [
        "system.message",
        "system.notification",
        "session.info",
        "session.idle",
        "session.usage_info",
        "session.usage_checkpoint",
        "session.model_change",
        "session.mode_changed",
        "session.title_changed",
        "session.context_changed",
        "session.truncation",
        "session.compaction_start",
        "session.compaction_complete",
        "pending_messages.modified",
        "assistant.intent",
        "assistant.reasoning",
        "assistant.usage",
        "assistant.idle",
        "assistant.message_start",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.shell_output",
        "hook.start",
        "hook.end",
        "hook.progress",
        "instruction.update",
    ]
)
"""Types the runtime writes that carry nothing for a timeline: not "unknown"."""


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
        """Clamped at zero: a clock step between two events is not a negative duration."""
        if self.started_ms is None or self.finished_ms is None:
            return None
        return max(0.0, self.finished_ms - self.started_ms)

    @property
    def sort_ms(self) -> float:
        return _first_number(self.started_ms, self.finished_ms)

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

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [call for turn in self.turns for call in turn.tool_calls]

    @property
    def permissions(self) -> list[PermissionRecord]:
        return [p for turn in self.turns for p in turn.permissions]

    @property
    def final_answer(self) -> str | None:
        answers = [turn.answer for turn in self.turns if turn.answer]
        return answers[-1] if answers else None

    @property
    def duration_ms(self) -> float | None:
        if self.start_ms is None or self.end_ms is None:
            return None
        return max(0.0, self.end_ms - self.start_ms)

    @property
    def outcome(self) -> str:
        """One phrase for the summary: the most serious thing that happened."""
        if self.guard_stop:
            guard = self.guard_stop
            return f"stopped by the denial guard ({guard.denial_count}/{guard.threshold} denials)"
        for kind in ("session.error", "abort"):
            notice = next((n for n in self.notices if n.kind == kind), None)
            if notice:
                label = "error" if kind == "session.error" else "aborted"
                return f"{label}: {_shorten(notice.message, 80)}"
        if self.final_answer:
            return "answered"
        if self.shutdown:
            return "ended without an answer"
        return "no events" if self.events == 0 else "incomplete (no session.shutdown)"


# -- parsing -----------------------------------------------------------------


def load_timeline(path: Path) -> Timeline:
    """Raises OSError when the file cannot be read; never on its content."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        return parse_timeline(lines)


def parse_timeline(lines: Iterable[str]) -> Timeline:
    builder = _Builder()
    for number, line in enumerate(lines, start=1):
        builder.line(number, line)
    return builder.finish()


class _Builder:
    def __init__(self) -> None:
        self.timeline = Timeline()
        self.calls: dict[str, ToolCallRecord] = {}
        self.requests: dict[str, PermissionRecord] = {}

    def line(self, number: int, line: str) -> None:
        timeline = self.timeline
        timeline.lines += 1
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            self.skip(number, "not JSON")
            return
        if not isinstance(event, dict):
            self.skip(number, f"a JSON {_JSON_NAMES.get(type(event), 'value')}, not an object")
            return
        event_type = event.get("type")
        if not isinstance(event_type, str):
            self.skip(number, "no event type")
            return
        timeline.events += 1
        at_ms = _timestamp_ms(event.get("timestamp"))
        if at_ms is None:
            timeline.untimed += 1
        else:
            timeline.start_ms = at_ms if timeline.start_ms is None else timeline.start_ms
            timeline.end_ms = at_ms if timeline.end_ms is None else max(timeline.end_ms, at_ms)
        data = event.get("data")
        data = data if isinstance(data, dict) else {}
        if event_type in _HANDLED:
            self.event(event_type, data, at_ms)
        elif event_type not in _IGNORED:
            timeline.unknown_types[event_type] += 1

    def skip(self, number: int, why: str) -> None:
        self.timeline.skipped += 1
        if len(self.timeline.skip_examples) < _SKIP_EXAMPLES:
            self.timeline.skip_examples.append(f"line {number}: {why}")

    def turn(self, at_ms: float | None) -> Turn:
        """The current turn; events before any prompt get a turn without one."""
        if not self.timeline.turns:
            self.timeline.turns.append(Turn(index=1, prompt=None, started_ms=at_ms))
        return self.timeline.turns[-1]

    def event(self, event_type: str, data: dict[str, Any], at_ms: float | None) -> None:
        timeline = self.timeline
        if event_type == "session.start":
            timeline.session_id = _str(data, "sessionId") or timeline.session_id
            timeline.copilot_version = _str(data, "copilotVersion") or timeline.copilot_version
            timeline.model = _str(data, "selectedModel") or timeline.model
            timeline.cwd = _str(_dict(data, "context"), "cwd") or timeline.cwd
            if at_ms is not None:
                timeline.start_ms = at_ms  # the session's start, even if other lines came first
        elif event_type == "session.shutdown":
            timeline.shutdown = True
        elif event_type == "user.message":
            current = timeline.turns[-1] if timeline.turns else None
            prompt = _str(data, "content") or ""
            if current and current.prompt is None and not current.tool_calls and not current.rounds:
                current.prompt = prompt  # the implicit turn opened by an early event
            else:
                timeline.turns.append(Turn(len(timeline.turns) + 1, prompt, at_ms))
        elif event_type == "assistant.turn_start":
            self.turn(at_ms).rounds += 1
        elif event_type == "assistant.message":
            content = _str(data, "content")
            if content and content.strip():
                self.turn(at_ms).answer = content
        elif event_type == "tool.execution_start":
            self.tool_start(data, at_ms)
        elif event_type == "tool.execution_complete":
            self.tool_complete(data, at_ms)
        elif event_type == "permission.requested":
            self.permission_requested(data, at_ms)
        elif event_type == "permission.completed":
            self.permission_completed(data, at_ms)
        elif event_type == "guard.tool_denials_exceeded":
            guard = GuardStop(
                _scalar(data.get("denialCount")),
                _scalar(data.get("threshold")),
                _str(data, "reason") or "the driver stopped the session",
            )
            timeline.guard_stop = guard
            message = f"{guard.denial_count}/{guard.threshold} denials; {guard.reason}"
            self.notice("guard stop", message, at_ms)
        elif event_type in ("session.error", "session.warning"):
            message = _str(data, "message") or _str(data, "errorType") or "(no message)"
            self.notice(event_type, message, at_ms)
        elif event_type == "abort":
            self.notice("abort", _str(data, "reason") or "(no reason)", at_ms)

    def notice(self, kind: str, message: str, at_ms: float | None) -> None:
        turn = self.timeline.turns[-1].index if self.timeline.turns else 0
        self.timeline.notices.append(Notice(kind, message, turn, at_ms))

    def tool_start(self, data: dict[str, Any], at_ms: float | None) -> None:
        turn = self.turn(at_ms)
        call_id = _str(data, "toolCallId")
        call = ToolCallRecord(
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
            call = ToolCallRecord(call_id, _tool_name(data), None, turn.index)
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
        if call.tool == "?":
            call.tool = _tool_name(data)

    def permission_requested(self, data: dict[str, Any], at_ms: float | None) -> None:
        request = _dict(data, "permissionRequest")
        turn = self.turn(at_ms)
        record = PermissionRecord(
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
            record = PermissionRecord(
                request_id, "(request not recorded)", tool_call_id, turn.index
            )
            turn.permissions.append(record)
        result = _dict(data, "result")
        record.decided_ms = at_ms
        record.result = _str(result, "kind") or "unknown"
        record.feedback = _str(result, "feedback")

    def finish(self) -> Timeline:
        """Attach permissions to their tool calls and put calls in start order."""
        for turn in self.timeline.turns:
            for permission in turn.permissions:
                call_id = permission.tool_call_id
                call = self.calls.get(call_id) if call_id is not None else None
                if call is not None:
                    call.permissions.append(permission)
            turn.tool_calls.sort(key=lambda call: call.sort_ms)
        return self.timeline


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


def _timestamp_ms(value: Any) -> float | None:
    """ISO 8601 (`...+00:00` or `...Z`) to unix ms; naive times are taken as UTC."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return (moment - _EPOCH) / timedelta(milliseconds=1)
    except OverflowError:
        return None


def _first_number(*values: float | None) -> float:
    for value in values:
        if value is not None:
            return value
    return float("inf")


# -- formatting helpers ---------------------------------------------------------


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 3)] + "..."


def _argument_summary(tool: str, arguments: Any) -> str:
    """What the call was about, in a few words: the command, the path, the URL."""
    if isinstance(arguments, dict):
        bare = tool.rsplit(".", 1)[-1]
        if bare == "bash" and isinstance(arguments.get("command"), str):
            return _shorten(arguments["command"], 200)
        if bare in _PATH_TOOLS and isinstance(arguments.get("path"), str):
            return _shorten(arguments["path"], 200)
        if bare == "web_fetch" and isinstance(arguments.get("url"), str):
            return _shorten(url_without_secrets(arguments["url"]), 200)
    if arguments is None:
        return ""
    try:
        text = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "?"
    return _shorten(text, 200)


def _duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _offset(timeline: Timeline, at_ms: float | None) -> str:
    """`+1.23s` since the session started: short, and sorts with the eye."""
    if at_ms is None or timeline.start_ms is None:
        return "?"
    seconds = (at_ms - timeline.start_ms) / 1000
    if abs(seconds) < 60:
        return f"{seconds:+.2f}s"
    sign = "-" if seconds < 0 else "+"
    minutes, rest = divmod(int(abs(seconds)), 60)
    if minutes < 60:
        return f"{sign}{minutes}m{rest:02d}s"
    return f"{sign}{minutes // 60}h{minutes % 60:02d}m"


def _clock(at_ms: float | None) -> str:
    if at_ms is None:
        return "unknown"
    try:
        moment = datetime.fromtimestamp(at_ms / 1000, UTC)
    except (ValueError, OverflowError, OSError):
        return "unknown"
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _counts(timeline: Timeline) -> dict[str, int]:
    calls = timeline.tool_calls
    permissions = timeline.permissions
    return {
        "calls": len(calls),
        "ok": sum(call.outcome == "ok" for call in calls),
        "denied_calls": sum(call.outcome == "DENIED" for call in calls),
        "failed": sum(call.outcome == "FAILED" for call in calls),
        "no_result": sum(call.outcome == "no result" for call in calls),
        "unknown": sum(call.outcome == "unknown" for call in calls),
        "approved": sum(p.approved for p in permissions),
        "denied": sum(p.denied for p in permissions),
        "undecided": sum(p.result is None for p in permissions),
        "rounds": sum(turn.rounds for turn in timeline.turns),
    }


def _calls_phrase(c: Mapping[str, int]) -> str:
    parts = [f"{c['ok']} ok"]
    parts += [f"{c['failed']} failed"] if c["failed"] else []
    parts += [f"{c['denied_calls']} denied"] if c["denied_calls"] else []
    parts += [f"{c['no_result']} no result"] if c["no_result"] else []
    parts += [f"{c['unknown']} without a success flag"] if c["unknown"] else []
    return f"{c['calls']} ({', '.join(parts)})" if c["calls"] else "0"


def _permissions_phrase(c: Mapping[str, int]) -> str:
    phrase = f"{c['approved']} approved, {c['denied']} denied"
    return phrase + (f", {c['undecided']} undecided" if c["undecided"] else "")


def _input_phrase(timeline: Timeline) -> str:
    phrase = f"{timeline.lines} lines, {timeline.events} events, {timeline.skipped} skipped"
    if timeline.skip_examples:
        more = "; ..." if timeline.skipped > len(timeline.skip_examples) else ""
        phrase += f" ({'; '.join(timeline.skip_examples)}{more})"
    return phrase


def _other_phrases(timeline: Timeline) -> list[str]:
    phrases = []
    if timeline.unknown_types:
        counted = sorted(timeline.unknown_types.items(), key=lambda item: (-item[1], item[0]))
        listed = [f"{_shorten(name, 40)} x{n}" for name, n in counted[:_UNKNOWN_LISTED]]
        listed += ["..."] if len(counted) > _UNKNOWN_LISTED else []
        phrases.append(f"event types not shown: {', '.join(listed)}")
    if timeline.untimed:
        phrases.append(f"{timeline.untimed} events without a usable timestamp")
    if timeline.orphan_completions:
        phrases.append(f"{timeline.orphan_completions} tool results without a start")
    return phrases


def _session_label(timeline: Timeline) -> str:
    return timeline.session_id or "(no session.start)"


# -- text ----------------------------------------------------------------------


def render_text(timeline: Timeline) -> str:
    """For a terminal: plain ASCII, one line per tool call, within ~96 columns."""
    out = [_fit("Copilot session ", _session_label(timeline))]
    details = [
        f"CLI {timeline.copilot_version}" if timeline.copilot_version else "",
        f"model {timeline.model}" if timeline.model else "",
        f"cwd {timeline.cwd}" if timeline.cwd else "",
    ]
    if any(details):
        out.append(_fit("  ", ", ".join(d for d in details if d)))
    out.append(f"  started {_clock(timeline.start_ms)}, lasted {_duration(timeline.duration_ms)}")
    out.append(_fit("  outcome: ", timeline.outcome))
    if not timeline.events:
        out += ["", "No events."]
    tool_width = min(18, max((len(call.tool) for call in timeline.tool_calls), default=4))
    widest = max((len(call.what) for call in timeline.tool_calls), default=0)
    what_width = max(8, min(_WIDTH - 34 - tool_width, widest))
    for turn in timeline.turns:
        prompt = turn.prompt if turn.prompt is not None else "(no prompt)"
        out += ["", _fit(f"Turn {turn.index}: ", prompt)]
        for call in turn.tool_calls:
            tool = _shorten(call.tool, tool_width)
            what = _shorten(call.what, what_width)
            at = _offset(timeline, call.started_ms)
            duration = _duration(call.duration_ms)
            line = f"  {at:>8}  {tool:<{tool_width}}  {what:<{what_width}}  {call.outcome:<9}"
            out.append(f"{line} {duration:>8}" if call.completed else line.rstrip())
            if call.outcome == "FAILED" and call.error:
                out.append(_fit("            error: ", call.error))
            for permission in call.permissions:
                out += _permission_lines(" " * 12, permission)
        attached = {id(p) for call in turn.tool_calls for p in call.permissions}
        for permission in turn.permissions:
            if id(permission) not in attached:
                at = _offset(timeline, permission.requested_ms or permission.decided_ms)
                out += _permission_lines(f"  {at:>8}  permission  ", permission)
        if not turn.tool_calls and not turn.permissions:
            out.append("  (no tool calls)")
        out.append(f"  {turn.rounds} model round{'' if turn.rounds == 1 else 's'}")
        if turn.answer and turn is not timeline.turns[-1]:
            out.append(_fit("  answer: ", turn.answer))
    if timeline.notices:
        out += ["", "Notable events:"]
        for notice in timeline.notices:
            at = _offset(timeline, notice.at_ms)
            first = f"  {at:>8}  {notice.kind.upper()}: {notice.message}"
            out += textwrap.wrap(first, _WIDTH, subsequent_indent=" " * 12, max_lines=3)
    answer = timeline.final_answer
    out += ["", "Final answer:" if answer else "Final answer: (none)"]
    if answer:
        lines = [line for line in answer.splitlines() if line.strip()]
        out += [_fit("  ", line) for line in lines[:_ANSWER_LINES]]
        if len(lines) > _ANSWER_LINES:
            out.append(f"  ... ({len(lines) - _ANSWER_LINES} more lines)")
    counts = _counts(timeline)
    out += [
        "",
        "Totals:",
        f"  tool calls   {_calls_phrase(counts)}",
        f"  permissions  {_permissions_phrase(counts)}",
        f"  turns        {len(timeline.turns)} ({counts['rounds']} model rounds)",
        f"  duration     {_duration(timeline.duration_ms)}",
        f"  input        {_input_phrase(timeline)}",
    ]
    out += [f"  other        {phrase}" for phrase in _other_phrases(timeline)]
    return "\n".join(out) + "\n"


def _fit(prefix: str, text: str, width: int = _WIDTH) -> str:
    """`prefix` kept as is (indentation), `text` flattened to one line and shortened."""
    return prefix + _shorten(text, max(12, width - len(prefix)))


def _permission_lines(prefix: str, permission: PermissionRecord) -> list[str]:
    """`approved shell(git --version)`; a denial's feedback on its own line if long."""
    line = _fit(prefix, f"{permission.verdict} {permission.summary}")
    if not (permission.denied and permission.feedback):
        return [line]
    feedback = " ".join(permission.feedback.split())
    if len(line) + 2 + len(feedback) <= _WIDTH:
        return [f"{line}: {feedback}"]
    return [line, _fit(" " * (len(prefix) + 2) + "feedback: ", feedback)]


# -- markdown -------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")
_MERMAID_UNSAFE = re.compile(r"[:;#`<>%\s]+")
_MERMAID_KEYWORDS = frozenset(
    [
        "title",
        "section",
        "dateformat",
        "axisformat",
        "tickinterval",
        "excludes",
        "includes",
        "todaymarker",
        "click",
        "weekday",
        "weekend",
        "inclusiveenddates",
        "topaxis",
        "acctitle",
        "accdescr",
        "displaymode",
    ]
)


def render_markdown(timeline: Timeline) -> str:
    """For GitHub (the step summary): tables, a quote of the answer, a Mermaid gantt."""
    counts = _counts(timeline)
    version = f" (CLI {timeline.copilot_version})" if timeline.copilot_version else ""
    out = [
        "## Copilot session timeline",
        "",
        "| | |",
        "|---|---|",
        f"| Session | {_cell(_session_label(timeline) + version)} |",
        f"| Started | {_clock(timeline.start_ms)} |",
        f"| Duration | {_duration(timeline.duration_ms)} |",
        f"| Turns | {len(timeline.turns)} ({counts['rounds']} model rounds) |",
        f"| Tool calls | {_calls_phrase(counts)} |",
        f"| Permissions | {_permissions_phrase(counts)} |",
        f"| Outcome | {_cell(timeline.outcome)} |",
        "",
        "### Tool calls",
        "",
    ]
    calls = timeline.tool_calls
    if calls:
        out += [
            "| Turn | At | Tool | What | Outcome | Duration |",
            "|---:|---:|---|---|---|---:|",
        ]
        for call in calls:
            out.append(
                f"| {call.turn} | {_offset(timeline, call.started_ms)} | {_cell(call.tool)} "
                f"| {_cell(_shorten(call.what, 120))} | {call.outcome} "
                f"| {_duration(call.duration_ms)} |"
            )
    else:
        out.append("No tool calls.")
    denials = [p for p in timeline.permissions if p.denied]
    if denials:
        out += ["", "### Denied permissions", ""]
        for p in denials:
            feedback = f": {p.feedback}" if p.feedback else ""
            out.append(f"- {_cell(p.summary + feedback)} ({_cell(p.result or '')})")
    if timeline.notices:
        out += ["", "### Notable events", ""]
        for notice in timeline.notices:
            out.append(
                f"- **{notice.kind}** ({_offset(timeline, notice.at_ms)}): "
                f"{_cell(notice.message[:_MD_NOTICE_CHARS])}"
            )
    out += ["", "### Final answer", ""]
    answer = timeline.final_answer
    out += _blockquote(answer) if answer else ["_No final answer._"]
    gantt = _gantt(timeline)
    if gantt:
        out += ["", "```mermaid", *gantt, "```"]
    other = "; ".join([_input_phrase(timeline), *_other_phrases(timeline)])
    out += ["", f"<sub>Read {_cell(other)}.</sub>"]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Safe in a table cell: markdown punctuation escaped, `|` too, newlines as `<br>`."""
    escaped = _MD_SPECIAL.sub(r"\\\1", text)
    return "<br>".join(escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _blockquote(answer: str) -> list[str]:
    """The answer is the model's markdown: quoted as is, but not without bound."""
    lines = answer.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    text = "\n".join(lines[:_MD_ANSWER_LINES])
    cut = len(lines) > _MD_ANSWER_LINES or len(text) > _MD_ANSWER_CHARS
    lines = text[:_MD_ANSWER_CHARS].split("\n")
    quoted = [f"> {line}".rstrip() for line in lines]
    return [*quoted, ">", "> _(shortened)_"] if cut else quoted


def _mermaid_label(text: str) -> str:
    """Mermaid reads `:` `;` `#` as syntax, and a backtick could close the fence."""
    label = _shorten(_MERMAID_UNSAFE.sub(" ", text).strip(), 48) or "call"
    if label.split(" ", 1)[0].lower() in _MERMAID_KEYWORDS:
        label = f"tool {label}"
    return label


def _gantt(timeline: Timeline) -> list[str]:
    """One bar per timed call; `crit` when it failed, `active` when it never finished."""
    lines: list[str] = []
    number = 0
    for turn in timeline.turns:
        section: list[str] = []
        for call in turn.tool_calls:
            start = _first_number(call.started_ms, call.finished_ms)
            if not 0 <= start < float("inf"):
                continue  # untimed, or before 1970: nothing Mermaid's `x` format can place
            end = _first_number(call.finished_ms, start)
            start_ms, end_ms = round(start), max(round(end), round(start) + 1)
            outcome = call.outcome
            tag = "done" if outcome == "ok" else "active" if outcome == "no result" else "crit"
            number += 1
            label = _mermaid_label(f"{call.tool} {call.what}")
            section.append(f"    {label} :{tag}, t{number}, {start_ms}, {end_ms}")
        if section:
            lines += [f"    section Turn {turn.index}", *section]
    if not lines:
        return []
    header = ["gantt", "    title Tool calls", "    dateFormat x", "    axisFormat %M:%S"]
    return header + lines


# -- command line ----------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report on stdout; 2 (one line on stderr) when the file is unreadable."""
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.timeline",
        description="Render a Copilot session's events file as a timeline.",
    )
    parser.add_argument("events", type=Path, metavar="EVENTS_JSONL")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    args = parser.parse_args(argv)
    try:
        timeline = load_timeline(args.events)
    except OSError as error:
        reason = error.strerror or str(error)
        sys.stderr.write(f"timeline: error: cannot read {args.events}: {reason}\n")
        return 2
    render = render_markdown if args.format == "markdown" else render_text
    # JSON escapes can smuggle lone surrogates into strings: print them as `?`, never crash.
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(render(timeline).encode(encoding, "replace").decode(encoding))
    return 0


if __name__ == "__main__":
    sys.exit(main())
