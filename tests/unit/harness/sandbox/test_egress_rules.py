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
    github_host_rules,
    is_ip_literal,
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


# -- the hosts the CLI's GitHub settings name ------------------------------------------------

TOKEN = {"COPILOT_GITHUB_TOKEN": "github_pat_x"}


@pytest.mark.parametrize(
    "env",
    [
        {"GH_HOST": "acme.ghe.com"},
        {"GH_HOST": "https://acme.ghe.com/"},
        {"GH_HOST": "github.com", "COPILOT_GH_HOST": "ACME.ghe.com."},
    ],
)
def test_a_github_enterprise_host_and_its_subdomains_are_allowed(env: dict[str, str]) -> None:
    allowlist = build_allowlist({**TOKEN, **env}, ())

    for host in ("acme.ghe.com", "api.acme.ghe.com", "copilot-api.acme.ghe.com"):
        assert allowlist.allows(host, 443), host
    assert not allowlist.allows("evilacme.ghe.com", 443)
    assert not allowlist.allows("api.acme.ghe.com", 8443)


def test_api_urls_allow_exactly_their_host_and_port() -> None:
    env = {
        **TOKEN,
        "COPILOT_API_URL": "https://copilot.example.net:8443/x",
        "COPILOT_DEBUG_GITHUB_API_URL": "http://127.0.0.1:18080",
    }
    allowlist = build_allowlist(env, ())

    assert allowlist.allows("copilot.example.net", 8443)
    assert not allowlist.allows("copilot.example.net", 443)
    assert not allowlist.allows("api.copilot.example.net", 8443)
    assert allowlist.allows("127.0.0.1", 18080)
    assert not allowlist.allows("127.0.0.1", 18081)


@pytest.mark.parametrize(
    "env",
    [
        {"GH_HOST": "github.com"},
        {"GH_HOST": "not a host"},
        {"GH_HOST": "http://[::1"},
        {"GH_HOST": ""},
        {"COPILOT_API_URL": "http://[::1"},
        {"COPILOT_DEBUG_GITHUB_API_URL": "nonsense"},
    ],
)
def test_values_that_name_no_other_host_add_nothing(env: dict[str, str]) -> None:
    assert build_allowlist({**TOKEN, **env}, ()).hosts() == build_allowlist(TOKEN, ()).hosts()


def test_github_hosts_are_not_added_for_a_provider_without_a_token() -> None:
    env = {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1", "GH_HOST": "acme.ghe.com"}
    assert not build_allowlist(env, ()).allows("api.acme.ghe.com", 443)


def test_copilot_gh_host_wins_over_gh_host() -> None:
    env = {**TOKEN, "GH_HOST": "other.ghe.com", "COPILOT_GH_HOST": "acme.ghe.com"}
    allowlist = build_allowlist(env, ())

    assert allowlist.allows("api.acme.ghe.com", 443)
    assert not allowlist.allows("other.ghe.com", 443)
    assert not allowlist.allows("api.other.ghe.com", 443)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"GH_HOST": "acme.ghe.com"}, [Rule("acme.ghe.com", WEB_PORTS, subdomains=True)]),
        ({"GH_HOST": "https://acme.ghe.com"}, [Rule("acme.ghe.com", WEB_PORTS, subdomains=True)]),
        (
            {"GH_HOST": " https://ACME.ghe.com:8443/path "},
            [Rule("acme.ghe.com", WEB_PORTS, subdomains=True)],
        ),
        ({"COPILOT_GH_HOST": "10.1.2.3"}, [Rule("10.1.2.3", WEB_PORTS, subdomains=False)]),
        (
            {"COPILOT_GH_HOST": "", "GH_HOST": "acme.ghe.com"},
            [Rule("acme.ghe.com", WEB_PORTS, True)],
        ),
        (
            {"COPILOT_API_URL": "https://copilot.example.net:8443/x"},
            [Rule("copilot.example.net", (8443,), subdomains=False)],
        ),
        (
            {"COPILOT_API_URL": "http://copilot.example.net"},
            [Rule("copilot.example.net", (80,), subdomains=False)],
        ),
        (
            {"COPILOT_DEBUG_GITHUB_API_URL": "http://127.0.0.1:18080"},
            [Rule("127.0.0.1", (18080,), subdomains=False)],
        ),
        (
            {
                "GH_HOST": "acme.ghe.com",
                "COPILOT_API_URL": "https://api.acme.ghe.com",
                "COPILOT_DEBUG_GITHUB_API_URL": "http://[::1]:18080/api",
            },
            [
                Rule("acme.ghe.com", WEB_PORTS, subdomains=True),
                Rule("api.acme.ghe.com", (443,), subdomains=False),
                Rule("::1", (18080,), subdomains=False),
            ],
        ),
        ({"GH_HOST": "GitHub.com."}, []),
        ({"GH_HOST": "https://github.com/"}, []),
        ({"GH_HOST": "   "}, []),
        ({"GH_HOST": "acme.ghe.com/path"}, []),
        ({"GH_HOST": "https://"}, []),
        ({"COPILOT_API_URL": "copilot.example.net"}, []),
        ({"COPILOT_API_URL": "ftp://copilot.example.net"}, []),
        ({"COPILOT_DEBUG_GITHUB_API_URL": "http://127.0.0.1:99999"}, []),
        ({}, []),
    ],
)
def test_the_clis_github_settings_name_these_hosts(
    env: dict[str, str], expected: list[Rule]
) -> None:
    assert github_host_rules(env) == expected


