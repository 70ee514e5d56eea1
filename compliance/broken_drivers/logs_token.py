"""Broken: logs the connection token (breaks T-CSD-007)."""

import os
import sys

from _wrap import run_real_driver

sys.stderr.write(f"[broken-driver] debug: token={os.environ.get('COPILOT_CONNECTION_TOKEN')}\n")
sys.stderr.flush()
run_real_driver()
