"""`copilot-driver-harness [--copilot PATH] [--port N] [--ready-timeout S] [-- DRIVER ...]`."""

from __future__ import annotations

import argparse
import os
import sys

from copilot_driver.exit_codes import ExitCode
from copilot_driver.harness.run import Harness, HarnessOptions

DESCRIPTION = """\
Start the Copilot CLI sidecar with a fresh connection token, run the driver in
an environment without GitHub credentials, and clean up. The driver defaults
to this package's (`python -m copilot_driver`); give another after `--`.

exit status: the driver's; 2 usage error or no Copilot CLI found; 4 the
sidecar could not start; 5 the sidecar died while the driver was running.
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    driver_command: list[str] = [sys.executable, "-m", "copilot_driver"]
    if "--" in args:
        split = args.index("--")
        args, driver_command = args[:split], args[split + 1 :]
        if not driver_command:
            sys.stderr.write("[copilot-driver-harness] error: no driver command after `--`\n")
            return ExitCode.CONFIG
    parser = argparse.ArgumentParser(
        prog="copilot-driver-harness",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--copilot", metavar="PATH", help="the Copilot CLI binary")
    parser.add_argument("--port", type=_port, help="sidecar port on 127.0.0.1 (default: any)")
    parser.add_argument(
        "--ready-timeout",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long the sidecar may take to listen (default 60)",
    )
    try:
        options = parser.parse_args(args)
    except SystemExit as exit_request:  # --help (0) or a usage error (2)
        return ExitCode.CONFIG if exit_request.code else 0
    harness = Harness(
        HarnessOptions(options.copilot, options.port, options.ready_timeout, driver_command),
        os.environ,
    )
    return harness.run()


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0-3600]")
    return value
