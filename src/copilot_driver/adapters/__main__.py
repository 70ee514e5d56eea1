"""`python -m copilot_driver.adapters`: see `cli.py`."""

import sys

from copilot_driver.adapters.cli import main

sys.exit(main())
