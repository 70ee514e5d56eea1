"""The lifecycle's SDK boundary: every SDK call a run makes, and what its failures mean.

The lifecycle does not call the SDK's client or session itself: `SdkClient` and
`SdkSession` make each call. A call the run's outcome depends on (start, create
the session, send the prompt) raises the driver's own error when the SDK's
failure is one the driver recognises (`sdk_failure`: the SdkError classes of
failures.py), and the SDK's exception unchanged otherwise. The cleanup calls
(abort, disconnect, stop) are handed over as the SDK's awaitables: their
failures are only logged, in the SDK's own words.

The SDK is recognised by type where it raises a type of its own:
`JsonRpcError` (its `.code`) for a refused handshake, `ProcessExitedError` for
a transport that closed, and the socket's OSError (ECONNREFUSED) for a
sidecar that is not listening. Its other failures are plain `Exception`s and
`RuntimeError`s told apart by their text only; each text matched below names
the SDK code that raises it (github-copilot-sdk 1.0.13 to 1.0.27,
`compatibility.TESTED_SDK_VERSIONS`). When the SDK's error matches more than one,
the first of: authentication, session error, closed connection, refused.

Importing the SDK costs most of a second; this module imports it only where
a client exists (connection.py builds it), never at import time.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from copilot_driver.driver.account import CatalogModel
from copilot_driver.driver.connection import is_connected, release_transport
from copilot_driver.driver.failures import (
    AUTHENTICATION_CODES,
    CatalogUnreadableError,
    SdkError,
    SessionFailedError,
    SidecarAuthError,
    SidecarDisconnectedError,
    SidecarRefusedError,
)

if TYPE_CHECKING:
    from copilot import CopilotClient, CopilotSession

T = TypeVar("T")

SIGN_IN_METHOD = "account.getCurrentAuth"
"""The sidecar's GitHub sign-in: `{authInfo: {type, host, copilotUser}}` or
`{authErrors: [...]}`. Asked for over the SDK's JSON-RPC client itself: the SDK's
typed wrapper (`rpc.account.get_current_auth`) requires a `token` field the CLI
(1.0.102) rightly never sends, and fails to parse the answer."""
METHOD_NOT_FOUND = -32601

SESSION_ERROR_PREFIX = "Session error:"
"""`CopilotSession.send_and_wait` fails a turn the runtime reported as a
`session.error` event with `Exception(f"Session error: {message}")`."""
SESSION_CLOSED = "closed before response completed"
"""`CopilotSession.send_and_wait` fails a wait whose connection closed with
`RuntimeError("Session closed before response completed")`."""
CLIENT_NOT_CONNECTED = "Client not connected"
"""`CopilotClient.create_session` (and the other client calls) raise
`RuntimeError("Client not connected")` once the SDK dropped its connection."""
CONNECTION_REFUSED = ("Connection refused", "Errno 111")
"""`CopilotClient._connect_via_tcp` turns the socket's OSError into
`RuntimeError(f"Failed to connect to CLI server at {host}:{port}: {e}")`. The
OSError is that RuntimeError's implicit context and is read first; the text
is the fallback for an error that lost its context on the way."""


def sdk_failure(error: BaseException) -> BaseException:
    """The driver's error for what an SDK call raised: an SdkError when the SDK's
    failure is recognised, `error` itself otherwise."""
    from copilot._jsonrpc import JsonRpcError, ProcessExitedError

    if isinstance(error, SdkError):
        return error
    if isinstance(error, JsonRpcError) and error.code in AUTHENTICATION_CODES:
        return SidecarAuthError(error, error.code)
    text = " ".join(str(error).split())
    if text.startswith(SESSION_ERROR_PREFIX):
        return SessionFailedError(error, text.removeprefix(SESSION_ERROR_PREFIX).strip())
    if isinstance(error, ProcessExitedError) or (
        isinstance(error, RuntimeError) and (SESSION_CLOSED in text or CLIENT_NOT_CONNECTED in text)
    ):
        return SidecarDisconnectedError(error)
    if _refused(error) or (
        isinstance(error, RuntimeError) and any(words in text for words in CONNECTION_REFUSED)
    ):
        return SidecarRefusedError(error)
    return error


def _refused(error: BaseException) -> bool:
    """Whether `error`, or the error it was raised from or during, is a refused
    connection."""
    for link in (error, error.__cause__, error.__context__):
        if isinstance(link, OSError) and link.errno == errno.ECONNREFUSED:
            return True
    return False


async def _recognised(call: Awaitable[T]) -> T:
    """Await an SDK call; raise its failure as `sdk_failure` names it."""
    try:
        return await call
    except Exception as error:
        failure = sdk_failure(error)
        if failure is error:
            raise
        raise failure from error


class SdkClient:
    """The SDK client's calls, as the lifecycle makes them."""

    def __init__(self, client: CopilotClient) -> None:
        self.client = client

    async def start(self) -> None:
        """Connect and complete the handshake."""
        await _recognised(self.client.start())

    async def create_session(self, options: Mapping[str, Any]) -> SdkSession:
        return SdkSession(await _recognised(self.client.create_session(**options)))

    async def sign_in(self) -> Any | None:
        """The sidecar's GitHub sign-in as the CLI answers it (see SIGN_IN_METHOD), or
        None from a CLI that does not know the method."""
        from copilot._jsonrpc import JsonRpcError

        rpc = self.client._client  # the SDK's JSON-RPC client, present once started
        if rpc is None:
            return None
        try:
            return await _recognised(rpc.request(SIGN_IN_METHOD, {}))
        except JsonRpcError as error:
            if error.code == METHOD_NOT_FOUND:
                return None
            raise

    async def catalog(self) -> list[CatalogModel]:
        """The account's models as the CLI offers them (it hides some of the catalog);
        raises CatalogUnreadableError, in the CLI's words, when it cannot list them."""
        from copilot._jsonrpc import JsonRpcError

        try:
            models = await _recognised(self.client.list_models())
        except JsonRpcError as error:
            raise CatalogUnreadableError(error) from error
        return [
            CatalogModel(model.id, model.billing.multiplier if model.billing else None)
            for model in models
        ]

    async def cli_version(self) -> str | None:
        """The sidecar's Copilot CLI version; its failure is the SDK's own."""
        return (await self.client.get_status()).version

    def ping(self) -> Awaitable[Any]:
        return self.client.ping()

    def connected(self) -> bool:
        return is_connected(self.client)

    def stop(self) -> Awaitable[None]:
        """Release the transport at once (see connection.py: `stop()` would wait
        a second on its reader), then the SDK's stop."""
        release_transport(self.client)
        return self.client.stop()


class SdkSession:
    """One SDK session's calls, as the lifecycle makes them."""

    def __init__(self, session: CopilotSession) -> None:
        self.session = session
        self.session_id: str = session.session_id

    async def send_and_wait(self, prompt: str, *, timeout: float) -> str:
        """Send the prompt; the answer's text once the session is idle ("" when the
        turn ended without one)."""
        reply = await _recognised(self.session.send_and_wait(prompt, timeout=timeout))
        content = getattr(getattr(reply, "data", None), "content", None)
        return content if isinstance(content, str) else ""

    def abort(self) -> Awaitable[Any]:
        return self.session.abort()

    def disconnect(self) -> Awaitable[Any]:
        return self.session.disconnect()


def event_type(event: Any) -> Any:
    """A session event's type as its wire name: the SDK's events carry it as an
    enum member (`SessionEventType`), whose value is the name."""
    return getattr(event.type, "value", event.type)


def sdk_version() -> str | None:
    """The installed SDK's version (the SDK is already loaded by the client)."""
    import copilot

    return getattr(copilot, "__version__", None)
