"""`python -m copilot_driver.report EVENTS_JSONL [--format text|markdown]` (or
`copilot-driver-report`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from copilot_driver import __version__
from copilot_driver.report.markdown import render_markdown
from copilot_driver.report.parse import load_timeline
from copilot_driver.report.text import render_text


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the report on stdout; 2 (one line on stderr) when the file is unreadable."""
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.report",
        description="Render a Copilot session's events file as a timeline.",
    )
    parser.add_argument("events", type=Path, metavar="EVENTS_JSONL")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument(
        "--version", action="version", version=f"copilot-driver-report {__version__}"
    )
    args = parser.parse_args(argv)
    try:
        timeline = load_timeline(args.events)
    except OSError as error:
        reason = error.strerror or str(error)
        sys.stderr.write(f"copilot-driver-report: error: cannot read {args.events}: {reason}\n")
        return 2
    render = render_markdown if args.format == "markdown" else render_text
    # JSON escapes can smuggle lone surrogates into strings: print them as `?`, never crash.
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(render(timeline).encode(encoding, "replace").decode(encoding))
    return 0


def run() -> NoReturn:
    """The process entry point (`python -m copilot_driver.report`, `copilot-driver-report`)."""
    sys.exit(main())
