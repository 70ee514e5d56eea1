"""The phrases both renderers use: times, durations, counts, what could be read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from copilot_driver import records
from copilot_driver.formatting import shorten
from copilot_driver.report.model import Timeline

_UNKNOWN_LISTED = 10


def duration(ms: float | None) -> str:
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


def offset(timeline: Timeline, at_ms: float | None) -> str:
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


def clock(at_ms: float | None) -> str:
    if at_ms is None:
        return "unknown"
    try:
        moment = datetime.fromtimestamp(at_ms / 1000, UTC)
    except (ValueError, OverflowError, OSError):
        return "unknown"
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def counts(timeline: Timeline) -> dict[str, int]:
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


def calls_phrase(c: Mapping[str, int]) -> str:
    parts = [f"{c['ok']} ok"]
    parts += [f"{c['failed']} failed"] if c["failed"] else []
    parts += [f"{c['denied_calls']} denied"] if c["denied_calls"] else []
    parts += [f"{c['no_result']} no result"] if c["no_result"] else []
    parts += [f"{c['unknown']} without a success flag"] if c["unknown"] else []
    return f"{c['calls']} ({', '.join(parts)})" if c["calls"] else "0"


def permissions_phrase(c: Mapping[str, int]) -> str:
    phrase = f"{c['approved']} approved, {c['denied']} denied"
    return phrase + (f", {c['undecided']} undecided" if c["undecided"] else "")


def input_phrase(timeline: Timeline) -> str:
    phrase = f"{timeline.lines} lines, {timeline.events} events, {timeline.skipped} skipped"
    if timeline.skip_examples:
        more = "; ..." if timeline.skipped > len(timeline.skip_examples) else ""
        phrase += f" ({'; '.join(timeline.skip_examples)}{more})"
    return phrase


def other_phrases(timeline: Timeline) -> list[str]:
    phrases = []
    if timeline.unknown_types:
        counted = sorted(timeline.unknown_types.items(), key=lambda item: (-item[1], item[0]))
        listed = [f"{shorten(name, 40)} x{n}" for name, n in counted[:_UNKNOWN_LISTED]]
        listed += ["..."] if len(counted) > _UNKNOWN_LISTED else []
        phrases.append(f"event types not shown: {', '.join(listed)}")
    if timeline.untimed:
        phrases.append(f"{timeline.untimed} events without a usable timestamp")
    if timeline.orphan_completions:
        phrases.append(f"{timeline.orphan_completions} tool results without a start")
    return phrases


def session_label(timeline: Timeline) -> str:
    return timeline.session_id or f"(no {records.SESSION_START})"
