"""The run report: a session's events file rendered as a timeline people read.

`copilot-driver-report PATH [--format text|markdown]` (or `python -m
copilot_driver.report`), PATH being an events file, a session folder, a file beside
the events file (`result.json`), or a folder of sessions (the newest is reported).

- It reads only the events file (spec 3.3), and the `result.json` and the
  harness's `sandbox.json` beside it, never the driver's logs or the SDK, so it
  also reports on files written by other conforming drivers, and on files from
  runs that crashed half-way.
- A report is most needed when a run went wrong, so parsing never raises on
  content (`parse`); only an unreadable *file* is an error, and, for the command,
  a file in which no line is an event record (`cli`).
- Permission requests are named by `permissions.summary.summarise`, exactly as
  the denial logs name them (URL queries dropped).

`parse` builds the `model` from the file's lines (`usage` reads the shutdown
record and `result.json`, `sandbox` the harness's `sandbox.json`); `text` and
`markdown` render it, sharing the phrases of `summary`, the markdown with a
`gantt` chart and within `limits`;
`step_summary` wraps the markdown in the harness's account of the whole run;
`policy` words the policy in force and `markdown_text` writes run text as markdown
that renders as the text; `cli` is the command, and `resolve` finds the events
file its PATH means.
"""

from copilot_driver.report.limits import STEP_SUMMARY_LIMIT
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.model import (
    GuardStop,
    Notice,
    PermissionRecord,
    Timeline,
    ToolCallRecord,
    Turn,
)
from copilot_driver.report.parse import events_file, load_timeline, parse_timeline
from copilot_driver.report.sandbox import (
    SANDBOX_FILE,
    SandboxSummary,
    read_sandbox_file,
    sandbox_record,
)
from copilot_driver.report.step_summary import Attempt, RunOutcome, render_step_summary
from copilot_driver.report.summary import REPORT_VERSION
from copilot_driver.report.text import render_text
from copilot_driver.report.usage import ModelUsage, Usage
from copilot_driver.vocabulary import RunResult, read_result

__all__ = [
    "REPORT_VERSION",
    "SANDBOX_FILE",
    "STEP_SUMMARY_LIMIT",
    "Attempt",
    "GuardStop",
    "ModelUsage",
    "Notice",
    "PermissionRecord",
    "RunOutcome",
    "RunResult",
    "SandboxSummary",
    "Timeline",
    "ToolCallRecord",
    "Turn",
    "Usage",
    "events_file",
    "load_timeline",
    "parse_timeline",
    "read_result",
    "read_sandbox_file",
    "render_markdown",
    "render_step_summary",
    "render_text",
    "sandbox_record",
]
