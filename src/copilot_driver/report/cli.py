"""`copilot-driver-report PATH [--format text|markdown]` (or `python -m
copilot_driver.report`): PATH is an events file, a session folder holding one, a
file beside one (`result.json`, `sandbox.json`), or a state folder holding session
folders (the newest is reported)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from copilot_driver import __version__, vocabulary
from copilot_driver.env import in_github_actions
from copilot_driver.inert_text import inert, inert_log
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.parse import load_timeline
from copilot_driver.report.resolve import Resolved, resolve_events
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog="Exit status: 0 with the report on stdout; 2 when there is no events file to read.",
    )
    parser.add_argument("path", type=Path, metavar="PATH", help=_PATH_HELP)
    parser.add_argument("--format", choices=("text", "markdown"), default="text", help=_FORMAT_HELP)
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report on stdout (and a note on stderr when PATH was not the events
    file itself); 2 (one line on stderr) when there is no events file to read."""
    args = _parser().parse_args(argv)
    resolved = resolve_events(args.path)
    if isinstance(resolved, str):
        _error(resolved)
        return 2
    _notes(resolved)
    try:
        timeline = load_timeline(resolved.events)
    except OSError as error:
        _error(f"cannot read {resolved.events}: {error.strerror or error}")
        return 2
    render = render_markdown if args.format == "markdown" else render_text
    # JSON escapes can smuggle lone surrogates into strings: print them as `?`, never crash.
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    # What the run said is shown, never acted on by a terminal or the Actions runner.
    read = runner_may_read(sys.stdout, in_actions=in_github_actions(os.environ))
    shown = inert(render(timeline), in_actions=read)
    sys.stdout.write(shown.encode(encoding, "replace").decode(encoding))
    return 0


def _notes(resolved: Resolved) -> None:
    """On stderr, so that stdout stays the report alone (a redirect gets just the report)."""
    for line in resolved.notes:
        sys.stderr.write(inert_log(f"{_PROG}: note: {line}") + "\n")


def _error(message: str) -> None:
    sys.stderr.write(inert_log(f"{_PROG}: error: {' '.join(message.split())}") + "\n")


def run() -> NoReturn:
    """The process entry point (`python -m copilot_driver.report`, `copilot-driver-report`)."""
    sys.exit(main())
