"""Broken: its events never reach the session-state folder (breaks T-CSD-201)."""

import os
import subprocess
import sys
import tempfile

# The real driver, writing its events into a folder of its own (removed afterwards).
with tempfile.TemporaryDirectory(prefix="broken-events-") as elsewhere:
    os.environ["GH_AW_SESSION_STATE_BASE_DIR"] = elsewhere
    sys.exit(subprocess.call([sys.executable, "-m", "copilot_driver"]))
