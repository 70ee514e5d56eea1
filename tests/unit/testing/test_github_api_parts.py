"""The fake GitHub's parts without a server: hosts, bodies, the catalog,
the MCP server, rate-limit counting and the request decoding."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from copilot_driver.testing.github_api import (
    DEFAULT_CATALOG,
    DEFAULT_MODEL,
    HIDDEN_BY_CLI,
    RateLimit,
    Switches,
    mcp,
)
from copilot_driver.testing.github_api.account import quota_reset_date, user_answer
from copilot_driver.testing.github_api.catalog import models_answer, visible_ids
from copilot_driver.testing.github_api.hosts import HostMap, bare_host, plan_endpoints
from copilot_driver.testing.github_api.records import decode_body
from copilot_driver.testing.github_api.switches import RateLimitCounter

CLI_TOOLS_HEADER = {"x-mcp-tools": "get_file_contents,search_code,search_repositories,list_issues"}


def rpc(method: str, ident: int | None = 1, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        message["id"] = ident
    return message


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("api.github.com", "api.github.com"),
        ("API.GitHub.com:443", "api.github.com"),
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]:443", "[::1]"),
    ],
)
def test_bare_host(header: str, host: str) -> None:
    assert bare_host(header) == host


def test_host_roles() -> None:
    hosts = HostMap(ghe_host="Acme.ghe.com", extra={"Other.Test": "copilot"})
    assert hosts.role("api.github.com") == "github"
    assert hosts.role("api.enterprise.githubcopilot.com") == "copilot"
    assert hosts.role("telemetry.business.githubcopilot.com") == "telemetry"
    assert hosts.role("origin-tracker.githubusercontent.com") == "other"
    assert hosts.role("api.acme.ghe.com") == "github"
    assert hosts.role("copilot-api.acme.ghe.com") == "copilot"
    assert hosts.role("other.test") == "copilot"
    assert hosts.role("example.com") is None
    assert hosts.names() == sorted(hosts.names())
    assert hosts.endpoints("api.github.com", "business") == plan_endpoints("business")
    assert (
        hosts.endpoints("api.acme.ghe.com", "business")["api"] == "https://copilot-api.acme.ghe.com"
    )


def test_the_default_catalog_is_realistic() -> None:
    ids = [model.id for model in DEFAULT_CATALOG]
    assert ids == ["gpt-5-mini", "gpt-5.2", "claude-sonnet-4.5", "gpt-4.1"]
    assert DEFAULT_MODEL == "gpt-5-mini"
    assert visible_ids(DEFAULT_CATALOG) == ["gpt-5-mini", "gpt-5.2", "claude-sonnet-4.5"]
    assert "gpt-4.1" in HIDDEN_BY_CLI
    entries = {entry["id"]: entry for entry in models_answer(DEFAULT_CATALOG)["data"]}
    assert entries["gpt-5-mini"]["is_chat_default"] is True
    assert entries["gpt-5-mini"]["billing"] == {"is_premium": False, "multiplier": 0.0}
    assert entries["gpt-5.2"]["billing"] == {"is_premium": True, "multiplier": 1.0}
    for entry in entries.values():
        assert entry["object"] == "model"
        assert entry["policy"]["state"] == "enabled"
        assert entry["capabilities"]["type"] == "chat"
        assert entry["capabilities"]["object"] == "model_capabilities"
        assert set(entry["capabilities"]["limits"]) == {
            "max_context_window_tokens",
            "max_output_tokens",
            "max_prompt_tokens",
        }
        assert entry["supported_endpoints"] == ["/chat/completions", "/responses"]


def test_the_quota_resets_on_the_first_of_next_month() -> None:
    assert quota_reset_date(datetime(2026, 1, 31, tzinfo=UTC)) == "2026-02-01"
    assert quota_reset_date(datetime(2026, 12, 15, tzinfo=UTC)) == "2027-01-01"


def test_the_user_answer_follows_the_switches() -> None:
    answer = user_answer(Switches(plan="business", sku="copilot_for_business_seat"), {})
    assert (answer["copilot_plan"], answer["access_type_sku"]) == (
        "business",
        "copilot_for_business_seat",
    )
    assert answer["organization_list"] == []
    assert answer["restricted_telemetry"] is False


def test_rate_limits_are_checked_and_counted_per_value() -> None:
    with pytest.raises(ValueError, match="times"):
        RateLimit(times=0)
    with pytest.raises(ValueError, match="retry_after_s"):
        RateLimit(retry_after_s=-1)
    counter = RateLimitCounter()
    twice = RateLimit(times=2)
    assert [counter.take(twice) for _ in range(3)] == [True, True, False]
    assert counter.take(None) is False
    assert counter.take(RateLimit(times=2)) is True  # an equal but new value starts again


def test_decode_body() -> None:
    assert decode_body(b"", {}) is None
    assert decode_body(b'{"a": 1}', {}) == {"a": 1}
    lines = b'{"a": 1}\n{"b": 2}\n'
    assert decode_body(gzip.compress(lines), {"content-encoding": "gzip"}) == [{"a": 1}, {"b": 2}]
    assert decode_body(b"plain text", {}) == "plain text"
    assert decode_body(b"\x1f\x8bnot gzip", {}) == "\x1f\ufffdnot gzip"


def test_mcp_discover_is_an_unknown_method_and_initialize_opens_a_session() -> None:
    discover = mcp.answer(rpc("server/discover", 0), {"mcp-method": "server/discover"})
    assert discover.status == 200
    assert discover.payload is not None
    assert discover.payload["error"]["code"] == -32601
    opened = mcp.answer(rpc("initialize", protocolVersion="2025-11-25"), {})
    assert opened.payload is not None
    assert opened.payload["result"]["protocolVersion"] == "2025-11-25"
    assert opened.payload["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert opened.headers["Mcp-Session-Id"]
    newer = mcp.answer(rpc("initialize", protocolVersion="2099-01-01"), {})
    assert newer.payload is not None
    assert newer.payload["result"]["protocolVersion"] == mcp.SUPPORTED_VERSIONS[0]


def test_mcp_notifications_are_accepted_and_junk_refused() -> None:
    accepted = mcp.answer(rpc("notifications/initialized", None), {})
    assert (accepted.status, accepted.payload) == (202, None)
    assert mcp.answer(["batch"], {}).status == 400
    assert mcp.answer(rpc("ping"), {}).payload == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_mcp_tools_follow_the_x_mcp_tools_header_and_the_read_only_switch() -> None:
    listed = mcp.answer(rpc("tools/list"), CLI_TOOLS_HEADER)
    assert listed.payload is not None
    tools = listed.payload["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["get_file_contents", "search_repositories"]
    assert all(tool["annotations"]["readOnlyHint"] for tool in tools)
    everything = mcp.offered_tools({})
    assert [tool["name"] for tool in everything] == list(mcp.TOOL_NAMES)
    bare = mcp.offered_tools(CLI_TOOLS_HEADER, read_only=False)
    assert all("annotations" not in tool for tool in bare)
    assert all("annotations" in tool for tool in mcp.TOOLS)  # the originals are untouched


def test_mcp_tool_calls() -> None:
    def text(answer: mcp.McpAnswer) -> Any:
        assert answer.payload is not None
        return answer.payload["result"]["content"][0]["text"]

    found = mcp.answer(rpc("tools/call", name="search_repositories", arguments={"query": "x"}), {})
    assert json.loads(text(found))["items"][0]["full_name"] == "octocat/Hello-World"
    assert json.loads(text(mcp.answer(rpc("tools/call", name="get_me"), {})))["login"] == "octocat"
    file = mcp.answer(rpc("tools/call", name="get_file_contents", arguments={"owner": "o"}), {})
    assert text(file) == mcp.FILE_TEXT
    missing = mcp.answer(rpc("tools/call", name="search_repositories", arguments={}), {})
    assert missing.payload is not None
    assert missing.payload["error"]["code"] == -32602
    unknown = mcp.answer(rpc("tools/call", name="nope"), {})
    assert unknown.payload is not None
    assert "nope" in unknown.payload["error"]["message"]
