"""The report as GitHub markdown (the job's step summary), with a Mermaid gantt chart."""

from __future__ import annotations

import re

from copilot_driver.formatting import shorten
from copilot_driver.report import summary
from copilot_driver.report.model import Timeline, first_number

_ANSWER_LINES = 40
_ANSWER_CHARS = 4000
_NOTICE_CHARS = 400
_WHAT_CHARS = 120
_LABEL_CHARS = 48
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")
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
    counts = summary.counts(timeline)
    version = f" (CLI {timeline.copilot_version})" if timeline.copilot_version else ""
    out = [
        "## Copilot session timeline",
        "",
        "| | |",
        "|---|---|",
        f"| Session | {_cell(summary.session_label(timeline) + version)} |",
        f"| Started | {summary.clock(timeline.start_ms)} |",
        f"| Duration | {summary.duration(timeline.duration_ms)} |",
        f"| Turns | {len(timeline.turns)} ({counts['rounds']} model rounds) |",
        f"| Tool calls | {summary.calls_phrase(counts)} |",
        f"| Permissions | {summary.permissions_phrase(counts)} |",
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
                f"| {call.turn} | {summary.offset(timeline, call.started_ms)} | {_cell(call.tool)} "
                f"| {_cell(shorten(call.what, _WHAT_CHARS))} | {call.outcome} "
                f"| {summary.duration(call.duration_ms)} |"
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
                f"- **{notice.kind}** ({summary.offset(timeline, notice.at_ms)}): "
                f"{_cell(notice.message[:_NOTICE_CHARS])}"
            )
    out += ["", "### Final answer", ""]
    answer = timeline.final_answer
    out += _blockquote(answer) if answer else ["_No final answer._"]
    gantt = _gantt(timeline)
    if gantt:
        out += ["", "```mermaid", *gantt, "```"]
    other = "; ".join([summary.input_phrase(timeline), *summary.other_phrases(timeline)])
    out += ["", f"<sub>Read {_cell(other)}.</sub>"]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Safe in a table cell: markdown punctuation escaped, `|` too, newlines as `<br>`."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return "<br>".join(escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _blockquote(answer: str) -> list[str]:
    """The answer is the model's markdown: quoted as is, but not without bound."""
    lines = answer.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    text = "\n".join(lines[:_ANSWER_LINES])
    cut = len(lines) > _ANSWER_LINES or len(text) > _ANSWER_CHARS
    lines = text[:_ANSWER_CHARS].split("\n")
    quoted = [f"> {line}".rstrip() for line in lines]
    return [*quoted, ">", "> _(shortened)_"] if cut else quoted


def _mermaid_label(text: str) -> str:
    """Mermaid reads `:` `;` `#` as syntax, and a backtick could close the fence."""
    label = shorten(_MERMAID_UNSAFE.sub(" ", text).strip(), _LABEL_CHARS) or "call"
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
            start = first_number(call.started_ms, call.finished_ms)
            if not 0 <= start < float("inf"):
                continue  # untimed, or before 1970: nothing Mermaid's `x` format can place
            end = first_number(call.finished_ms, start)
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
