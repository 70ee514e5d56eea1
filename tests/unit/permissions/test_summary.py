"""Unit tests for `copilot_driver.permissions.summary`: the compact request summaries of
the denial logs and the run report (spec 6.3), on the real request classes."""

from __future__ import annotations

import pytest

from copilot_driver.permissions.summary import SUMMARY_CHARS, summarise
from helpers.permission_requests import custom_tool, mcp, memory, read, shell, url, write


def test_shell_summary_is_shortened_beyond_160_chars() -> None:
    command = "echo " + "x" * 300
    summary = summarise(shell(command).to_dict())
    assert summary.startswith("shell(echo xxx")
    assert summary.endswith("...)")
    inner = summary.removeprefix("shell(").removesuffix(")")
    assert len(inner) == SUMMARY_CHARS == 160
    assert inner == command[:157] + "..."
    fits = "echo " + "y" * (160 - 5)
    assert summarise(shell(fits).to_dict()) == f"shell({fits})"


def test_shell_summary_collapses_whitespace_and_newlines() -> None:
    summary = summarise(shell("git   status\n\t-s\r\n && \n ls").to_dict())
    assert summary == "shell(git status -s && ls)"


def test_summaries_per_kind() -> None:
    assert summarise(mcp("fake", "add").to_dict()) == "mcp(fake.add)"
    assert summarise(mcp("my-server", "get_file").to_dict()) == "mcp(my-server.get_file)"
    assert summarise(write("/work/repo/a.txt").to_dict()) == "write(/work/repo/a.txt)"
    assert summarise(read("/etc/hostname").to_dict()) == "read(/etc/hostname)"
    assert summarise(custom_tool("lookup_weather").to_dict()) == "custom-tool(lookup_weather)"
    assert summarise(url("https://example.com/a/b").to_dict()) == "url(https://example.com/a/b)"
    assert summarise(memory().to_dict()) == "memory"
    assert summarise({"kind": "nonsense"}) == "nonsense"


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("https://example.com/p?token=abc123#frag", "url(https://example.com/p)"),
        ("https://user:pa55w0rd@example.com:8443/p?x=1", "url(https://example.com:8443/p)"),
        ("https://ghp_tokenonly@example.com/", "url(https://example.com/)"),
        ("http://example.com#section", "url(http://example.com)"),
    ],
)
def test_url_summary_drops_query_fragment_and_credentials(address: str, expected: str) -> None:
    summary = summarise(url(address).to_dict())
    assert summary == expected
    for secret in ("abc123", "pa55w0rd", "ghp_tokenonly", "user", "frag", "section"):
        assert secret not in summary


def test_url_summary_keeps_ipv6_brackets() -> None:
    """`url(http://::1:8080/a)` is ambiguous; the host needs its brackets back."""
    assert summarise(url("http://[::1]:8080/a?b=c").to_dict()) == "url(http://[::1]:8080/a)"
