"""`python -m copilot_driver`: the standalone driver."""

from copilot_driver.cli import run

run()