def test_without_a_provider_the_github_hosts_are_added_even_without_a_token() -> None:
    allowlist = build_allowlist({"GH_HOST": "acme.ghe.com"}, ())

    assert allowlist.allows("copilot-api.acme.ghe.com", 443)
    assert allowlist.allows("api.githubcopilot.com", 443)


def test_a_provider_with_a_token_gets_the_github_hosts_too() -> None:
    env = {**TOKEN, "COPILOT_PROVIDER_BASE_URL": "https://llm.example.com", "GH_HOST": "a.ghe.com"}
    allowlist = build_allowlist(env, ())

    assert allowlist.allows("llm.example.com", 443)
    assert allowlist.allows("api.a.ghe.com", 443)


GITHUB_SETTINGS = st.sampled_from(
    ["GH_HOST", "COPILOT_GH_HOST", "COPILOT_API_URL", "COPILOT_DEBUG_GITHUB_API_URL"]
)
SETTING_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="htps:/[]@.acme-ghe1:8%#?\x00 ", max_size=40),
    st.builds(
        "{}://{}{}".format,
        st.sampled_from(["http", "https", "ftp", "HTTP", ""]),
        st.text(alphabet="abc.-[]:@0123456789", max_size=20),
        st.sampled_from(["", "/", "/x", ":443", ":0", ":65536"]),
    ),
)


@given(st.dictionaries(GITHUB_SETTINGS, SETTING_TEXT, max_size=4))
def test_any_github_setting_is_read_without_raising_into_normal_rules(
    env: dict[str, str],
) -> None:
    rules = github_host_rules(env)

    assert len(rules) <= 3
    for rule in rules:
        assert normalise_host(rule.host) == rule.host
        assert rule.host != "github.com"
        assert all(0 < port < 65536 for port in rule.ports)
        assert rule.subdomains == (rule.ports == WEB_PORTS and not is_ip_literal(rule.host))
    Allowlist(tuple(rules)).allows("api.github.com", 443)


ENTERPRISE_LABELS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8),
    min_size=1,
    max_size=3,
).map(".".join)


@given(
    ENTERPRISE_LABELS,
    st.sampled_from(["GH_HOST", "COPILOT_GH_HOST"]),
    st.sampled_from(["{}", "https://{}", "https://{}/", "{}."]),
    st.text(alphabet="abcxyz-", min_size=1, max_size=6),
)
def test_an_enterprise_host_allows_itself_and_its_subdomains_never_a_look_alike(
    name: str, variable: str, form: str, prefix: str
) -> None:
    enterprise = f"{name}.ghe.com"
    allowlist = Allowlist(tuple(github_host_rules({variable: form.format(enterprise)})))

    for host in (enterprise, f"api.{enterprise}", f"copilot-api.{enterprise}"):
        assert allowlist.allows(host, 443)
        assert allowlist.allows(host, 80)
        assert not allowlist.allows(host, 8443)
    for look_alike in (f"{prefix}{enterprise}", f"{enterprise}.{prefix}.example", "ghe.com"):
        assert not allowlist.allows(look_alike, 443), look_alike


