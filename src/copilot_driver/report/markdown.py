"""The report as GitHub markdown (the job's step summary), with a Mermaid gantt chart.

Every part is bounded, whatever the events file holds: the tool-call table
keeps its first and last rows, lists keep their first items, free text is
shortened, the chart draws at most `gantt.MAX_BARS` calls, and `limits.fit`
holds the whole to `STEP_SUMMARY_LIMIT` bytes. Each cut says what it left out.
"""

from __future__ import annotations

from copilot_driver.inert_text import visible_controls
from copilot_driver.report import policy, summary
from copilot_driver.report.gantt import LEGEND, gantt_chart
from copilot_driver.report.limits import STEP_SUMMARY_LIMIT, clip, fit
from copilot_driver.report.markdown_text import cell, code, prose
from copilot_driver.report.model import PermissionRecord, Timeline, ToolCallRecord
from copilot_driver.report.sandbox import SandboxSummary
from copilot_driver.vocabulary import PolicyInForce

__all__ = [
    "TABLE_HEADER",
    "cell",
    "code",
    "footer",
    "policy_value",
    "prose",
    "render_markdown",
    "sandbox_section",
    "sandbox_warning",
    "timeline_sections",
]

CALL_ROWS_FIRST = 150
CALL_ROWS_LAST = 50
"""The tool-call table keeps its first and last rows: how it started, how it ended."""
LISTED = 50
"""Denials and notable events listed, at most."""
MODELS_LISTED = 20
FILES_LISTED = 30
_ANSWER_LINES = 40
_ANSWER_CHARS = 4000
_NOTICE_CHARS = 400
_WHAT_CHARS = 120
_TOOL_CHARS = 40
_NAME_CHARS = 200
"""Session ids, model names, file names, request summaries: short in practice."""
TABLE_HEADER = "| Field | Value |"
"""The header of the two-column tables (a summary's fields and their values)."""


def render_markdown(timeline: Timeline) -> str:
    """For GitHub: tables, a quote of the answer, a Mermaid gantt; under
    `STEP_SUMMARY_LIMIT` bytes; the run's control characters made visible."""
    warning = sandbox_warning(timeline.sandbox)
    out = [
        "## Copilot session timeline",
        "",
        *warning,
        *([""] if warning else []),
        *timeline_sections(timeline, timeline.sandbox),
        "",
        footer(timeline),
    ]
    return fit(visible_controls("\n".join(out) + "\n"), STEP_SUMMARY_LIMIT)


def timeline_sections(
    timeline: Timeline, sandbox: SandboxSummary | None = None, *, with_policy: bool = True
) -> list[str]:
    """Everything but the heading and the footer, each part bounded; the sandbox's
    section after the summary table when one is given; the policy's row unless the
    caller shows it elsewhere."""
    return [
        *_summary_table(timeline, with_policy),
        *sandbox_section(sandbox),
        *_usage_section(timeline),
        *_calls_section(timeline),
        *_denials_section(timeline),
        *_notices_section(timeline),
        *_answer_section(timeline),
        *_chart_section(timeline),
    ]


def footer(timeline: Timeline) -> str:
    """The report's version, and what could (and could not) be read."""
    other = "; ".join([summary.input_phrase(timeline), *summary.other_phrases(timeline)])
    return f"<sub>{summary.REPORT_VERSION}. Read {cell(other)}.</sub>"


def policy_value(in_force: PolicyInForce | None) -> str:
    """The policy in force for a table cell: what it approved, in bold when it approved
    every request, then its rules as code spans."""
    headline = cell(policy.headline(in_force))
    if in_force is not None and in_force.approves_everything:
        headline = f"**{headline}**"
    listed: dict[str, list[str]] = {}
    for kind, rule in policy.rules(in_force):
        listed.setdefault(kind, []).append(
            cell(rule) if kind == "..." else code(rule, in_table=True)
        )
    parts = [f"{kind} {', '.join(rules)}" for kind, rules in listed.items() if kind != "..."]
    more = listed.get("...", [])
    return "; ".join([headline, *parts, *more])


def sandbox_warning(sandbox: SandboxSummary | None) -> list[str]:
    """A GitHub alert when the tools ran outside the sandbox; nothing otherwise."""
    if sandbox is None or not sandbox.off:
        return []
    return ["> [!WARNING]", f"> {summary.SANDBOX_OFF_WARNING}"]


