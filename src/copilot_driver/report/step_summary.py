"""The harness's step summary: how the whole run went, then the session's timeline.

It renders for every run the harness can have: one that failed before any
session existed (no events file, so no timeline: the outcome alone), a
success, and a failure with a timeline. The OS sandbox (the outcome's, else the
one read from the session folder) comes before the session, and a run with the
sandbox off opens with a warning. It is always under
`STEP_SUMMARY_LIMIT` bytes of UTF-8, whatever it is given: every part is
capped (`markdown` caps the timeline's), and `limits.fit` checks the whole.
Control characters from the run are made visible (`inert_text`). Redaction is
the caller's job.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from copilot_driver.inert_text import visible_controls
from copilot_driver.report import summary
from copilot_driver.report.limits import STEP_SUMMARY_LIMIT, clip, fit
from copilot_driver.report.markdown import (
    TABLE_HEADER,
    cell,
    code,
    footer,
    policy_value,
    prose,
    sandbox_section,
    sandbox_warning,
    timeline_sections,
)
from copilot_driver.report.model import Timeline
from copilot_driver.report.sandbox import SandboxSummary
from copilot_driver.vocabulary import PolicyInForce

__all__ = ["STEP_SUMMARY_LIMIT", "Attempt", "RunOutcome", "render_step_summary"]

_TITLE_CHARS = 200
_MESSAGE_LINES = 40
_MESSAGE_CHARS = 4000
_ATTEMPTS_FIRST = 10
_ATTEMPTS_LAST = 10
_ATTEMPT_MESSAGE_CHARS = 300
_KIND_CHARS = 60
_BLOCK_START = re.compile(r"^(\s*)([#>+=-])")
"""A line starting like this would open a heading, a quote or a list: escaped."""


@dataclass(frozen=True)
class Attempt:
    """One try of the harness's run (it may retry transient failures)."""

    number: int
    """1-based."""
    exit_code: int
    error_kind: str | None
    message: str | None
    """One line: what went wrong (None on success)."""
    retry_in_s: float | None
    """The delay before the next try; None: no retry followed."""


@dataclass(frozen=True)
class RunOutcome:
    """What the harness knows of the whole run."""

    exit_code: int
    error_kind: str | None
    title: str | None
    """A short cause, e.g. "The Copilot CLI sidecar could not start"."""
    message: str | None
    """The cause and the fix; may be several lines."""
    attempts: tuple[Attempt, ...] = ()
    sandbox: SandboxSummary | None = None
    """The OS sandbox the tools ran in; None: the timeline's (`sandbox.json`), if any."""
    policy: PolicyInForce | None = None
    """The tool policy the run enforced; None: the timeline's (the events file's
    `policy.in_force` record, else result.json's), if any."""


def render_step_summary(outcome: RunOutcome, timeline: Timeline | None) -> str:
    """The run's outcome (and its attempts, if there were several), then the session's
    timeline when there is one; under `STEP_SUMMARY_LIMIT` bytes."""
    sandbox = outcome.sandbox
    if sandbox is None and timeline is not None:
        sandbox = timeline.sandbox
    warning = sandbox_warning(sandbox)
    policy = outcome.policy or (timeline.policy if timeline is not None else None)
    out = [
        _heading(outcome),
        *_outcome_table(outcome, policy),
        *_message(outcome.message),
        *([""] if warning else []),
        *warning,
        *_attempts(outcome.attempts),
        *sandbox_section(sandbox),
    ]
    if timeline is None:
        out += ["", "No session timeline: the run ended before the driver wrote an events file."]
        out += ["", f"<sub>{summary.REPORT_VERSION}.</sub>"]
    else:
        sections = timeline_sections(timeline, with_policy=False)
        out += ["", "### Session", "", *sections, "", footer(timeline)]
    return fit(visible_controls("\n".join(out) + "\n"), STEP_SUMMARY_LIMIT)


def _heading(outcome: RunOutcome) -> str:
    if outcome.exit_code == 0:
        return "## Copilot run succeeded"
    title = clip(outcome.title, _TITLE_CHARS) if outcome.title else ""
    return f"## Copilot run failed: {cell(title)}" if title else "## Copilot run failed"


def _outcome_table(outcome: RunOutcome, policy: PolicyInForce | None) -> list[str]:
    """Exit code, error kind, attempts (nothing to say of those for a success at the first
    try), and the tool policy in force."""
    rows = []
    if outcome.exit_code != 0 or outcome.error_kind or len(outcome.attempts) > 1:
        rows.append(("Exit code", summary.integer(outcome.exit_code)))
    if outcome.error_kind:
        rows.append(("Error kind", code(clip(outcome.error_kind, _KIND_CHARS))))
    if len(outcome.attempts) > 1:
        rows.append(("Attempts", f"{len(outcome.attempts):,}"))
    rows.append(("Policy", policy_value(policy)))
    return ["", TABLE_HEADER, "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]


def _message(message: str | None) -> list[str]:
    """The cause and the fix, quoted line by line; markdown in it shows as typed. Cut, as
    the answer is, after a whole word, saying how much is not shown."""
    if not message or not message.strip():
        return []
    kept, left_out = summary.cut_text(message.strip("\r\n"), _MESSAGE_LINES, _MESSAGE_CHARS)
    quoted = [_quoted(line) for line in kept.split("\n")]
    if not left_out:
        return ["", *quoted]
    note = f"> _(message cut: {summary.cut_phrase(left_out)})_"
    return ["", *quoted[:-1], f"{quoted[-1]} …", ">", note]


def _quoted(line: str) -> str:
    escaped = _BLOCK_START.sub(r"\1\\\2", prose(line))
    return f"> {escaped}".rstrip()


def _attempts(attempts: tuple[Attempt, ...]) -> list[str]:
    """A table of the tries, when there was more than one: the first and last few."""
    if len(attempts) < 2:
        return []
    out = [
        "",
        "### Attempts",
        "",
        "| Attempt | Exit code | Error kind | What went wrong | Next try |",
        "|---:|---:|---|---|---|",
    ]
    if len(attempts) <= _ATTEMPTS_FIRST + _ATTEMPTS_LAST:
        return out + [_attempt_row(attempt) for attempt in attempts]
    left_out = len(attempts) - _ATTEMPTS_FIRST - _ATTEMPTS_LAST
    out += [_attempt_row(attempt) for attempt in attempts[:_ATTEMPTS_FIRST]]
    out.append(f"| | | | _{left_out:,} attempts not shown_ | |")
    return out + [_attempt_row(attempt) for attempt in attempts[-_ATTEMPTS_LAST:]]


def _attempt_row(attempt: Attempt) -> str:
    kind = cell(clip(attempt.error_kind, _KIND_CHARS)) if attempt.error_kind else "-"
    if attempt.message:
        what = prose(clip(attempt.message, _ATTEMPT_MESSAGE_CHARS), in_table=True)
    else:
        what = "succeeded" if attempt.exit_code == 0 else "-"
    return (
        f"| {summary.integer(attempt.number)} | {summary.integer(attempt.exit_code)} | {kind} "
        f"| {what} | {_retry(attempt.retry_in_s)} |"
    )


def _retry(seconds: float | None) -> str:
    ms = seconds * 1000 if seconds is not None else math.nan
    if not (math.isfinite(ms) and ms >= 0):
        return "-"
    return f"in {clip(summary.duration(ms), 24)}"
