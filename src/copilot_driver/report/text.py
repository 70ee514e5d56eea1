"""The report as plain text: what `python -m copilot_driver.report` prints by default."""

from __future__ import annotations

import textwrap

from copilot_driver.formatting import shorten
from copilot_driver.inert_text import visible_controls
from copilot_driver.report import policy, summary
from copilot_driver.report.limits import clip
from copilot_driver.report.markdown_text import quoted_values
from copilot_driver.report.model import PermissionRecord, Timeline, Turn
from copilot_driver.report.sandbox import SandboxSummary

_WIDTH = 96
"""Text lines stay within this many columns (a 100-column terminal, with margin)."""
_ANSWER_LINES = 20
_ANSWER_CHARS = 1500
"""The answer's room in a terminal: about a screen, wrapped."""
_FILES_LISTED = 20
_TOTALS = " " * 15
"""The indentation of a totals value."""
NO_EVENTS_SAID = (
    "No events yet: the file holds no event record (a run still starting, or one that "
    "stopped before its session began, has written none)."
)
_PATH_CHARS = 1000
_FENCES = ("```", "~~~")
_CODE_INDENTS = ("    ", "\t")
"""A markdown code block's lines: shown as written, never wrapped."""
_GLUE = "\ue000"
"""Holds a quoted value's words together while the answer is wrapped (textwrap breaks
only at ASCII whitespace); a private-use character no answer is expected to hold."""
ALLOWED_BY = "the rule that would allow it:"
"""Ends a denial's reason; the rule follows on a line of its own."""


def render_text(timeline: Timeline) -> str:
    """For a terminal: plain ASCII, one line per tool call, within ~96 columns; the run's
    control characters made visible (`inert_text.visible_controls`)."""
    out = _header(timeline) + _sandbox_lines(timeline.sandbox)
    tool_width = min(18, max((len(call.tool) for call in timeline.tool_calls), default=4))
    widest = max((len(call.what) for call in timeline.tool_calls), default=0)
    what_width = max(8, min(_WIDTH - 34 - tool_width, widest))
    for turn in timeline.turns:
        out += _turn_lines(timeline, turn, tool_width, what_width)
    if timeline.notices:
        out += ["", "Notable events:"]
        for notice in timeline.notices:
            at = summary.offset(timeline, notice.at_ms)
            first = f"  {at:>8}  {notice.kind.upper()}: {notice.message}"
            out += textwrap.wrap(first, _WIDTH, subsequent_indent=" " * 12, max_lines=3)
    out += _answer_lines(timeline.final_answer)
    counts = summary.counts(timeline)
    out += [
        "",
        "Totals:",
        f"  tool calls   {summary.calls_phrase(counts)}",
        f"  permissions  {summary.permissions_phrase(counts)}",
        f"  turns        {len(timeline.turns)} ({counts['rounds']} model rounds)",
        f"  duration     {summary.times_phrase(timeline)}",
        *_usage_lines(timeline),
        f"  input        {summary.input_phrase(timeline)}",
    ]
    out += [f"  other        {phrase}" for phrase in summary.other_phrases(timeline)]
    out.append(f"  format       {summary.REPORT_VERSION}")
    # Every string from the run shown, never acted on by a terminal (ESC sequences).
    return visible_controls("\n".join(out) + "\n")


def _usage_lines(timeline: Timeline) -> list[str]:
    """Tokens per model, premium requests, and the files changed (the first few named)."""
    usage = timeline.usage
    if usage is None:
        return ["  usage        unknown (no session.shutdown)"]
    out = [
        _fit("  usage        " if i == 0 else _TOTALS, f"{m.model}: {summary.tokens_phrase(m)}")
        for i, m in enumerate(usage.models)
    ] or ["  usage        no model requests"]
    out.append(f"  premium      {summary.number(usage.premium_requests)} requests")
    changes = summary.changes_phrase(usage)
    if changes is not None:
        out.append(f"  changed      {changes} {summary.CHANGED_BY}")
        files = usage.files_modified or ()
        out += [
            _fit(_TOTALS + "  ", summary.changed_file(timeline, name))
            for name in files[:_FILES_LISTED]
        ]
        if len(files) > _FILES_LISTED:
            out.append(f"{_TOTALS}  ... and {len(files) - _FILES_LISTED} more")
        out.append(_TOTALS + summary.unlisted_changes(timeline))
    return out