@given(st.integers(1, 65535), st.sampled_from(["COPILOT_API_URL", "COPILOT_DEBUG_GITHUB_API_URL"]))
def test_an_api_url_allows_only_its_own_port(port: int, variable: str) -> None:
    allowlist = Allowlist(tuple(github_host_rules({variable: f"https://api.example.net:{port}/"})))

    assert allowlist.allows("api.example.net", port)
    assert not allowlist.allows("api.example.net", port % 65535 + 1)
    assert not allowlist.allows("x.api.example.net", port)
    assert not allowlist.allows("example.net", port)


@pytest.mark.parametrize(
    "env",
    [
        {"GH_HOST": "acme.ghe.com"},
        {"COPILOT_API_URL": "https://copilot.example.net:8443/x"},
        {"COPILOT_DEBUG_GITHUB_API_URL": "http://127.0.0.1:18080"},
    ],
)
def test_the_github_settings_come_after_the_copilot_api_hosts(env: dict[str, str]) -> None:
    rules = model_endpoints({**TOKEN, **env})
    defaults = model_endpoints(TOKEN)

    assert rules[: len(defaults)] == defaults
    assert rules[len(defaults) :] == tuple(github_host_rules(env))
    assert len(rules) == len(defaults) + 1


# -- what a refusal says: the rule meant, as the option takes it -------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "https://example.com/path",
            "'https://example.com/path' is a URL: give the host (and :port) alone, without "
            "scheme or path: --allow-domain example.com",
        ),
        (
            "http://Example.com:8443/x",
            "'http://Example.com:8443/x' is a URL: give the host (and :port) alone, without "
            "scheme or path: --allow-domain example.com:8443",
        ),
        (
            "*.example.com",
            "'*.example.com' is a wildcard, which a rule cannot hold: the plain name already "
            "covers every subdomain: --allow-domain example.com (it allows example.com and "
            "every name under it; no rule allows the subdomains alone)",
        ),
        (
            "example.com/simple",
            "'example.com/simple' holds a path: the proxy allows hosts, never paths: give the "
            "host alone: --allow-domain example.com",
        ),
        (
            "user:secret@example.com",
            "'user:secret@example.com' holds a user name: give the host alone (the proxy "
            "passes no credentials): --allow-domain example.com",
        ),
        (
            "example.com:http",
            "'example.com:http' has no valid port (1-65535) after the colon: give a port from "
            "1 to 65535, or none for ports 80 and 443: --allow-domain example.com:443 or "
            "--allow-domain example.com",
        ),
        (
            "*",
            "'*' is a wildcard, which a rule cannot hold: name each host the tools need: "
            "--allow-domain pypi.org or --allow-domain registry.npmjs.org:443",
        ),
    ],
)
def test_a_refusal_names_the_rule_meant_as_the_option_takes_it(text: str, said: str) -> None:
    with pytest.raises(EgressRuleError) as error:
        parse_rule(text)
    assert str(error.value) == said


def test_a_refusal_is_said_in_another_form_with_the_same_fix() -> None:
    with pytest.raises(EgressRuleError) as error:
        parse_rule("*.pypi.org")
    assert error.value.said('allowed-domains: "*.pypi.org"', lambda rule: f"`- {rule}`") == (
        'allowed-domains: "*.pypi.org" is a wildcard, which a rule cannot hold: the plain '
        "name already covers every subdomain: `- pypi.org` (it allows pypi.org and every name "
        "under it; no rule allows the subdomains alone)"
    )


@given(st.text(max_size=40) | st.from_regex(r"(https?://|\*\.|\.)?[a-z.]{1,20}(:\w{0,6})?(/\w*)?"))
def test_every_rule_a_refusal_suggests_is_taken_and_allows_what_was_meant(text: str) -> None:
    """No advice leads to another refusal; a wildcard's suggestion allows every name the
    wildcard meant (its subdomains)."""
    error = _refusal(text)
    if error is None:
        return
    assert error.instead
    rules = [parse_rule(rule) for rule in error.instead]
    if text.strip().startswith("*.") and error.note:
        assert rules[0].allows(f"sub.{rules[0].host}", rules[0].ports[0])


def _refusal(text: str) -> EgressRuleError | None:
    try:
        parse_rule(text)
    except EgressRuleError as error:
        return error
    return None