def sandbox_section(sandbox: SandboxSummary | None) -> list[str]:
    """The mode, the hosts the egress proxy allows, the variables passed, tables of the
    connections it let through and refused per host (busiest first), and what was done
    to the git control files a tool wrote."""
    if sandbox is None:
        return []
    rows = [("Mode", cell(summary.sandbox_mode(sandbox)))]
    if sandbox.allowed_hosts or not sandbox.off:
        rows.append(("Allowed hosts", _names(sandbox.allowed_hosts, "hosts")))
    if sandbox.passed_env:
        rows.append(("Passed environment", _names(sandbox.passed_env, "variables")))
    if sandbox.egress_allowed or not sandbox.off:
        rows.append(("Egress allowed", summary.allowed_phrase(sandbox)))
    if sandbox.egress_denied or not sandbox.off:
        rows.append(("Egress denied", summary.denied_phrase(sandbox)))
    out = ["", "### Sandbox", "", TABLE_HEADER, "|---|---|"]
    out += [f"| {name} | {value} |" for name, value in rows]
    out += _connections_table("Egress allowed", sandbox.egress_allowed)
    out += _connections_table("Egress denied", sandbox.egress_denied)
    if sandbox.git_neutralised:
        out += ["", "| Git control files a tool wrote, after the run |", "|---|"]
        out += [f"| {cell(done)} |" for done in sandbox.git_neutralised[: summary.SANDBOX_LISTED]]
        if len(sandbox.git_neutralised) > summary.SANDBOX_LISTED:
            more = len(sandbox.git_neutralised) - summary.SANDBOX_LISTED
            out.append(f"| _... and {more:,} more_ |")
    return out


def _connections_table(title: str, counts: tuple[tuple[str, int], ...]) -> list[str]:
    """Connections per host, the busiest few listed and the rest counted."""
    if not counts:
        return []
    out = ["", f"| {title} | Connections |", "|---|---:|"]
    out += [
        f"| {cell(summary.sandbox_name(host))} | {summary.number(count)} |"
        for host, count in counts[: summary.SANDBOX_LISTED]
    ]
    if len(counts) > summary.SANDBOX_LISTED:
        out.append(f"| _... and {len(counts) - summary.SANDBOX_LISTED:,} more hosts_ | |")
    return out


def _names(names: tuple[str, ...], what: str) -> str:
    """`a, b, c`, escaped for a cell, the first few only; `none` for none."""
    if not names:
        return "none"
    listed = [cell(summary.sandbox_name(name)) for name in names[: summary.SANDBOX_LISTED]]
    if len(names) > summary.SANDBOX_LISTED:
        listed.append(f"_... and {len(names) - summary.SANDBOX_LISTED:,} more {what}_")
    return ", ".join(listed)


