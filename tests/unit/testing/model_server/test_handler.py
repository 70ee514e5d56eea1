"""Routing, scripted delays and scripted HTTP errors, on both APIs."""

from __future__ import annotations

import json
import time

import pytest

from copilot_driver.testing.model_server import ScriptedModelServer
from copilot_driver.testing.script import Reply, Script
from helpers.model_server_client import (
    chat,
    get,
    http_post,
    post,
    r_user,
    raw_exchange,
    responses,
    user,
)


def test_get_models_answers(server: ScriptedModelServer) -> None:
    status, body = get(server, "/v1/models")
    assert status == 200
    listing = json.loads(body)
    assert listing["object"] == "list"
    assert listing["data"]
    assert all("id" in model for model in listing["data"])


def test_unknown_get_path_is_404(server: ScriptedModelServer) -> None:
    status, _ = get(server, "/v1/unknown")
    assert status == 404


def test_unknown_post_path_is_404(server: ScriptedModelServer) -> None:
    status, _, body = post(server, "/v1/embeddings", {"input": "x"})
    assert status == 404
    assert "error" in json.loads(body)
    assert server.requests[-1].path == "/v1/embeddings"


def test_post_with_a_non_object_body_is_404(server: ScriptedModelServer) -> None:
    status, _, _ = post(server, "/v1/chat/completions", ["not", "an", "object"])
    assert status == 404


@pytest.mark.parametrize("path", ["/responses", "/v1/responses/", "/api/openai/v1/responses"])
def test_responses_route_accepts_any_prefix(r_server: ScriptedModelServer, path: str) -> None:
    assert responses(r_server, "TEXT", path=path)["output"][0]["type"] == "message"


def test_scripted_delay_is_honoured(server: ScriptedModelServer) -> None:
    started = time.monotonic()
    completion = chat(server, [user("SLOW")])
    elapsed = time.monotonic() - started
    assert completion["choices"][0]["message"]["content"] == "slow answer"
    assert elapsed >= 0.45


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("trigger", "status", "kind", "code", "message"),
    [
        ("FAIL500", 500, "server_error", None, "Scripted HTTP 500: Internal Server Error"),
        ("FAIL429", 429, "requests", "rate_limit_exceeded", "Slow down, scripted."),
    ],
)
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_http_status_replies_on_both_apis(
    r_server: ScriptedModelServer,
    api: str,
    trigger: str,
    status: int,
    kind: str,
    code: str | None,
    message: str,
    stream: bool,
) -> None:
    if api == "chat":
        path, body = "/v1/chat/completions", {"messages": [user(trigger)]}
    else:
        path, body = "/v1/responses", {"input": [r_user(trigger)]}
    got_status, content_type, raw = http_post(
        r_server, path, {"model": "m", "stream": stream, **body}
    )
    assert got_status == status
    assert content_type.startswith("application/json")
    assert json.loads(raw) == {
        "error": {"message": message, "type": kind, "param": None, "code": code}
    }


def test_http_status_follows_the_scripted_delay() -> None:
    script = Script(default=Reply(http_status=503, delay_s=0.3))
    with ScriptedModelServer(script) as server:
        started = time.monotonic()
        status, _, raw = http_post(server, "/v1/responses", {"input": "x"})
        assert time.monotonic() - started >= 0.25
    assert status == 503
    assert json.loads(raw)["error"]["type"] == "server_error"


def test_retry_after_is_sent_with_an_error(broken_server: ScriptedModelServer) -> None:
    got = raw_exchange(broken_server, "chat", "RETRYAFTER", stream=False)
    assert got.status == 429
    assert got.headers["retry-after"] == "3"
    status, _, raw = http_post(broken_server, "/v1/responses", {"input": "RETRYAFTER"})
    assert status == 429
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"


def test_replies_without_faults_send_no_retry_after(r_server: ScriptedModelServer) -> None:
    got = raw_exchange(r_server, "chat", "FAIL500", stream=False)
    assert got.status == 500
    assert "retry-after" not in got.headers
