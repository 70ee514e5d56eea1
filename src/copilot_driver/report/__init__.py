"""The run report: a session's events file rendered as a timeline people read.

`python -m copilot_driver.report EVENTS_JSONL [--format text|markdown]`

- It reads only the events file (spec 3.3), never the driver's logs or the
  SDK, so it also reports on files written by other conforming drivers, and
  on files from runs that crashed half-way.
- A report is most needed when a run went wrong, so parsing never raises on
  content (`parse`); only an unreadable *file* is an error.
- Permission requests are named by `permissions.summary.summarise`, exactly as
  the denial logs name them (URL queries dropped).

`parse` builds the `model` from the file's lines; `text` and `markdown` render
it, sharing the phrases of `summary`; `cli` is the command.
"""

from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.model import (
    GuardStop,
    Notice,
    PermissionRecord,
    Timeline,
    ToolCallRecord,
    Turn,
)
from copilot_driver.report.parse import load_timeline, parse_timeline
from copilot_driver.report.text import render_text

__all__ = [
    "GuardStop",
    "Notice",
    "PermissionRecord",
    "Timeline",
    "ToolCallRecord",
    "Turn",
    "load_timeline",
    "parse_timeline",
    "render_markdown",
    "render_text",
]