def _summary_table(timeline: Timeline, with_policy: bool = True) -> list[str]:
    counts = summary.counts(timeline)
    session = clip(summary.session_label(timeline), _NAME_CHARS)
    version = f" (CLI {clip(timeline.copilot_version, 40)})" if timeline.copilot_version else ""
    usage, result = timeline.usage, timeline.result
    rows = [
        ("Session", cell(session + version)),
        ("Model", cell(clip(timeline.model, _NAME_CHARS)) if timeline.model else None),
        ("Policy", policy_value(timeline.policy) if with_policy else None),
        ("Started", summary.clock(timeline.start_ms)),
        ("Time", summary.times_phrase(timeline)),
        ("Driver time", _driver_time(timeline)),
        ("Turns", f"{len(timeline.turns)} ({counts['rounds']} model rounds)"),
        ("Tool calls", summary.calls_phrase(counts)),
        ("Permissions", summary.permissions_phrase(counts)),
        ("Premium requests", summary.number(usage.premium_requests) if usage else None),
        ("Files changed", _changes(timeline)),
        ("Outcome", prose(clip(timeline.outcome, _NOTICE_CHARS), in_table=True)),
        ("Exit code", cell(summary.exit_phrase(result)) if result else None),
        (
            "Error",
            prose(error, in_table=True)
            if result and (error := summary.error_text(result))
            else None,
        ),
    ]
    # A header row of empty cells renders as a blank bar on GitHub: say what the columns are.
    lines = [TABLE_HEADER, "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows if value is not None]
    return lines


def _changes(timeline: Timeline) -> str | None:
    """`2 files (+10 -3) by the editing tools (create, edit); not listed: what shell
    commands changed (1 ran)`; None when the session never said (no shutdown)."""
    changes = summary.changes_phrase(timeline.usage) if timeline.usage else None
    if changes is None:
        return None
    return f"{changes} {summary.CHANGED_BY}; {summary.unlisted_changes(timeline)}"


def _driver_time(timeline: Timeline) -> str | None:
    driver_time = summary.driver_time_phrase(timeline)
    return f"{driver_time}, {summary.DRIVER_TIME_MEANING}" if driver_time else None


def _usage_section(timeline: Timeline) -> list[str]:
    """Tokens per model, and the files the agent changed."""
    usage = timeline.usage
    if usage is None:
        return []
    out: list[str] = []
    if usage.models:
        out += [
            "",
            "### Usage",
            "",
            "| Model | Requests | Input tokens | Output tokens | Cache read | Cache write |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for model in usage.models[:MODELS_LISTED]:
            counts = (
                model.requests,
                model.input_tokens,
                model.output_tokens,
                model.cache_read_tokens,
                model.cache_write_tokens,
            )
            numbers = " | ".join(summary.number(n) for n in counts)
            out.append(f"| {cell(clip(model.model, _NAME_CHARS))} | {numbers} |")
        if len(usage.models) > MODELS_LISTED:
            left_out = len(usage.models) - MODELS_LISTED
            out.append(f"| _... and {left_out:,} more models_ | | | | | |")
    files = usage.files_modified or ()
    if files:
        out += ["", f"### Files changed {summary.CHANGED_BY}", ""]
        out += [
            f"- {cell(clip(summary.changed_file(timeline, name), _NAME_CHARS))}"
            for name in files[:FILES_LISTED]
        ]
        out += _more(len(files), FILES_LISTED, "files")
        unlisted = summary.unlisted_changes(timeline)
        out += ["", f"_{unlisted[:1].upper()}{unlisted[1:]}._"]
    return out


def _calls_section(timeline: Timeline) -> list[str]:
    out = ["", "### Tool calls", ""]
    calls = timeline.tool_calls
    if not calls:
        return [*out, "No tool calls."]
    out += [
        "| Turn | At | Tool | What | Outcome | Duration |",
        "|---:|---:|---|---|---|---:|",
    ]
    if len(calls) <= CALL_ROWS_FIRST + CALL_ROWS_LAST:
        return out + [_call_row(timeline, call) for call in calls]
    left_out = len(calls) - CALL_ROWS_FIRST - CALL_ROWS_LAST
    out += [_call_row(timeline, call) for call in calls[:CALL_ROWS_FIRST]]
    out.append(f"| | | | _{left_out:,} calls not shown_ | | |")
    out += [_call_row(timeline, call) for call in calls[-CALL_ROWS_LAST:]]
    return out


def _call_row(timeline: Timeline, call: ToolCallRecord) -> str:
    return (
        f"| {call.turn} | {summary.offset(timeline, call.started_ms)} "
        f"| {cell(clip(call.tool, _TOOL_CHARS))} | {cell(clip(call.what, _WHAT_CHARS))} "
        f"| {call.outcome} | {summary.duration(call.duration_ms)} |"
    )


def _denials_section(timeline: Timeline) -> list[str]:
    denials = [p for p in timeline.permissions if p.denied]
    if not denials:
        return []
    out = ["", "### Denied permissions", ""]
    out += [_denial_item(p) for p in denials[:LISTED]]
    return out + _more(len(denials), LISTED, "denials")


def _denial_item(permission: PermissionRecord) -> str:
    """`- shell(rm x): denied: <why>; allow with `shell(rm x)``; from other drivers,
    the runtime's feedback and result kind."""
    name = cell(clip(permission.summary, _NAME_CHARS))
    policy = permission.policy
    if policy is not None:
        rule = summary.allow_rule(policy)
        allow = f"allow with {code(rule)}" if rule else summary.no_rule_phrase(policy)
        return f"- {name}: {prose(summary.denial_reason(policy))}; {allow}"
    feedback = f": {cell(clip(permission.feedback, _NOTICE_CHARS))}" if permission.feedback else ""
    return f"- {name}{feedback} ({cell(clip(permission.result or '', 60))})"


def _notices_section(timeline: Timeline) -> list[str]:
    notices = timeline.notices
    if not notices:
        return []
    out = ["", "### Notable events", ""]
    for notice in notices[:LISTED]:
        out.append(
            f"- **{cell(clip(notice.kind, 40))}** ({summary.offset(timeline, notice.at_ms)}): "
            f"{prose(notice.message[:_NOTICE_CHARS])}"
        )
    return out + _more(len(notices), LISTED, "notable events")


def _answer_section(timeline: Timeline) -> list[str]:
    answer = timeline.final_answer
    return [
        "",
        "### Final answer",
        "",
        *(_blockquote(answer) if answer else ["_No final answer._"]),
    ]


def _chart_section(timeline: Timeline) -> list[str]:
    chart = gantt_chart(timeline)
    if not chart.lines:
        return []
    notes = []
    if chart.drawn < chart.timed:
        notes.append(
            f"The chart draws {chart.drawn:,} of {chart.timed:,} tool calls "
            f"({chart.timed - chart.drawn:,} not drawn): the first that failed, were denied "
            "or never finished, and the slowest of the rest."
        )
    if chart.timed < chart.calls:
        untimed = chart.calls - chart.timed
        notes.append(f"{untimed:,} tool call{'' if untimed == 1 else 's'} without a timestamp.")
    note = [" ".join(notes), ""] if notes else []
    return ["", *note, "```mermaid", *chart.lines, "```", "", f"<sub>{LEGEND}</sub>"]


def _more(total: int, shown: int, what: str) -> list[str]:
    return [f"- _... and {total - shown:,} more {what}_"] if total > shown else []


def _blockquote(answer: str) -> list[str]:
    """The answer is the model's markdown: quoted as is, but not without bound; a cut
    falls after a whole word, marked `…`, and says how much it left out."""
    kept, left_out = summary.cut_text(answer, _ANSWER_LINES, _ANSWER_CHARS)
    quoted = [f"> {line}".rstrip() for line in kept.split("\n")]
    if not left_out:
        return quoted
    marker = f"{quoted[-1]} …" if quoted[-1] != ">" else "> …"
    return [*quoted[:-1], marker, ">", f"> _(answer cut: {summary.cut_phrase(left_out)})_"]
