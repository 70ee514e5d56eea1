"""Broken: ignores COPILOT_SDK_SEND_TIMEOUT_MS, always waits 600000 ms (breaks T-CSD-006)."""

import os

from _wrap import run_real_driver

os.environ.pop("COPILOT_SDK_SEND_TIMEOUT_MS", None)
run_real_driver()
