"""Broken: ignores COPILOT_SDK_LOG_LEVEL (breaks T-CSD-004)."""

import os

from _wrap import run_real_driver

os.environ.pop("COPILOT_SDK_LOG_LEVEL", None)
run_real_driver()
