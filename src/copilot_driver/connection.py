"""The SDK connection boundary: the only module that builds an SDK client.

Importing the SDK costs most of a second, so it happens here, after the
configuration has been validated (the CLI never imports this module for a
run that fails validation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from copilot_driver.config import DriverConfig

if TYPE_CHECKING:
    from copilot import CopilotClient


def create_client(config: DriverConfig) -> CopilotClient:
    """A client for the harness-managed sidecar at `config.sdk_uri`.

    Uses only COPILOT_CONNECTION_TOKEN to authenticate (spec 4.2): no GitHub
    platform token is passed or looked up.
    """
    from copilot import CopilotClient, RuntimeConnection

    return CopilotClient(
        connection=RuntimeConnection.for_uri(
            config.sdk_uri, connection_token=config.connection_token
        ),
        working_directory=str(config.working_directory),
        log_level=config.log_level,
    )
