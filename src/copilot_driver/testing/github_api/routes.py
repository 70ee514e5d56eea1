"""What the fake answers to one request, decided without any I/O.

A request is checked in this order: the host must serve the path (else
404, so a path the fake does not know is never a 401), the token must be
accepted (else 401; telemetry needs none), then a forced failure
(`Switches.failures`), then the account switches, then the endpoint
itself. `decide` returns an `Answer`; the handler sends it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Protocol

from copilot_driver.testing.github_api import account, auto, catalog, mcp
from copilot_driver.testing.github_api.hosts import Role
from copilot_driver.testing.github_api.switches import RateLimitCounter, Switches
from copilot_driver.testing.model_server import chat, responses
from copilot_driver.testing.model_server.errors import error_payload
from copilot_driver.testing.script import Reply, Script


@dataclass(frozen=True)
class Incoming:
    """One received request: `roles` are what its host serves."""

    method: str
    host: str
    path: str
    headers: Mapping[str, str]
    body: Any
    roles: frozenset[Role]
    secure: bool = False


@dataclass(frozen=True)
class Answer:
    """A JSON answer (`payload`; None: no body), or an SSE stream (`frames`).
    `reply` is the scripted reply behind a model answer, for its delay and
    its broken-connection fields."""

    status: int
    payload: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    frames: Iterator[bytes] | None = None
    reply: Reply | None = None


class Backend(Protocol):
    """What `decide` reads from the running fake."""

    script: Script

    def accepts(self, token: str) -> bool: ...

    def endpoints_for(self, host: str, secure: bool) -> dict[str, str]: ...

    @property
    def rate_limits(self) -> RateLimitCounter: ...


_COPILOT_NOT_FOUND = {"error": {"message": "Not Found", "code": "not_found"}}

Endpoint = Callable[[Incoming, Backend, Switches], Answer]


def decide(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    """The answer to `request` under `switches` (one snapshot per request)."""
    found = ROUTES.get((request.method, request.path))
    if found is None or found[0] not in request.roles:
        return _not_found(request)
    role, endpoint = found
    if role != "telemetry" and not _authorized(request, backend, switches):
        return Answer(HTTPStatus.UNAUTHORIZED, account.BAD_CREDENTIALS)
    forced = switches.failures.get(request.path)
    if forced is not None:
        return Answer(forced, account.scripted_failure(forced, github=role == "github"))
    if role == "copilot" and not switches.chat_enabled:
        return Answer(HTTPStatus.FORBIDDEN, account.NOT_LICENSED)
    return endpoint(request, backend, switches)


def _authorized(request: Incoming, backend: Backend, switches: Switches) -> bool:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() not in ("bearer", "token") or not token:
        return False
    return not switches.token_refused and backend.accepts(token)


def _not_found(request: Incoming) -> Answer:
    """GitHub's 404 from GitHub hosts (and for `copilot_internal` paths in
    plain mode, where one host plays all), the Copilot API's elsewhere."""
    copilot = bool(request.roles & {"copilot", "telemetry"})
    if copilot and not request.path.startswith("/copilot_internal/"):
        return Answer(HTTPStatus.NOT_FOUND, _COPILOT_NOT_FOUND)
    return Answer(HTTPStatus.NOT_FOUND, account.github_not_found())


