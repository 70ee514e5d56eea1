"""Broken: its events never reach the session-state folder (breaks T-CSD-201)."""

import os
import tempfile

from _wrap import run_real_driver

os.environ["GH_AW_SESSION_STATE_BASE_DIR"] = tempfile.mkdtemp(prefix="broken-events-")
run_real_driver()
