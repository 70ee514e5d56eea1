"""The OpenAI-style error body of a scripted HTTP error (both APIs)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from copilot_driver.testing.script import Reply

# OpenAI's error `type` and `code` per status, so clients that branch on
# them (rate limits, auth) see what the real service would send.
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def error_payload(reply: Reply) -> dict[str, Any]:
    """The OpenAI-style error body for a reply with `http_status`."""
    status = reply.http_status or HTTPStatus.INTERNAL_SERVER_ERROR
    kind, code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    message = reply.text or f"Scripted HTTP {status}: {phrase}"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