def _header(timeline: Timeline) -> list[str]:
    """The session, where and when it ran, and its outcome."""
    out = [_fit("Copilot session ", summary.session_label(timeline))]
    details = [
        f"CLI {timeline.copilot_version}" if timeline.copilot_version else "",
        f"model {timeline.model}" if timeline.model else "",
    ]
    if any(details):
        out.append(_fit("  ", ", ".join(d for d in details if d)))
    if timeline.cwd:  # whole: the changed files are named relative to it
        out.append(f"  cwd          {clip(timeline.cwd, _PATH_CHARS)}")
    out.append(f"  started      {summary.clock(timeline.start_ms)}")
    span = summary.duration(timeline.duration_ms)
    out.append(f"  event span   {span}, {summary.SPAN_MEANING}")
    driver_time = summary.driver_time_phrase(timeline)
    if driver_time is not None:
        out.append(f"  driver time  {driver_time}, {summary.DRIVER_TIME_MEANING}")
    out.append(_fit("  outcome      ", timeline.outcome))
    if timeline.result is not None:
        error = summary.error_text(timeline.result)
        exit_line = f"  exit code    {summary.exit_phrase(timeline.result)}"
        out.append(_fit(exit_line + ": ", error) if error else exit_line)
    out += _policy_lines(timeline)
    if not timeline.events:
        out += ["", *textwrap.wrap(NO_EVENTS_SAID, _WIDTH)]
    return out


def _policy_lines(timeline: Timeline) -> list[str]:
    """What the policy approved, then its rules one a line, each whole (never wrapped,
    so that it can be copied)."""
    headline = f"  policy       {policy.headline(timeline.policy)}"
    out = textwrap.wrap(
        headline, _WIDTH, subsequent_indent=_TOTALS, break_long_words=False, break_on_hyphens=False
    )
    return out + [f"{_TOTALS}  {kind:<6} {rule}" for kind, rule in policy.rules(timeline.policy)]


def _sandbox_lines(sandbox: SandboxSummary | None) -> list[str]:
    """The mode (and a warning when it was off), the hosts the egress proxy allows, the
    variables passed, the connections it let through and refused per host, and what was
    done to the git control files a tool wrote."""
    if sandbox is None:
        return []
    out = ["", f"Sandbox: {summary.sandbox_mode(sandbox)}"]
    if sandbox.off:
        warning = f"  WARNING: {summary.SANDBOX_OFF_WARNING}"
        out += textwrap.wrap(warning, _WIDTH, subsequent_indent=" " * 11)
    if sandbox.allowed_hosts or not sandbox.off:
        out += _names_lines("  allowed hosts  ", sandbox.allowed_hosts, "hosts")
    if sandbox.passed_env:
        out += _names_lines("  passed env     ", sandbox.passed_env, "variables")
    out += _connection_lines("  egress allowed ", sandbox.egress_allowed, sandbox.off)
    out += _connection_lines("  egress denied  ", sandbox.egress_denied, sandbox.off)
    for i, done in enumerate(sandbox.git_neutralised[: summary.SANDBOX_LISTED]):
        prefix = "  git controls   " if i == 0 else " " * 17
        out += textwrap.wrap(done, _WIDTH, initial_indent=prefix, subsequent_indent=" " * 19)
    if len(sandbox.git_neutralised) > summary.SANDBOX_LISTED:
        more = len(sandbox.git_neutralised) - summary.SANDBOX_LISTED
        out.append(f"{' ' * 17}... and {more:,} more")
    return out


def _connection_lines(label: str, counts: tuple[tuple[str, int], ...], off: bool) -> list[str]:
    """One line per host, the busiest few, with their connections; `none` in the sandbox,
    nothing without it (there was no proxy)."""
    if not counts:
        return [] if off else [f"{label}none"]
    listed = counts[: summary.SANDBOX_LISTED]
    width = max(len(summary.number(count)) for _, count in listed)
    out = []
    for i, (host, count) in enumerate(listed):
        prefix = label if i == 0 else _TOTALS + "  "
        out.append(_fit(f"{prefix}{summary.number(count):>{width}}  ", summary.sandbox_name(host)))
    if len(counts) > summary.SANDBOX_LISTED:
        out.append(f"{_TOTALS}  ... and {len(counts) - summary.SANDBOX_LISTED:,} more hosts")
    return out


def _names_lines(prefix: str, names: tuple[str, ...], what: str) -> list[str]:
    """`a, b, c` wrapped under `prefix`, the first few only; `none` for none."""
    listed = [summary.sandbox_name(name) for name in names[: summary.SANDBOX_LISTED]]
    if len(names) > summary.SANDBOX_LISTED:
        listed.append(f"... and {len(names) - summary.SANDBOX_LISTED:,} more {what}")
    text = prefix + (", ".join(listed) if listed else "none")
    indent = " " * len(prefix)
    return textwrap.wrap(
        text, _WIDTH, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
    )


