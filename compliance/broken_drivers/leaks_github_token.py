"""Broken: reads GITHUB_TOKEN and prints it (breaks T-CSD-008)."""

import os
import sys

from _wrap import run_real_driver

if os.environ.get("GITHUB_TOKEN"):
    sys.stderr.write(f"[broken-driver] found GITHUB_TOKEN={os.environ['GITHUB_TOKEN']}\n")
    sys.stderr.flush()
run_real_driver()
