"""Which hosts the egress proxy lets through: rules, host names, the model's endpoints."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.sandbox.egress_rules import (
    COPILOT_API_HOSTS,
    WEB_PORTS,
    Allowlist,
    EgressRuleError,
    Rule,
    build_allowlist,
    model_endpoints,
    normalise_host,
    parse_rule,
)

COPILOT_RULES = {parse_rule(host) for host in COPILOT_API_HOSTS}

# -- parse_rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pypi.org", Rule("pypi.org", WEB_PORTS, subdomains=True)),
        ("  PyPI.org.  ", Rule("pypi.org", WEB_PORTS, subdomains=True)),
        ("registry.npmjs.org:443", Rule("registry.npmjs.org", (443,), subdomains=True)),
        ("localhost:8080", Rule("localhost", (8080,), subdomains=True)),
        ("10.0.0.5", Rule("10.0.0.5", WEB_PORTS, subdomains=False)),
        ("10.0.0.5:5432", Rule("10.0.0.5", (5432,), subdomains=False)),
        ("[2001:db8::1]:8443", Rule("2001:db8::1", (8443,), subdomains=False)),
        ("[2001:DB8::1]", Rule("2001:db8::1", WEB_PORTS, subdomains=False)),
        ("2001:db8::1", Rule("2001:db8::1", WEB_PORTS, subdomains=False)),
        ("example.com:65535", Rule("example.com", (65535,), subdomains=True)),
    ],
)
def test_a_rule_is_a_host_and_its_ports(text: str, expected: Rule) -> None:
    assert parse_rule(text) == expected


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("example.com:0", "example.com:0"),
        ("example.com:65536", "example.com:65536"),
        ("example.com:", "example.com:"),
        ("example.com:http", "example.com:http"),
        ("example.com:-1", "example.com:-1"),
        ("example.com:\uff14\uff14\uff13", "example.com:\uff14\uff14\uff13"),
        ("[::1]:", "[::1]:"),
        ("[::1]x", "[::1]x"),
        ("[::1]:99999", "[::1]:99999"),
    ],
)
def test_a_bad_port_is_refused_naming_the_value(text: str, shown: str) -> None:
    with pytest.raises(EgressRuleError, match=r"port|PORT") as error:
        parse_rule(text)
    assert repr(shown) in str(error.value)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "http://example.com",
        "https://example.com:443",
        "example.com/simple",
        "user@example.com",
        "user:secret@example.com",
        "*.example.com",
        ".example.com",
        "example..com",
        "-example.com",
        "exa_mple.com",
        "exa mple.com",
        "127.1",
        "0x7f.1",
        "2130706433",
        "a\n.example.com",
        "[]",
        "[example.com",
        "[example.com]",
        "[1.2.3.4]:80",
    ],
)
def test_anything_but_a_host_is_refused_naming_the_value(text: str) -> None:
    with pytest.raises(EgressRuleError) as error:
        parse_rule(text)
    assert repr(text.strip()) in str(error.value) or repr(text) in str(error.value)


def test_a_rule_prints_as_it_is_given() -> None:
    assert [str(parse_rule(text)) for text in ("pypi.org", "Pypi.org:8443", "[::1]:9")] == [
        "pypi.org",
        "pypi.org:8443",
        "[::1]:9",
    ]


# -- normalise_host -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("Example.COM", "example.com"),
        ("example.com.", "example.com"),
        (" example.com ", "example.com"),
        ("[::1]", "::1"),
        ("[2001:DB8:0:0::1]", "2001:db8::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("a" * 63 + ".com", "a" * 63 + ".com"),
        # Names the resolver would read as an IP address; none is a canonical literal.
        ("127.1", None),
        ("0x7f.1", None),
        ("2130706433", None),
        ("017700000001", None),
        ("0x7f000001", None),
        ("127.0.0.0x1", None),
        # Not names at all.
        ("", None),
        (".", None),
        ("a..b", None),
        ("-a.com", None),
        ("a-.com", None),
        ("a_b.com", None),
        ("a b.com", None),
        ("a\n.example.com", None),
        ("a\x00.com", None),
        ("bücher.example", None),
        ("a" * 64 + ".com", None),
        (".".join(["a" * 60] * 5), None),
        ("[example.com", None),
        ("example.com/x", None),
    ],
)
def test_hosts_are_compared_in_one_form(host: str, expected: str | None) -> None:
    assert normalise_host(host) == expected


# -- Rule.allows and Allowlist.allows -------------------------------------------------------


def test_a_name_rule_allows_its_subdomains_on_the_web_ports() -> None:
    allowlist = Allowlist((parse_rule("pypi.org"),))
    assert allowlist.allows("pypi.org", 443)
    assert allowlist.allows("files.pypi.org", 80)
    assert allowlist.allows("A.B.PyPI.org.", 443)
    assert not allowlist.allows("pypi.org", 8080)
    assert not allowlist.allows("notpypi.org", 443)
    assert not allowlist.allows("pypi.org.evil.com", 443)


def test_a_port_rule_allows_that_port_only() -> None:
    allowlist = Allowlist((parse_rule("registry.npmjs.org:8443"),))
    assert allowlist.allows("registry.npmjs.org", 8443)
    assert allowlist.allows("x.registry.npmjs.org", 8443)
    assert not allowlist.allows("registry.npmjs.org", 443)
    assert not allowlist.allows("registry.npmjs.org", 80)


def test_an_ip_literal_allows_only_itself() -> None:
    allowlist = Allowlist((parse_rule("10.0.0.5"), parse_rule("[2001:db8::1]:8443")))
    assert allowlist.allows("10.0.0.5", 443)
    assert not allowlist.allows("1.10.0.0.5", 443)
    assert not allowlist.allows("x.10.0.0.5", 443)
    assert allowlist.allows("[2001:db8:0::1]", 8443)
    assert allowlist.allows("2001:DB8::1", 8443)
    assert not allowlist.allows("2001:db8::1", 443)


def test_a_provider_url_allows_its_exact_host() -> None:
    rules = model_endpoints({"COPILOT_PROVIDER_BASE_URL": "https://llm.example.com/v1"})
    allowlist = Allowlist(rules)
    assert allowlist.allows("llm.example.com", 443)
    assert not allowlist.allows("x.llm.example.com", 443)
    assert not allowlist.allows("llm.example.com", 80)


@pytest.mark.parametrize(
    "host",
    ["", "*.pypi.org", "pypi.org/", "user@pypi.org", "pypi.org:443", "0x7f000001", "a\n.pypi.org"],
)
def test_the_allowlist_fails_closed_on_garbage(host: str) -> None:
    allowlist = Allowlist((parse_rule("pypi.org"), parse_rule("0x7f000001.pypi.org")))
    assert not allowlist.allows(host, 443)


def test_the_hosts_are_listed_once_each() -> None:
    allowlist = Allowlist((parse_rule("pypi.org"), parse_rule("PYPI.org"), parse_rule("a.b:1")))
    assert allowlist.hosts() == ("pypi.org", "a.b:1")


HOST_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="abcxyz019-.:[]_@/ \n\tX", max_size=40),
    st.lists(st.sampled_from(["a", "pypi", "org", "0x7f", "1", "-", ""]), max_size=5).map(".".join),
)
RULE_TEXT = st.sampled_from(
    ["pypi.org", "org", "a.org:8080", "10.0.0.1", "[::1]:443", "localhost", "x-y.z"]
)


@given(HOST_TEXT, st.integers(min_value=-1, max_value=70000), st.lists(RULE_TEXT, max_size=4))
def test_the_allowlist_never_raises(host: str, port: int, rules: list[str]) -> None:
    Allowlist(tuple(parse_rule(rule) for rule in rules)).allows(host, port)


@given(HOST_TEXT, RULE_TEXT)
def test_an_allowed_host_is_the_rules_host_or_under_it(host: str, rule_text: str) -> None:
    rule = parse_rule(rule_text)
    for port in rule.ports:
        if Allowlist((rule,)).allows(host, port):
            normal = normalise_host(host)
            assert normal is not None
            assert normal == rule.host or normal.endswith("." + rule.host)


# -- model_endpoints and build_allowlist ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://llm.example.com/v1", Rule("llm.example.com", (443,), subdomains=False)),
        ("http://llm.example.com", Rule("llm.example.com", (80,), subdomains=False)),
        ("http://LLM.example.com:8000/v1", Rule("llm.example.com", (8000,), subdomains=False)),
        ("https://[::1]:11434", Rule("::1", (11434,), subdomains=False)),
        ("http://127.0.0.1:11434/v1", Rule("127.0.0.1", (11434,), subdomains=False)),
    ],
)
def test_the_provider_url_gives_its_host_and_port(url: str, expected: Rule) -> None:
    assert model_endpoints({"COPILOT_PROVIDER_BASE_URL": url}) == (expected,)


@pytest.mark.parametrize(
    "url", ["ftp://llm.example.com", "llm.example.com", "https://", "http://x:99999", "   "]
)
def test_an_unusable_provider_url_opens_nothing_for_it(url: str) -> None:
    assert set(model_endpoints({"COPILOT_PROVIDER_BASE_URL": url})) == COPILOT_RULES


def test_every_catalog_provider_is_reachable() -> None:
    catalog = {
        "providers": [
            {"id": "a", "baseUrl": "https://a.example.com/v1"},
            {"id": "b", "baseUrl": "http://b.example.com:8080"},
            {"id": "c"},
            {"id": "d", "baseUrl": 7},
            "not a provider",
        ]
    }
    rules = model_endpoints({"GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": json.dumps(catalog)})
    assert rules == (
        Rule("a.example.com", (443,), subdomains=False),
        Rule("b.example.com", (8080,), subdomains=False),
    )


def test_the_base_url_and_the_catalog_add_up() -> None:
    env = {
        "COPILOT_PROVIDER_BASE_URL": "https://one.example.com",
        "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": json.dumps(
            {"providers": [{"baseUrl": "https://two.example.com"}]}
        ),
    }
    assert [rule.host for rule in model_endpoints(env)] == ["one.example.com", "two.example.com"]


@pytest.mark.parametrize("token", ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"])
def test_a_platform_token_adds_the_copilot_api_hosts(token: str) -> None:
    env = {"COPILOT_PROVIDER_BASE_URL": "https://llm.example.com", token: "ghs_x"}
    rules = model_endpoints(env)
    assert rules[0] == Rule("llm.example.com", (443,), subdomains=False)
    assert set(rules[1:]) == COPILOT_RULES


def test_a_provider_without_a_token_gets_no_copilot_api_host() -> None:
    env = {"COPILOT_PROVIDER_BASE_URL": "https://llm.example.com", "GITHUB_TOKEN": "  "}
    rules = model_endpoints(env)
    assert rules == (Rule("llm.example.com", (443,), subdomains=False),)
    assert not Allowlist(rules).allows("api.githubcopilot.com", 443)


def test_no_provider_means_the_copilot_api() -> None:
    allowlist = Allowlist(model_endpoints({}))
    assert set(allowlist.rules) == COPILOT_RULES
    assert allowlist.allows("api.githubcopilot.com", 443)
    assert allowlist.allows("api.business.githubcopilot.com", 443)
    assert not allowlist.allows("api.githubcopilot.com", 80)


@pytest.mark.parametrize(
    "raw", ["", "  ", "not json", "[]", '{"providers": {}}', '{"providers": null}', "{", "7"]
)
def test_an_unreadable_catalog_adds_nothing(raw: str) -> None:
    env = {
        "COPILOT_PROVIDER_BASE_URL": "https://llm.example.com",
        "GH_AW_COPILOT_SDK_MULTI_PROVIDER_JSON": raw,
    }
    assert model_endpoints(env) == (Rule("llm.example.com", (443,), subdomains=False),)


def test_the_allowlist_is_the_model_endpoints_then_the_users_rules() -> None:
    env = {"COPILOT_PROVIDER_BASE_URL": "https://llm.example.com"}
    allowlist = build_allowlist(env, ["pypi.org", "registry.npmjs.org:443"])
    assert allowlist.hosts() == ("llm.example.com:443", "pypi.org", "registry.npmjs.org:443")


def test_one_bad_user_rule_refuses_the_allowlist() -> None:
    with pytest.raises(EgressRuleError, match=r"'https://pypi\.org'"):
        build_allowlist({}, ["pypi.org", "https://pypi.org"])
