"""`python -m copilot_driver.report PATH [--format text|markdown]` (or
`copilot-driver-report`): PATH is an events file or a session folder holding one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from copilot_driver import __version__, records
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.parse import events_file, load_timeline
from copilot_driver.report.text import render_text

_PROG = "copilot-driver-report"


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report on stdout; 2 (one line on stderr) when there is no events
    file to read."""
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.report",
        description=(
            "Render a Copilot session's events file as a timeline. PATH is the events "
            f"file or the session folder holding it ({records.EVENTS_FILE_NAME}, with "
            "result.json beside it when the driver wrote one)."
        ),
    )
    parser.add_argument("path", type=Path, metavar="PATH")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    args = parser.parse_args(argv)
    path: Path = args.path
    events = events_file(path)
    if path.is_dir() and not events.is_file():
        _error(f"{path} is a folder without {records.EVENTS_FILE_NAME} (expected {events})")
        return 2
    try:
        timeline = load_timeline(events)
    except OSError as error:
        _error(f"cannot read {events}: {error.strerror or error}")
        return 2
    render = render_markdown if args.format == "markdown" else render_text
    # JSON escapes can smuggle lone surrogates into strings: print them as `?`, never crash.
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(render(timeline).encode(encoding, "replace").decode(encoding))
    return 0


def _error(message: str) -> None:
    sys.stderr.write(f"{_PROG}: error: {' '.join(message.split())}\n")


def run() -> NoReturn:
    """The process entry point (`python -m copilot_driver.report`, `copilot-driver-report`)."""
    sys.exit(main())