def _user(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    if not switches.copilot_access:
        return Answer(HTTPStatus.FORBIDDEN, account.NOT_ACCESSIBLE)
    endpoints = backend.endpoints_for(request.host, request.secure)
    return Answer(HTTPStatus.OK, account.user_answer(switches, endpoints))


def _github_not_found(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    return Answer(HTTPStatus.NOT_FOUND, account.github_not_found())


def _models(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    return Answer(HTTPStatus.OK, catalog.models_answer(switches.catalog))


def _model_call(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    """`/responses` and `/chat/completions`: the switches, then the script."""
    body = request.body
    if backend.rate_limits.take(switches.rate_limit):
        retry = str(switches.rate_limit.retry_after_s) if switches.rate_limit else "0"
        return Answer(HTTPStatus.TOO_MANY_REQUESTS, account.RATE_LIMITED, {"Retry-After": retry})
    if switches.quota_exhausted:
        return Answer(HTTPStatus.PAYMENT_REQUIRED, account.QUOTA_EXCEEDED)
    if not isinstance(body, dict):
        return Answer(HTTPStatus.BAD_REQUEST, _invalid("the body must be a JSON object"))
    model = str(body.get("model") or "")
    if model not in {entry.id for entry in switches.catalog}:
        return Answer(HTTPStatus.BAD_REQUEST, _invalid("The requested model is not supported."))
    if request.path == "/responses":
        reply = backend.script.reply_for_responses(body.get("input"))
    else:
        messages = body.get("messages")
        reply = backend.script.reply_for(messages if isinstance(messages, list) else [])
    return _scripted(request.path, body, model, reply)


def _scripted(path: str, body: dict[str, Any], model: str, reply: Reply) -> Answer:
    if reply.http_status is not None:
        headers = {} if reply.retry_after_s is None else {"Retry-After": str(reply.retry_after_s)}
        return Answer(reply.http_status, error_payload(reply), headers, reply=reply)
    streamed = bool(body.get("stream"))
    if path == "/responses" and streamed:
        return Answer(HTTPStatus.OK, frames=responses.stream_frames(reply, model, 1), reply=reply)
    if path == "/responses":
        return Answer(HTTPStatus.OK, responses.response_object(reply, model), reply=reply)
    if streamed:
        frames = chat.stream_frames(reply, model, 1, ascii_only=True)
        return Answer(HTTPStatus.OK, frames=frames, reply=reply)
    return Answer(HTTPStatus.OK, chat.completion(reply, model), reply=reply)


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "code": "invalid_request_body", "param": "model"}}


def _mcp(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    if request.method != "POST":
        return Answer(HTTPStatus.METHOD_NOT_ALLOWED, headers={"Allow": "POST"})
    answered = mcp.answer(request.body, request.headers, read_only=switches.mcp_read_only)
    return Answer(answered.status, answered.payload, answered.headers)


def _auto(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    chosen = auto.chosen_model(switches)
    if chosen is None:
        return Answer(HTTPStatus.NOT_FOUND, _COPILOT_NOT_FOUND)
    if request.path == "/auto":
        return Answer(HTTPStatus.OK, auto.auto_answer(chosen))
    return Answer(HTTPStatus.OK, auto.session_answer(chosen, switches))


def _telemetry(request: Incoming, backend: Backend, switches: Switches) -> Answer:
    count = len(request.body) if isinstance(request.body, list) else int(request.body is not None)
    return Answer(HTTPStatus.OK, {"itemsReceived": count, "itemsAccepted": count, "errors": []})


ROUTES: dict[tuple[str, str], tuple[Role, Endpoint]] = {
    ("GET", "/copilot_internal/user"): ("github", _user),
    ("GET", "/copilot_internal/team_customizations"): ("github", _github_not_found),
    ("GET", "/copilot_internal/managed_settings"): ("github", _github_not_found),
    ("GET", "/models"): ("copilot", _models),
    ("POST", "/responses"): ("copilot", _model_call),
    ("POST", "/chat/completions"): ("copilot", _model_call),
    ("POST", "/mcp/readonly"): ("copilot", _mcp),
    ("GET", "/mcp/readonly"): ("copilot", _mcp),
    ("DELETE", "/mcp/readonly"): ("copilot", _mcp),
    ("POST", "/auto"): ("copilot", _auto),
    ("POST", "/models/session"): ("copilot", _auto),
    ("POST", "/telemetry"): ("telemetry", _telemetry),
}
"""(method, path) -> the role of the host that serves it, and its endpoint function."""
