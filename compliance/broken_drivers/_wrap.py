"""Shared by the broken drivers: run this project's (conforming) driver."""

import os
import sys


def run_real_driver() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "copilot_driver"])  # noqa: S606


def run_real_driver_in_process() -> None:
    """Run the driver in this process, after the caller has patched it."""
    from copilot_driver.cli import main

    sys.exit(main())
