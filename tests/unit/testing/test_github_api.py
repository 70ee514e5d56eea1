"""The fake GitHub over plain HTTP: each endpoint, each switch, auth, the
records, and a close that leaves no thread behind."""

from __future__ import annotations

import gzip
import http.client
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from copilot_driver.testing.github_api import (
    DEFAULT_CATALOG,
    FakeGitHubCopilot,
    RateLimit,
    catalog_without,
    new_token,
)
from copilot_driver.testing.github_api.account import quota_reset_date
from copilot_driver.testing.script import Reply, Rule, Script, ToolCall

SCRIPT = Script(
    rules=(
        Rule("TOOL", (Reply(tool_calls=(ToolCall("bash", {"command": "echo hi"}, "c1"),)),)),
        Rule("BROKEN", (Reply(http_status=500, text="scripted failure"),)),
        Rule("ENDLESS", (Reply(text="never", never_ends=True),)),
    )
)

Response = tuple[int, dict[str, str], Any]

OWN = "<the fake's own token>"
"""`call`'s default: send the fake's token."""


@pytest.fixture
def fake() -> Iterator[FakeGitHubCopilot]:
    with FakeGitHubCopilot(SCRIPT) as running:
        yield running


def call(
    fake: FakeGitHubCopilot,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = OWN,
    headers: Mapping[str, str] | None = None,
    raw: bytes | None = None,
) -> Response:
    """One request to the plain listener: (status, lower-cased headers, body)."""
    sent = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {fake.token if token is OWN else token}"
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
    try:
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        payload = response.read()
        got = {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()
    kind = got.get("content-type", "")
    decoded: Any = json.loads(payload) if kind.startswith("application/json") else payload
    return response.status, got, decoded


def user_text(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def responses_body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-5-mini", "input": [user_text(text)], **extra}


def test_the_user_answer_points_every_endpoint_back_at_the_fake(fake: FakeGitHubCopilot) -> None:
    status, headers, body = call(fake, "GET", "/copilot_internal/user")
    assert status == 200
    assert headers["x-github-request-id"]
    assert body["login"] == "octocat"
    assert body["chat_enabled"] is True
    assert body["copilot_plan"] == "individual"
    assert set(body["endpoints"]) == {"api", "telemetry", "proxy", "origin-tracker"}
    assert set(body["endpoints"].values()) == {fake.github_api_url}
    assert set(body["quota_snapshots"]) == {"chat", "completions", "premium_interactions"}
    assert body["quota_reset_date"] == quota_reset_date()


def test_every_answer_carries_a_github_request_id(fake: FakeGitHubCopilot) -> None:
    answers = [
        call(fake, "GET", "/copilot_internal/team_customizations"),
        call(fake, "GET", "/models", token=None),
        call(fake, "GET", "/nowhere"),
        call(fake, "POST", "/telemetry", raw=b"{}", token=None),
    ]
    assert [status for status, _, _ in answers] == [404, 401, 404, 200]
    ids = {headers["x-github-request-id"] for _, headers, _ in answers}
    assert len(ids) == 4


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/copilot_internal/user"),
        ("GET", "/models"),
        ("POST", "/responses"),
        ("POST", "/mcp/readonly"),
        ("POST", "/auto"),
    ],
)
@pytest.mark.parametrize("token", [None, "gho_unknown"])
def test_a_missing_or_unknown_token_gets_bad_credentials(
    fake: FakeGitHubCopilot, method: str, path: str, token: str | None
) -> None:
    status, _, body = call(fake, method, path, responses_body("hi"), token=token)
    assert status == 401
    assert body == {
        "message": "Bad credentials",
        "documentation_url": "https://docs.github.com/rest",
        "status": "401",
    }
    assert fake.requests()[-1].status == 401


def test_tokens_are_fresh_gho_tokens_and_more_can_be_accepted(fake: FakeGitHubCopilot) -> None:
    assert fake.token.startswith("gho_")
    assert len(fake.token) == 40
    assert new_token() != new_token()
    extra = fake.new_token()
    assert call(fake, "GET", "/models", token=extra)[0] == 200
    fake.accept("gho_mine")
    assert call(fake, "GET", "/models", token="gho_mine")[0] == 200


def test_a_refused_token_gets_401_everywhere_but_telemetry(fake: FakeGitHubCopilot) -> None:
    fake.switch(token_refused=True)
    assert call(fake, "GET", "/copilot_internal/user")[0] == 401
    assert call(fake, "POST", "/responses", responses_body("hi"))[0] == 401
    assert call(fake, "POST", "/telemetry", raw=b'{"a": 1}', token=None)[0] == 200


def test_without_copilot_access_the_user_endpoint_answers_403(fake: FakeGitHubCopilot) -> None:
    fake.switch(copilot_access=False)
    status, _, body = call(fake, "GET", "/copilot_internal/user")
    assert status == 403
    assert body["message"] == "Resource not accessible by personal access token"
    assert call(fake, "GET", "/models")[0] == 200


