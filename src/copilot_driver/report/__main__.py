"""`python -m copilot_driver.report`: see `copilot_driver.report.cli`."""

from copilot_driver.report.cli import run

run()
