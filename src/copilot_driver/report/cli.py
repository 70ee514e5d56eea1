"""`copilot-driver-report PATH [--format text|markdown]` (or `python -m
copilot_driver.report`): PATH is an events file, a session folder holding one, a
file beside one (`result.json`, `sandbox.json`), or a state folder holding session
folders (the newest is reported)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from copilot_driver import __version__, vocabulary
from copilot_driver.command_line import CommandParser, refuse
from copilot_driver.env import in_github_actions
from copilot_driver.inert_text import inert, inert_log
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.model import Timeline
from copilot_driver.report.parse import load_timeline
from copilot_driver.report.resolve import GIVE_EVENTS, Resolved, resolve_events
from copilot_driver.report.text import render_text
from copilot_driver.runner_reads import runner_may_read

_PROG = "copilot-driver-report"
_DESCRIPTION = (
    "Render a Copilot session's events file as a timeline: each turn's prompt, every tool "
    "call and permission decision, what stopped the session, the final answer, usage, and "
    "how the driver ended."
)
_PATH_HELP = (
    f"the session's {vocabulary.EVENTS_FILE_NAME}; or its session folder; or a file beside it "
    f"(result.json, sandbox.json: the {vocabulary.EVENTS_FILE_NAME} beside it is read); or a "
    "folder of session folders (the newest session, by its events file's modification "
    "time, is reported, and stderr names it and the others)"
)
_FORMAT_HELP = (
    "text (the default): plain ASCII for a terminal; markdown: GitHub markdown with tables "
    "and a Mermaid gantt chart of the tool calls, for a job's step summary"
)


_EPILOG = (
    "Exit status: 0 with the report on stdout (an empty events.jsonl, a run that has "
    "written no event yet, is reported as such); 2, with one error line on stderr, when "
    "there is no events file to read, or PATH is not one (no line of it is an event record: "
    "a JSON object with a `type`)."
)


def _parser() -> CommandParser:
    parser = CommandParser(prog=_PROG, description=_DESCRIPTION, epilog=_EPILOG)
    parser.add_argument("path", type=Path, metavar="PATH", help=_PATH_HELP)
    parser.add_argument("--format", choices=("text", "markdown"), default="text", help=_FORMAT_HELP)
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report on stdout (and a note on stderr when PATH was not the events
    file itself, or when lines of it were skipped); 2 (one line on stderr) when there is
    no events file to read, or PATH is not one."""
    args = _parser().parse_args(argv)
    resolved = resolve_events(args.path)
    if isinstance(resolved, str):
        return refuse(_PROG, resolved)
    try:
        timeline = load_timeline(resolved.events)
    except OSError as error:
        why = error.strerror or error
        return refuse(_PROG, f"cannot read {resolved.events}: {why}; {GIVE_EVENTS}")
    not_events = _not_events(resolved.events, timeline)
    if not_events is not None:
        return refuse(_PROG, not_events)
    _notes(resolved, timeline)
    render = render_markdown if args.format == "markdown" else render_text
    # JSON escapes can smuggle lone surrogates into strings: print them as `?`, never crash.
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    # What the run said is shown, never acted on by a terminal or the Actions runner.
    read = runner_may_read(sys.stdout, in_actions=in_github_actions(os.environ))
    shown = inert(render(timeline), in_actions=read)
    sys.stdout.write(shown.encode(encoding, "replace").decode(encoding))
    return 0


def _not_events(path: Path, timeline: Timeline) -> str | None:
    """Why the file read is not an events file, or None when it is one. A file with lines
    none of which is an event record is refused; so is an empty one, unless it is named
    as the events file a run writes (one that has written nothing yet), which the report
    shows as such."""
    if timeline.events:
        return None
    if timeline.skipped:
        first = timeline.skip_examples[0] if timeline.skip_examples else ""
        lines = f"none of its {timeline.skipped:,} lines is"
        return (
            f"{path} is not an events file: "
            f"{'its only line is not' if timeline.skipped == 1 else lines} an event record "
            f"(a JSON object with a `type`; {first}); {GIVE_EVENTS}"
        )
    if path.name == vocabulary.EVENTS_FILE_NAME:
        return None
    return f"{path} is empty, not an events file; {GIVE_EVENTS}"


def _notes(resolved: Resolved, timeline: Timeline) -> None:
    """On stderr, so that stdout stays the report alone (a redirect gets just the report)."""
    notes = list(resolved.notes)
    if timeline.skipped:
        skipped = f"{timeline.skipped:,} of its {timeline.lines:,} lines"
        are = (
            "is not an event record and was"
            if timeline.skipped == 1
            else ("are not event records and were")
        )
        notes.append(
            f"{resolved.events}: {skipped} {are} skipped "
            f"({'; '.join(timeline.skip_examples)}); the report shows the rest"
        )
    elif not timeline.events:
        notes.append(f"{resolved.events} is empty: the run had written no event yet")
    for line in notes:
        sys.stderr.write(inert_log(f"[{_PROG}] note: {line}") + "\n")


def run() -> NoReturn:
    """The process entry point (`python -m copilot_driver.report`, `copilot-driver-report`)."""
    sys.exit(main())
