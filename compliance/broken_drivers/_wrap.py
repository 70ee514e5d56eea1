"""Shared by the broken drivers: run this project's (conforming) driver."""

import os
import sys


def run_real_driver() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "copilot_driver"])  # noqa: S606
