"""Broken: does not require COPILOT_CONNECTION_TOKEN (breaks T-CSD-003)."""

import os
import sys

from _wrap import run_real_driver

if not os.environ.get("COPILOT_CONNECTION_TOKEN"):
    print("no token, carrying on anyway")
    sys.exit(0)
run_real_driver()
