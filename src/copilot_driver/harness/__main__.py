"""`python -m copilot_driver.harness`."""

import sys

from copilot_driver.harness.cli import main

sys.exit(main())