def test_chat_disabled_shows_in_the_user_answer_and_refuses_the_copilot_api(
    fake: FakeGitHubCopilot,
) -> None:
    fake.switch(chat_enabled=False)
    assert call(fake, "GET", "/copilot_internal/user")[2]["chat_enabled"] is False
    for method, path in (("GET", "/models"), ("POST", "/responses"), ("POST", "/mcp/readonly")):
        status, _, body = call(fake, method, path, responses_body("hi"))
        assert status == 403
        assert "not licensed to use Copilot" in body["error"]["message"]


def test_a_rate_limit_for_n_calls_then_answers(fake: FakeGitHubCopilot) -> None:
    fake.switch(rate_limit=RateLimit(times=2, retry_after_s=3))
    first, second, third = (call(fake, "POST", "/responses", responses_body("hi")) for _ in "abc")
    assert first[0] == second[0] == 429
    assert first[1]["retry-after"] == "3"
    assert first[2]["error"]["code"] == "rate_limited"
    assert third[0] == 200
    fake.switch(rate_limit=RateLimit(times=1))  # a new value counts afresh
    assert call(fake, "POST", "/chat/completions", {"model": "gpt-5-mini"})[0] == 429
    assert call(fake, "POST", "/chat/completions", {"model": "gpt-5-mini"})[0] == 200


def test_an_endless_rate_limit_refuses_every_model_call_only(fake: FakeGitHubCopilot) -> None:
    fake.switch(rate_limit=RateLimit())
    statuses = [call(fake, "POST", "/responses", responses_body("hi"))[0] for _ in range(4)]
    assert statuses == [429] * 4
    assert call(fake, "GET", "/models")[0] == 200


def test_an_exhausted_quota(fake: FakeGitHubCopilot) -> None:
    fake.switch(quota_exhausted=True)
    status, _, body = call(fake, "POST", "/responses", responses_body("hi"))
    assert status == 402
    assert body["error"]["code"] == "quota_exceeded"
    premium = call(fake, "GET", "/copilot_internal/user")[2]["quota_snapshots"]
    assert premium["premium_interactions"]["remaining"] == 0
    assert premium["premium_interactions"]["percent_remaining"] == 0
    assert premium["chat"]["remaining"] > 0


def test_the_catalog_and_a_model_it_does_not_list(fake: FakeGitHubCopilot) -> None:
    body = call(fake, "GET", "/models")[2]
    assert [m["id"] for m in body["data"]] == [m.id for m in DEFAULT_CATALOG]
    fake.switch(catalog=catalog_without("gpt-5-mini"))
    assert "gpt-5-mini" not in [m["id"] for m in call(fake, "GET", "/models")[2]["data"]]
    status, _, refused = call(fake, "POST", "/responses", responses_body("hi"))
    assert status == 400
    assert refused["error"]["message"] == "The requested model is not supported."


def test_responses_are_scripted_whole_or_streamed(fake: FakeGitHubCopilot) -> None:
    status, _, body = call(fake, "POST", "/responses", responses_body("say hi"))
    assert status == 200
    assert body["object"] == "response"
    assert body["output"][0]["content"][0]["text"] == "Hello from the scripted model."
    tool = call(fake, "POST", "/responses", responses_body("run the TOOL"))[2]
    (item,) = tool["output"]
    assert (item["type"], item["name"], item["call_id"]) == ("function_call", "bash", "c1")
    status, headers, raw = call(fake, "POST", "/responses", responses_body("hi", stream=True))
    assert headers["content-type"] == "text/event-stream"
    events = [line[7:] for line in raw.decode().splitlines() if line.startswith("event: ")]
    assert events[0] == "response.created"
    assert events[-1] == "response.completed"


def test_chat_completions_are_scripted_whole_or_streamed(fake: FakeGitHubCopilot) -> None:
    messages = [{"role": "user", "content": "run the TOOL"}]
    body = call(fake, "POST", "/chat/completions", {"model": "gpt-5.2", "messages": messages})[2]
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
    streamed = {"model": "gpt-5.2", "messages": messages, "stream": True}
    raw = call(fake, "POST", "/chat/completions", streamed)[2]
    assert raw.decode().rstrip().endswith("data: [DONE]")


def test_a_scripted_http_error_keeps_the_openai_shape(fake: FakeGitHubCopilot) -> None:
    status, _, body = call(fake, "POST", "/responses", responses_body("BROKEN"))
    assert status == 500
    assert body["error"]["message"] == "scripted failure"


def test_a_forced_failure_on_a_path(fake: FakeGitHubCopilot) -> None:
    fake.switch(failures={"/models": 503, "/copilot_internal/user": 500})
    status, _, body = call(fake, "GET", "/models")
    assert (status, body["error"]["code"]) == (503, "http_503")
    status, _, body = call(fake, "GET", "/copilot_internal/user")
    assert (status, body["status"]) == (500, "500")
    assert call(fake, "GET", "/models", token=None)[0] == 401  # auth first


