"""`python -m copilot_driver`: the standalone driver."""

import sys

from copilot_driver.cli import main

sys.exit(main())
