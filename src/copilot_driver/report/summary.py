"""The phrases both renderers use: times, durations, counts, usage, denials, what
could be read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from copilot_driver import records
from copilot_driver.report.limits import clip
from copilot_driver.report.model import Timeline
from copilot_driver.report.sandbox import MODE_UNKNOWN, SandboxSummary
from copilot_driver.report.usage import ModelUsage, Usage
from copilot_driver.vocabulary import Denial, RunResult

REPORT_VERSION = "report v2"
"""Shown in both renderings: what a reader (or a script) of the report can expect."""
_UNKNOWN_LISTED = 10
_REASON_CHARS = 300
_RULE_CHARS = 500
"""A rule is there to be copied: shown whole, or not at all (a cut rule is another rule)."""
_ERROR_CHARS = 300
_MODE_CHARS = 40
SANDBOX_LISTED = 50
"""Allowed hosts, hosts denied egress and passed variables listed, at most, each."""
SANDBOX_NAME_CHARS = 200
"""A host or a variable name: short in practice, but a tool chooses the hosts it asks for."""
SANDBOX_OFF_WARNING = (
    "The OS sandbox was off (--sandbox off): tools ran with the runner's full file system, "
    "network and environment."
)


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
        listed = [f"{clip(name, 40)} x{n}" for name, n in counted[:_UNKNOWN_LISTED]]
        listed += ["..."] if len(counted) > _UNKNOWN_LISTED else []
        phrases.append(f"event types not shown: {', '.join(listed)}")
    if timeline.untimed:
        phrases.append(f"{timeline.untimed} events without a usable timestamp")
    if timeline.orphan_completions:
        phrases.append(f"{timeline.orphan_completions} tool results without a start")
    return phrases


def session_label(timeline: Timeline) -> str:
    return timeline.session_id or f"(no {records.SESSION_START})"


def integer(value: int) -> str:
    """An exit code or a count as given, unless absurdly long."""
    return str(value) if -(10**18) < value < 10**18 else "(out of range)"


def number(value: int | float | None) -> str:
    """`12,345`; `1.5`; `-` for no value."""
    if value is None:
        return "-"
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def tokens_phrase(model: ModelUsage) -> str:
    """`3 requests; tokens: 30 in, 15 out, 0 cache read, 0 cache write`."""
    requests = f"{number(model.requests)} request{'' if model.requests == 1 else 's'}"
    counts = [
        f"{number(model.input_tokens)} in",
        f"{number(model.output_tokens)} out",
        f"{number(model.cache_read_tokens)} cache read",
        f"{number(model.cache_write_tokens)} cache write",
    ]
    return f"{requests}; tokens: {', '.join(counts)}"


def times_phrase(timeline: Timeline) -> str:
    """The events' span, and the model's and the tools' shares of it (parallel tools
    counted once). Called `event span`, never `wall` or `lasted`: the driver logs a
    `durationMs` measured between other points (`driver_time_phrase`)."""
    usage = timeline.usage
    model_ms = usage.api_duration_ms if usage else None
    return (
        f"{duration(timeline.duration_ms)} event span; model {duration(model_ms)}, "
        f"tools {duration(timeline.tool_time_ms)}"
    )


SPAN_MEANING = "from the session's first event to its last"
DRIVER_TIME_MEANING = "from sending the prompt to completion (result.json durationMs)"


def driver_time_phrase(timeline: Timeline) -> str | None:
    """The driver's `durationMs`, named as such: it is the figure its log shows, and it
    is measured between other points than the events' span (spec 6.5), on another
    process's clock, so the two differ and neither is wrong."""
    result = timeline.result
    if result is None or result.duration_ms is None:
        return None
    return duration(result.duration_ms)


