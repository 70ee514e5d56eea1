"""The Copilot CLI versions this package is tested with; pure, imports nothing.

The Makefile provisions `RECOMMENDED_CLI_VERSION` (its `COPILOT_CLI_VERSION`; a test
keeps the two equal), and error messages name it when they say what to install.
"""

from __future__ import annotations

TESTED_CLI_VERSIONS: tuple[str, ...] = ("1.0.102",)
"""Copilot CLI versions the test suite runs against, oldest first."""

RECOMMENDED_CLI_VERSION = TESTED_CLI_VERSIONS[-1]
"""The version to install: the newest one tested."""
