"""The tool calls as a Mermaid gantt chart: bounded, on an axis relative to the session.

Mermaid refuses a diagram over 50,000 characters, and a chart of thousands of
bars says nothing anyway, so at most `MAX_BARS` calls are drawn: the first
failed, denied or unfinished ones (up to `FAILED_BARS`), then the slowest of
the rest, all in time order.

Time 0 is the session's start: `dateFormat x` reads milliseconds since it.
Mermaid formats the axis in the viewer's time zone, so only zone-proof fields
label it: `%s` (seconds since 0) and `%L` (milliseconds within the second),
followed by the unit. A clock field such as `%M` or `%H` would read 30 minutes
off in India, and hours off nearly everywhere.

Mermaid's axis spans only the tasks drawn, so a first bar, the whole session
from 0 to its last event, makes the axis start at 0 and end where the session
did. Mermaid has no legend for gantt charts: `LEGEND` is the line the markdown
puts under the chart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot_driver.report.limits import clip
from copilot_driver.report.model import Timeline, ToolCallRecord, first_number

MAX_BARS = 100
FAILED_BARS = 30
"""Of `MAX_BARS`: the most kept for calls that did not succeed, earliest first."""
_LABEL_CHARS = 48
_SUBSECOND_AXIS_SPAN_MS = 60_000
"""Runs shorter than this get milliseconds on the axis; longer ones whole seconds."""
SESSION_BAR = "whole session"
"""The first bar's label: the session from its first event (0) to its last."""
LEGEND = (
    "Chart: seconds since the session's first event (0). Bars: the first, plain one is the "
    "whole session (its first event to its last); grey (`done`) a tool call that succeeded; "
    "red (`crit`) one that failed (a shell command that exited non-zero included) or was "
    "denied; blue (`active`) one that never finished (`no result`). The tool calls table "
    "above gives each call's outcome in words."
)
"""Colours as Mermaid's default theme draws them; the tags name them in any theme."""
_SPACES = re.compile(r"\s+")
_MERMAID_SYNTAX = re.compile("[:;#%`<>\ufb02\xb6]")
"""Written as Mermaid's entity codes (`#58;` for `:`): Mermaid reads `:` as the end of a
task's name, `;` `#` `%` as syntax; a backtick and `<` `>` are written as codes too, and
so are U+FB02 and U+00B6, the characters Mermaid's own entity codes become while it
parses (one in a label would be decoded as part of a code)."""
_MERMAID_STATEMENT = re.compile(
    r"(?:gantt|dateformat|axisformat|tickinterval|includes|excludes|todaymarker|weekday|weekend"
    r"|inclusiveenddates|topaxis|displaymode|title|section|click|href|call|acc|vert"
    r"|\d{4}-\d\d-\d\d)",
    re.IGNORECASE,
)
"""Starts of a line Mermaid's gantt lexer reads as a statement, not a task's name
(a superset: prefixing a name that would have been fine costs nothing)."""


@dataclass(frozen=True)
class _Bar:
    call: ToolCallRecord
    position: int
    """The call's place in the timeline: ties of time keep the file's order."""
    start_ms: float
    end_ms: float

    @property
    def length_ms(self) -> float:
        return self.end_ms - self.start_ms


@dataclass(frozen=True)
class Chart:
    lines: list[str]
    """The diagram, without the fence; empty when no call has a time."""
    drawn: int
    timed: int
    """Calls with a timestamp: those the chart could draw."""
    calls: int


def gantt_chart(timeline: Timeline) -> Chart:
    """One bar per drawn call; `crit` when it failed or was denied, `active` when it
    never finished (a minimal bar)."""
    calls = timeline.tool_calls
    bars = _timed_bars(calls)
    if not bars:
        return Chart([], 0, 0, len(calls))
    origin = min(bar.start_ms for bar in bars)
    if timeline.start_ms is not None:
        origin = min(origin, timeline.start_ms)
    last = max(bar.end_ms for bar in bars)
    if timeline.end_ms is not None:
        last = max(last, timeline.end_ms)
    span = max(1, round(last - origin))
    axis = "%s.%L s" if span < _SUBSECOND_AXIS_SPAN_MS else "%s s"
    lines = [
        "gantt",
        "    title Tool calls, seconds since the session's first event",
        "    dateFormat x",
        f"    axisFormat {axis}",
        "    todayMarker off",
        "    section Session",
        f"    {SESSION_BAR} :s0, 0, {span}",
    ]
    section = None
    chosen = _chosen(bars)
    for number, bar in enumerate(chosen, start=1):
        if bar.call.turn != section:
            section = bar.call.turn
            lines.append(f"    section Turn {section}")
        start, end = round(bar.start_ms - origin), round(bar.end_ms - origin)
        label = _mermaid_label(f"{bar.call.tool} {bar.call.what}")
        lines.append(f"    {label} :{_tag(bar.call)}, t{number}, {start}, {max(end, start + 1)}")
    return Chart(lines, len(chosen), len(bars), len(calls))


def _timed_bars(calls: list[ToolCallRecord]) -> list[_Bar]:
    bars = []
    for position, call in enumerate(calls):
        start = first_number(call.started_ms, call.finished_ms)
        if start == float("inf"):
            continue  # untimed: nothing places it
        end = max(start, first_number(call.finished_ms, start))
        bars.append(_Bar(call, position, start, end))
    return bars


def _chosen(bars: list[_Bar]) -> list[_Bar]:
    """All bars if they fit; else the first failed ones and the slowest of the rest,
    in the timeline's order (turn by turn, by time within a turn)."""
    if len(bars) > MAX_BARS:
        failed = [bar for bar in bars if bar.call.outcome != "ok"][:FAILED_BARS]
        kept = {bar.position for bar in failed}
        rest = sorted(
            (bar for bar in bars if bar.position not in kept),
            key=lambda bar: (-bar.length_ms, bar.position),
        )
        bars = failed + rest[: MAX_BARS - len(failed)]
    return sorted(bars, key=lambda bar: bar.position)


def _tag(call: ToolCallRecord) -> str:
    outcome = call.outcome
    return "done" if outcome == "ok" else "active" if outcome == "no result" else "crit"


def _mermaid_label(text: str) -> str:
    """`text` on one line, shortened, its Mermaid syntax written as entity codes, which
    Mermaid renders as the characters (`https#58;//` shows `https://`); prefixed with
    `tool` when Mermaid would read it as a statement."""
    label = clip(_SPACES.sub(" ", clip(text, 4 * _LABEL_CHARS)), _LABEL_CHARS).strip() or "tool"
    label = f"tool {label}" if _MERMAID_STATEMENT.match(label) else label
    return _MERMAID_SYNTAX.sub(lambda match: f"#{ord(match.group())};", label)
