"""copilot-driver: a standalone GitHub Copilot SDK driver for automated workflows.

The driver (`python -m copilot_driver`) reads its configuration from the
environment, connects to a harness-managed Copilot CLI sidecar, sends one
prompt, and leaves an audit trail (lifecycle logs on stderr, session events
as JSON Lines). This module stays import-light: the CLI imports it before
the configuration is validated.
"""

__version__ = "0.1.0"

LOG_PREFIX = "[copilot-sdk-driver]"
"""The prefix of every plain-text line the driver writes (spec section 6.4)."""
