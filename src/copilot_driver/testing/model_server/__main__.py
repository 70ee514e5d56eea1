"""`python -m copilot_driver.testing.model_server`: serve a script in the foreground."""

import sys

from copilot_driver.testing.model_server.server import main

sys.exit(main())