def _turn_lines(timeline: Timeline, turn: Turn, tool_width: int, what_width: int) -> list[str]:
    """The prompt, a line per tool call (its permissions below it), the model rounds."""
    prompt = turn.prompt if turn.prompt is not None else "(no prompt)"
    out = ["", _fit(f"Turn {turn.index}: ", prompt)]
    for call in turn.tool_calls:
        tool = shorten(call.tool, tool_width)
        what = shorten(call.what, what_width)
        at = summary.offset(timeline, call.started_ms)
        duration = summary.duration(call.duration_ms)
        line = f"  {at:>8}  {tool:<{tool_width}}  {what:<{what_width}}  {call.outcome:<9}"
        out.append(f"{line} {duration:>8}" if call.completed else line.rstrip())
        if call.outcome == "FAILED" and call.error:
            out.append(_fit("            error: ", call.error))
        for permission in call.permissions:
            out += _permission_lines(" " * 12, permission)
    attached = {id(p) for call in turn.tool_calls for p in call.permissions}
    for permission in turn.permissions:
        if id(permission) not in attached:
            at = summary.offset(timeline, permission.requested_ms or permission.decided_ms)
            out += _permission_lines(f"  {at:>8}  permission  ", permission)
    if not turn.tool_calls and not turn.permissions:
        out.append("  (no tool calls)")
    out.append(f"  {turn.rounds} model round{'' if turn.rounds == 1 else 's'}")
    if turn.answer and turn is not timeline.turns[-1]:
        out.append(_words("  answer: ", turn.answer))
    return out


def _answer_lines(answer: str | None) -> list[str]:
    """The final answer line for line, blank lines kept, its prose wrapped within the width
    but never inside a word, a backtick-quoted value or a code block (a command there
    copies whole); when longer than the room, cut after a whole word, with `...` and how
    much is not shown."""
    out = ["", "Final answer:" if answer else "Final answer: (none)"]
    if not answer:
        return out
    kept, left_out = summary.cut_text(answer, _ANSWER_LINES, _ANSWER_CHARS)
    in_fence = False
    for line in kept.split("\n"):
        fence = line.lstrip().startswith(_FENCES)
        if in_fence or fence or line.startswith(_CODE_INDENTS):
            out.append(f"  {line}".rstrip())
        else:
            out += _prose_lines(line)
        in_fence = in_fence != fence
    if left_out:
        out[-1] += " ..."
        out.append(f"  (answer cut: {summary.cut_phrase(left_out)})")
    return out


def _prose_lines(line: str) -> list[str]:
    """One line of the answer wrapped at spaces, a backtick-quoted value kept on one line
    (its spaces are glued while wrapping); a blank line stays a blank line."""
    glued = line
    if _GLUE not in line:
        glued = "".join(
            plain + (f"`{value.replace(' ', _GLUE)}`" if value is not None else "")
            for plain, value in quoted_values(line)
        )
    wrapped = textwrap.wrap(
        glued,
        _WIDTH,
        initial_indent="  ",
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [part.replace(_GLUE, " ") for part in wrapped] or [""]


def _fit(prefix: str, text: str, width: int = _WIDTH) -> str:
    """`prefix` kept as is (indentation), `text` flattened to one line and shortened."""
    return prefix + shorten(text, max(12, width - len(prefix)))


def _words(prefix: str, text: str) -> str:
    """`prefix` and `text` on one line, cut after a whole word with `...` when too long:
    a model's prose cut mid-word reads as a typo."""
    room = max(12, _WIDTH - len(prefix) - 4)
    kept, left_out = summary.cut_text(" ".join(text.split()), 1, room)
    return prefix + kept + (" ..." if left_out else "")


def _permission_lines(prefix: str, permission: PermissionRecord) -> list[str]:
    """`approved shell(git --version)`; below a denial, the policy's reason and the rule
    that would allow it on a line of its own, never wrapped (it is there to be copied),
    or (from other drivers) the runtime's feedback if long."""
    line = _fit(prefix, f"{permission.verdict} {permission.summary}")
    if permission.policy is not None:
        rule = summary.allow_rule(permission.policy)
        indent = " " * (len(prefix) + 2)
        allow = ALLOWED_BY if rule else summary.no_rule_phrase(permission.policy)
        because = f"{indent}{summary.denial_reason(permission.policy)}; {allow}"
        wrapped = textwrap.wrap(
            because,
            _WIDTH,
            subsequent_indent=indent + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        return [line, *wrapped, *([f"{indent}  {rule}"] if rule else [])]
    if not (permission.denied and permission.feedback):
        return [line]
    feedback = " ".join(permission.feedback.split())
    if len(line) + 2 + len(feedback) <= _WIDTH:
        return [f"{line}: {feedback}"]
    return [line, _fit(" " * (len(prefix) + 2) + "feedback: ", feedback)]