def cut_text(text: str, max_lines: int, max_chars: int) -> tuple[str, int]:
    """`text`'s first `max_lines` lines, at most `max_chars` characters of them, cut after
    a whole word when it must be cut; and how many characters were left out (0: whole).
    Line breaks are normalised to `\n` first, and counted as characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n", max_lines)
    kept = "\n".join(lines[:max_lines])
    if len(kept) > max_chars:
        window = kept[: max_chars + 1]
        boundary = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        # A single word longer than half the room is cut inside: better than showing nothing.
        kept = window[:boundary] if boundary > max_chars // 2 else kept[:max_chars]
    kept = kept.rstrip()
    return kept, max(0, len(text.rstrip()) - len(kept))


def cut_phrase(left_out: int) -> str:
    return f"{left_out:,} more character{'' if left_out == 1 else 's'} not shown"


CHANGED_BY = "by the editing tools (create, edit)"
"""Whose changes the runtime's `codeChanges` counts: a shell command's are in no event."""


def changes_phrase(usage: Usage) -> str | None:
    """`2 files (+10 -3)`, `none`, or None when the session did not say."""
    files = usage.files_modified
    if files is None and usage.lines_added is None and usage.lines_removed is None:
        return None
    count = len(files) if files is not None else None
    if count == 0 and not usage.lines_added and not usage.lines_removed:
        return "none"
    lines = f"+{number(usage.lines_added)} -{number(usage.lines_removed)}"
    return f"{number(count)} file{'' if count == 1 else 's'} ({lines})"


def changed_file(timeline: Timeline, path: str) -> str:
    """A changed file's path relative to the session's working folder when it is inside it
    (the runtime records absolute paths; the folder is in the report's header)."""
    cwd = timeline.cwd.rstrip("/") if timeline.cwd else None
    if cwd and path.startswith(cwd + "/") and len(path) > len(cwd) + 1:
        return path[len(cwd) + 1 :]
    return path


def unlisted_changes(timeline: Timeline) -> str:
    """`not listed: what shell commands changed (2 ran)`: the events say which commands
    ran, never which files they touched, and guessing from a command line would mislead."""
    ran = timeline.shell_commands
    return f"not listed: what shell commands changed ({f'{ran:,}' if ran else 'none'} ran)"


def exit_phrase(result: RunResult) -> str:
    """`0`, or `1 (session_error)`; `unknown` when the file has no exit code."""
    code = integer(result.exit_code) if result.exit_code is not None else "unknown"
    return f"{code} ({clip(result.error_kind, 60)})" if result.error_kind else code


def error_text(result: RunResult) -> str | None:
    return clip(result.error, _ERROR_CHARS) if result.error else None


def denial_reason(policy: Denial) -> str:
    """What the policy said, without the allow rule (which renderers quote their own way)."""
    return f"denied: {clip(policy.reason, _REASON_CHARS)}"


def allow_rule(policy: Denial) -> str | None:
    """The rule whole, to be copied; None when there is none, or it is too long to show
    (a rule cut short would be another rule: `no_rule_phrase` says why)."""
    rule = policy.allow_rule
    return rule if rule and len(rule) <= _RULE_CHARS else None


NO_ALLOW_RULE = "no allow rule can permit this"


def no_rule_phrase(policy: Denial) -> str:
    """Why a denial shows no rule: none can allow it, or it is too long to show here."""
    if not policy.allow_rule:
        return NO_ALLOW_RULE
    return (
        f"the rule that would allow it is {len(policy.allow_rule):,} characters long, too long "
        "to show here (it is the policy.denial record's allowRule in the events file)"
    )


def sandbox_mode(sandbox: SandboxSummary) -> str:
    """`workspace`, `off`, or `unknown (sandbox.json does not say)`."""
    if sandbox.mode == MODE_UNKNOWN:
        return f"{MODE_UNKNOWN} (sandbox.json does not say)"
    return sandbox_name(sandbox.mode, _MODE_CHARS)


def sandbox_name(name: str, limit: int = SANDBOX_NAME_CHARS) -> str:
    """A host or variable name on one line, shortened, with control characters as `?`:
    a tool picks the host names it connects to, and they reach terminals and pages."""
    return "".join(char if char.isprintable() else "?" for char in clip(name, limit))


def denied_phrase(sandbox: SandboxSummary) -> str:
    """`15 connections to 2 hosts`, or `none`."""
    return connections_phrase(sandbox.egress_denied)


def allowed_phrase(sandbox: SandboxSummary) -> str:
    """`15 connections to 2 hosts`, or `none`."""
    return connections_phrase(sandbox.egress_allowed)


def connections_phrase(counts: tuple[tuple[str, int], ...]) -> str:
    if not counts:
        return "none"
    hosts = len(counts)
    total = sum(count for _, count in counts)
    return (
        f"{number(total)} connection{'' if total == 1 else 's'} "
        f"to {hosts:,} host{'' if hosts == 1 else 's'}"
    )