def test_a_slow_path_waits(fake: FakeGitHubCopilot) -> None:
    fake.switch(delays={"/models": 0.3})
    started = time.monotonic()
    assert call(fake, "GET", "/models")[0] == 200
    assert time.monotonic() - started >= 0.3


def test_the_github_side_paths_answer_github_404s(fake: FakeGitHubCopilot) -> None:
    for path in ("/copilot_internal/team_customizations", "/copilot_internal/managed_settings"):
        status, _, body = call(fake, "GET", path)
        assert (status, body["message"]) == (404, "Not Found")


def test_auto_mode_is_off_by_default_and_picks_the_switched_model(
    fake: FakeGitHubCopilot,
) -> None:
    hints = {"auto_mode": {"model_hints": ["auto"]}}
    assert call(fake, "POST", "/auto", {"prompt": "hi"})[0] == 404
    assert call(fake, "POST", "/models/session", hints)[0] == 404
    fake.switch(auto_model="claude-sonnet-4.5")
    picked = call(fake, "POST", "/auto", {"prompt": "hi", "has_image": False})[2]
    assert picked["selected_model"] == {"id": "claude-sonnet-4.5"}
    assert picked["session_token"]
    legacy = call(fake, "POST", "/models/session", hints)[2]
    assert legacy["selected_model"] == "claude-sonnet-4.5"
    assert "gpt-4.1" in legacy["available_models"]


def test_telemetry_needs_no_token_and_is_decoded(fake: FakeGitHubCopilot) -> None:
    lines = b'{"name": "copilot-cli/a"}\n{"name": "copilot-cli/b"}\n'
    status, _, body = call(
        fake,
        "POST",
        "/telemetry",
        raw=gzip.compress(lines),
        token=None,
        headers={"Content-Encoding": "gzip", "Content-Type": "application/x-json-stream"},
    )
    assert status == 200
    assert body["itemsAccepted"] == 2
    (recorded,) = fake.requests_to("/telemetry")
    assert [event["name"] for event in recorded.body] == ["copilot-cli/a", "copilot-cli/b"]


def test_every_request_is_recorded_in_order(fake: FakeGitHubCopilot) -> None:
    other = fake.new_token()
    call(fake, "GET", "/copilot_internal/user?x=1", headers={"X-Custom": "Yes"})
    call(fake, "GET", "/models", token=other)
    call(fake, "POST", "/responses", responses_body("hi"))
    assert fake.paths() == ["GET /copilot_internal/user", "GET /models", "POST /responses"]
    assert fake.paths(other) == ["GET /models"]
    first = fake.requests()[0]
    assert (first.host, first.query, first.status, first.secure) == ("127.0.0.1", "x=1", 200, False)
    assert first.headers["x-custom"] == "Yes"
    assert first.token == fake.token
    (posted,) = fake.requests_to("/responses", "POST", token=fake.token)
    assert posted.body["model"] == "gpt-5-mini"
    assert fake.requests_to("/chat/completions") == []  # no such request was made
    assert [r.time for r in fake.requests()] == sorted(r.time for r in fake.requests())
    assert fake.wait_for("/models", timeout=0.1)[0].token == other
    with pytest.raises(TimeoutError, match="/auto"):
        fake.wait_for("/auto", timeout=0.1)


def test_the_sidecar_variables_of_the_plain_mode(fake: FakeGitHubCopilot) -> None:
    assert fake.sidecar_env() == {
        "COPILOT_GITHUB_TOKEN": fake.token,
        "COPILOT_DEBUG_GITHUB_API_URL": f"http://127.0.0.1:{fake.port}",
    }
    assert fake.sidecar_env("gho_other")["COPILOT_GITHUB_TOKEN"] == "gho_other"
    with pytest.raises(RuntimeError, match="https=True"):
        fake.https_sidecar_env()


def test_close_ends_delays_held_replies_and_idle_connections() -> None:
    before = set(threading.enumerate())
    fake = FakeGitHubCopilot(SCRIPT)
    fake.switch(delays={"/models": 60.0})
    results: list[Any] = []

    def slow(path: str, body: Any) -> None:
        try:
            results.append(call(fake, "POST" if body else "GET", path, body)[0])
        except (OSError, http.client.HTTPException) as error:
            results.append(type(error).__name__)

    clients = [
        threading.Thread(target=slow, args=("/models", None)),
        threading.Thread(target=slow, args=("/responses", responses_body("ENDLESS"))),
    ]
    for client in clients:
        client.start()
    idle = http.client.HTTPConnection("127.0.0.1", fake.port)
    idle.connect()  # a keep-alive connection with no request yet
    deadline = time.monotonic() + 5
    while fake.active_requests() < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    fake.close()
    assert time.monotonic() - started < 3
    for client in clients:
        client.join(5)
    idle.close()
    assert fake.active_requests() == 0
    assert len(results) == 2
    assert 200 not in results
    assert set(threading.enumerate()) <= before
