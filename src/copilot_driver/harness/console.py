"""The harness's voice on stderr: its own lines and its GitHub Actions workflow commands.

Everything is written around the live status line (`progress.StatusLine`),
which is cleared first. The harness's own lines carry its prefix and, like the
driver's log lines it shows, have the run's secrets masked and are inert
(`inert_text`: no control character a terminal acts on, no workflow command
the runner reads, but for the driver's own annotations); workflow commands
(annotations, log groups, the token's mask) are written only under GitHub
Actions, where the runner reads them.
"""

from __future__ import annotations

from copilot_driver import workflow_commands
from copilot_driver.command_line import error_line
from copilot_driver.harness.progress import StatusLine
from copilot_driver.inert_text import inert_line, inert_log
from copilot_driver.redaction import Redactor

COMMAND = "copilot-driver-harness"
PREFIX = f"[{COMMAND}]"


class Console:
    """The harness's stderr, shared by the run and its account."""

    def __init__(self, status: StatusLine, *, in_actions: bool) -> None:
        self.status = status
        self.in_actions = in_actions
        self.redactor = Redactor()
        """Masks the run's secrets; replaced once the run's token exists."""

    def say(self, message: str) -> None:
        """One line of the harness's own, prefixed."""
        self.status.print_line(inert_log(f"{PREFIX} {self.redactor.text(message)}"))

    def error(self, message: str) -> None:
        """One error line, in the form every command of the package writes
        (`command_line.error_line`): `[copilot-driver-harness] error: ...`."""
        self.status.print_line(error_line(COMMAND, self.redactor.text(message)))

    def show(self, line: str) -> None:
        """One line of someone else's (the driver's log), as it is but for what a terminal
        or the runner would act on (`inert_text.inert_line`)."""
        self.status.print_line(inert_line(self.redactor.text(line)))

    def command(self, text: str) -> None:
        """A workflow command (`workflow_commands`), written only under GitHub Actions."""
        if self.in_actions:
            self.status.write_raw(text)

    def annotate(self, level: str, title: str, message: str) -> None:
        """A `::warning`/`::error` annotation, only under GitHub Actions."""
        self.command(workflow_commands.annotation(level, title, message))
