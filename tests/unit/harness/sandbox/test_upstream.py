"""The harness's own proxy, read from its environment: which one, and which hosts skip it."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.harness.sandbox.upstream import (
    Upstream,
    UpstreamProxy,
    UpstreamProxyError,
    proxy_passwords,
)

PASSWORD = "s3cret/pa%40ss"
"""A password with a percent-encoded `@` in it: `s3cret/pa@ss` once decoded."""


def test_no_proxy_variables_mean_direct_connections() -> None:
    upstream = Upstream.from_env({})
    assert upstream == Upstream()
    assert upstream.for_target("api.github.com", 443, tunnel=True) is None


def test_tunnels_take_https_proxy_and_plain_requests_http_proxy() -> None:
    upstream = Upstream.from_env(
        {"HTTPS_PROXY": "http://tls-proxy:3128", "http_proxy": "plain-proxy:8080"}
    )

    assert upstream.for_target("api.github.com", 443, tunnel=True) == UpstreamProxy(
        "tls-proxy", 3128, None, "HTTPS_PROXY"
    )
    assert upstream.for_target("example.com", 80, tunnel=False) == UpstreamProxy(
        "plain-proxy", 8080, None, "http_proxy"
    )


def test_the_upper_case_name_wins_and_all_proxy_is_the_fallback() -> None:
    upstream = Upstream.from_env(
        {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2", "ALL_PROXY": "all:3"}
    )
    assert upstream.tunnel is not None
    assert upstream.tunnel.host == "upper"
    assert upstream.plain is not None
    assert (upstream.plain.host, upstream.plain.port) == ("all", 3)


def test_a_user_and_password_become_proxy_authorization_never_shown() -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": f"http://me%40corp:{PASSWORD}@proxy:3128"})
    proxy = upstream.tunnel
    assert proxy is not None

    expected = base64.b64encode(b"me@corp:s3cret/pa@ss").decode()
    assert proxy.authorization == f"Basic {expected}"
    assert "s3cret" not in repr(proxy)
    assert "s3cret" not in str(proxy)
    assert str(proxy) == "proxy:3128"


@pytest.mark.parametrize(
    "value", ["https://proxy:3128", "socks5://proxy:1080", "http://proxy:99999", "http://:80"]
)
def test_an_unusable_proxy_names_the_variable_and_not_the_password(value: str) -> None:
    with_password = value.replace("://", f"://me:{PASSWORD}@", 1)
    with pytest.raises(UpstreamProxyError) as raised:
        Upstream.from_env({"https_proxy": with_password})

    message = str(raised.value)
    assert message.startswith("https_proxy")
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("no_proxy", "host", "port", "direct"),
    [
        ("*", "api.github.com", 443, True),
        ("example.com", "example.com", 443, True),
        ("example.com", "api.example.com", 443, True),
        ("example.com", "badexample.com", 443, False),
        (".example.com", "api.example.com", 443, True),
        ("*.example.com", "api.example.com", 443, True),
        ("example.com:8443", "example.com", 8443, True),
        ("example.com:8443", "example.com", 443, False),
        ("10.0.0.0/8", "10.1.2.3", 443, True),
        ("10.0.0.0/8", "11.1.2.3", 443, False),
        ("10.0.0.0/8", "ten.example", 443, False),
        ("127.0.0.1", "127.0.0.1", 9, True),
        ("[::1]", "::1", 443, True),
        ("internal, .corp , github.com", "api.github.com", 443, True),
        ("internal, .corp", "api.github.com", 443, False),
        ("", "api.github.com", 443, False),
    ],
)
def test_no_proxy_sends_matching_targets_direct(
    no_proxy: str, host: str, port: int, direct: bool
) -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": no_proxy})
    assert (upstream.for_target(host, port, tunnel=True) is None) == direct


def test_proxy_passwords_are_found_raw_and_decoded() -> None:
    env = {
        "HTTPS_PROXY": f"http://me:{PASSWORD}@proxy:3128",
        "http_proxy": "http://nobody@proxy:80",
        "NO_PROXY": "x",
    }
    assert proxy_passwords(env) == (PASSWORD, "s3cret/pa@ss")
    assert proxy_passwords({"HTTPS_PROXY": "http://proxy:3128"}) == ()
    assert proxy_passwords({"HTTPS_PROXY": "http://[::1"}) == ()


# -- which variable, in which case ------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "tunnel", "plain"),
    [
        ({"https_proxy": "http://a:1"}, ("a", 1, "https_proxy"), None),
        ({"HTTPS_PROXY": "  ", "https_proxy": "http://a:1"}, ("a", 1, "https_proxy"), None),
        ({"http_proxy": "b:2"}, None, ("b", 2, "http_proxy")),
        ({"all_proxy": "c:3"}, ("c", 3, "all_proxy"), ("c", 3, "all_proxy")),
        (
            {"ALL_PROXY": "c:3", "all_proxy": "d:4", "HTTP_PROXY": "b:2"},
            ("c", 3, "ALL_PROXY"),
            ("b", 2, "HTTP_PROXY"),
        ),
        ({"HTTPS_PROXY": "http://PROXY.Corp:8080/"}, ("proxy.corp", 8080, "HTTPS_PROXY"), None),
        ({"HTTPS_PROXY": "HTTP://proxy"}, ("proxy", 80, "HTTPS_PROXY"), None),
        ({"HTTPS_PROXY": "http://[::1]:3128"}, ("::1", 3128, "HTTPS_PROXY"), None),
    ],
)
def test_each_kind_of_connection_takes_its_variable(
    env: dict[str, str],
    tunnel: tuple[str, int, str] | None,
    plain: tuple[str, int, str] | None,
) -> None:
    upstream = Upstream.from_env(env)

    def seen(proxy: UpstreamProxy | None) -> tuple[str, int, str] | None:
        return None if proxy is None else (proxy.host, proxy.port, proxy.variable)

    assert seen(upstream.tunnel) == tunnel
    assert seen(upstream.plain) == plain
    assert seen(upstream.for_target("api.github.com", 443, tunnel=True)) == tunnel
    assert seen(upstream.for_target("example.com", 80, tunnel=False)) == plain


def test_an_ipv6_proxy_is_shown_in_brackets() -> None:
    proxy = Upstream.from_env({"HTTPS_PROXY": "http://[::1]:3128"}).tunnel
    assert str(proxy) == "[::1]:3128"


def test_no_proxy_in_lower_case_counts_and_the_upper_case_one_wins() -> None:
    lower = Upstream.from_env({"HTTPS_PROXY": "p:1", "no_proxy": "github.com"})
    both = Upstream.from_env({"HTTPS_PROXY": "p:1", "NO_PROXY": "a.b", "no_proxy": "github.com"})

    assert lower.for_target("api.github.com", 443, tunnel=True) is None
    assert both.no_proxy == ("a.b",)
    assert both.for_target("api.github.com", 443, tunnel=True) is not None


def test_no_proxy_applies_to_plain_requests_too() -> None:
    upstream = Upstream.from_env({"ALL_PROXY": "p:1", "NO_PROXY": "Internal.Example "})
    assert upstream.for_target("wiki.internal.example", 80, tunnel=False) is None
    assert upstream.for_target("wiki.external.example", 80, tunnel=False) is not None


@pytest.mark.parametrize(
    ("userinfo", "pair"),
    [
        ("user", b"user:"),
        ("user:", b"user:"),
        (":only-password", b":only-password"),
        ("us%3Aer:pa:ss", b"us:er:pa:ss"),
        ("me:p@ss@word", b"me:p@ss@word"),
        ("me:caf%C3%A9", "me:café".encode()),
    ],
)
def test_the_userinfo_is_decoded_into_basic_credentials(userinfo: str, pair: bytes) -> None:
    proxy = Upstream.from_env({"HTTPS_PROXY": f"http://{userinfo}@proxy:3128"}).tunnel

    assert proxy is not None
    assert proxy.authorization == "Basic " + base64.b64encode(pair).decode()
    assert (proxy.host, proxy.port) == ("proxy", 3128)


def test_a_proxy_without_userinfo_sends_no_credentials() -> None:
    proxy = Upstream.from_env({"HTTPS_PROXY": "proxy:3128"}).tunnel
    assert proxy is not None
    assert proxy.authorization is None


def test_a_host_and_port_without_a_scheme_keep_their_userinfo() -> None:
    proxy = Upstream.from_env({"HTTPS_PROXY": "me:pw@proxy:3128"}).tunnel
    assert proxy == UpstreamProxy(
        "proxy", 3128, "Basic " + base64.b64encode(b"me:pw").decode(), "HTTPS_PROXY"
    )


def test_no_repr_shows_the_credentials() -> None:
    upstream = Upstream.from_env({"ALL_PROXY": f"http://me:{PASSWORD}@proxy:3128"})
    proxy = upstream.tunnel
    assert proxy is not None
    assert proxy.authorization is not None
    encoded = proxy.authorization.removeprefix("Basic ")

    for shown in (repr(upstream), str(upstream), repr(proxy), f"{proxy!r}"):
        assert "s3cret" not in shown
        assert encoded not in shown
        assert "Basic" not in shown


@pytest.mark.parametrize(
    "value",
    [
        "http://proxy:abc",
        "http://proxy:-1",
        "proxy:99999",
        "http://[::1",
        "ftp://proxy:21",
        "socks5h://proxy:1080",
        "http:///path-only",
    ],
)
@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_every_unusable_proxy_variable_is_named_without_its_password(
    value: str, variable: str
) -> None:
    with_password = (
        value.replace("://", f"://me:{PASSWORD}@", 1)
        if "://" in value
        else f"me:{PASSWORD}@{value}"
    )
    with pytest.raises(UpstreamProxyError) as raised:
        Upstream.from_env({variable: with_password})

    message = str(raised.value)
    assert message.startswith(f"{variable}: ")
    assert "s3cret" not in message
    assert "http://[user:password@]host:port" in message


PASSWORD_CANARY = "pw-canary"


@given(
    st.sampled_from(["https", "socks5", "http", "", "ftp"]),
    st.text(max_size=20),
    st.sampled_from(["proxy:abc", "proxy:70000", "[::1", ":80", "proxy:3128", "[::1]:1"]),
)
def test_a_proxy_password_never_appears_in_a_refusal(
    scheme: str, password: str, address: str
) -> None:
    prefix = f"{scheme}://" if scheme else ""
    value = f"{prefix}me:{PASSWORD_CANARY}{password}@{address}"
    try:
        Upstream.from_env({"HTTPS_PROXY": value})
    except UpstreamProxyError as error:
        message = str(error)
    else:
        message = ""
    assert PASSWORD_CANARY not in message


def test_a_proxy_without_a_host_is_not_told_its_scheme_is_wrong() -> None:
    with pytest.raises(UpstreamProxyError) as raised:
        Upstream.from_env({"HTTPS_PROXY": "http://:80"})
    assert "not http://" not in str(raised.value)


def test_port_zero_is_refused() -> None:
    with pytest.raises(UpstreamProxyError):
        Upstream.from_env({"HTTPS_PROXY": "http://proxy:0"})


# -- NO_PROXY, more ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("no_proxy", "host", "port", "direct"),
    [
        ("127.0.0.1:8080", "127.0.0.1", 8080, True),
        ("127.0.0.1:8080", "127.0.0.1", 8081, False),
        ("fd00::/8", "fd12::1", 443, True),
        ("fd00::/8", "fe80::1", 443, False),
        ("10.0.0.0/8", "fd12::1", 443, False),
        ("::1", "::1", 443, True),
        ("[::1]", "::2", 443, False),
        ("a.example b.example", "x.b.example", 443, True),
        ("*.", "example.com", 443, False),
        (".", "example.com", 443, False),
        ("example.com:http", "example.com", 80, False),
        ("EXAMPLE.com", "api.example.com", 443, True),
        ("com", "api.example.com", 443, True),
        ("*", "127.0.0.1", 1, True),
    ],
)
def test_more_no_proxy_entries(no_proxy: str, host: str, port: int, direct: bool) -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": "http://proxy:3128", "no_proxy": no_proxy})
    assert (upstream.for_target(host, port, tunnel=True) is None) == direct


def test_an_ipv6_no_proxy_entry_with_a_port_matches_that_port() -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "[::1]:8080"})
    assert upstream.for_target("::1", 8080, tunnel=True) is None


LABELS = st.lists(st.sampled_from(["a", "b", "ab", "ba", "example", "com"]), min_size=1, max_size=4)


@given(LABELS.map(".".join), LABELS.map(".".join), st.sampled_from(["", ".", "*."]))
def test_a_no_proxy_name_matches_itself_and_its_subdomains_only(
    name: str, host: str, prefix: str
) -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": "p:1", "NO_PROXY": prefix + name})
    direct = upstream.for_target(host, 443, tunnel=True) is None
    assert direct == (host == name or host.endswith("." + name))


# -- passwords to mask ------------------------------------------------------------------------


def test_every_proxy_variables_password_is_found_once() -> None:
    env = {
        "HTTPS_PROXY": "http://a:one@p:1",
        "https_proxy": "http://a:one@p:1",
        "HTTP_PROXY": "b:two@p:2",
        "http_proxy": "http://c:th%20ree@p:3",
        "ALL_PROXY": "http://d:@p:4",
        "all_proxy": "socks5://e:four@p:5",
        "NO_PROXY": "f:five@p",
    }
    assert proxy_passwords(env) == ("one", "two", "th%20ree", "th ree", "four")


@given(
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="@"),
        min_size=1,
        max_size=20,
    )
)
def test_a_password_is_always_found_to_be_masked(password: str) -> None:
    env = {"HTTPS_PROXY": f"http://me:{password}@proxy:3128"}
    found = proxy_passwords(env)
    assert password in found


# -- any value, any NO_PROXY -----------------------------------------------------------------


@given(
    st.sampled_from(["http://", "HTTP://", "https://", "socks5://", "", "http:/", "x://"]),
    st.text(max_size=8),
    st.text(max_size=8),
    st.text(max_size=16),
    st.sampled_from(["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy"]),
)
def test_any_proxy_value_is_read_or_refused_and_its_password_never_shown(
    scheme: str, user: str, password: str, address: str, variable: str
) -> None:
    value = f"{scheme}{user}:{PASSWORD_CANARY}{password}@{address}"
    refusal: str | None = None
    try:
        upstream = Upstream.from_env({variable: value})
    except UpstreamProxyError as error:
        refusal = str(error)
    if refusal is not None:
        assert refusal.startswith(f"{variable}: ")
        assert PASSWORD_CANARY not in refusal
        return
    proxies = [proxy for proxy in (upstream.tunnel, upstream.plain) if proxy is not None]
    assert proxies
    for proxy in proxies:
        assert proxy.variable == variable
        assert 0 < proxy.port < 65536
        assert PASSWORD_CANARY not in repr(proxy) + str(proxy) + repr(upstream)


@given(st.text(max_size=30), st.text(max_size=20), st.integers(0, 70000), st.booleans())
def test_any_no_proxy_and_target_give_the_proxy_or_a_direct_connection(
    no_proxy: str, host: str, port: int, tunnel: bool
) -> None:
    upstream = Upstream.from_env({"ALL_PROXY": "http://proxy:3128", "NO_PROXY": no_proxy})
    assert upstream.for_target(host, port, tunnel=tunnel) in (None, upstream.tunnel)


def test_the_lower_case_name_is_not_read_when_the_upper_case_one_is_set() -> None:
    """The lower-case name is never read when the upper-case one is set: it cannot stop
    the run; an unusable upper-case one does, whatever the lower-case one says."""
    ignored = Upstream.from_env({"HTTPS_PROXY": "http://good:1", "https_proxy": "socks5://x"})
    assert ignored.tunnel == UpstreamProxy("good", 1, None, "HTTPS_PROXY")

    with pytest.raises(UpstreamProxyError, match=r"^HTTPS_PROXY: "):
        Upstream.from_env({"HTTPS_PROXY": "socks5://x:1", "https_proxy": "http://good:1"})


@pytest.mark.parametrize("tunnel", [True, False])
def test_no_proxy_star_sends_everything_direct_both_ways(tunnel: bool) -> None:
    upstream = Upstream.from_env({"ALL_PROXY": "p:1", "no_proxy": "internal, *"})
    for host in ("api.github.com", "10.0.0.1", "::1"):
        assert upstream.for_target(host, 443, tunnel=tunnel) is None


def test_an_all_proxy_that_is_never_used_never_stops_the_run() -> None:
    env = {"HTTPS_PROXY": "http://a:1", "HTTP_PROXY": "http://b:2", "ALL_PROXY": "socks5://c:3"}
    upstream = Upstream.from_env(env)
    assert upstream.tunnel is not None
    assert upstream.tunnel.host == "a"
    with pytest.raises(UpstreamProxyError):
        Upstream.from_env({"HTTPS_PROXY": "http://a:1", "ALL_PROXY": "socks5://c:3"})


def test_a_no_proxy_name_with_a_trailing_dot_still_matches() -> None:
    upstream = Upstream.from_env({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com."})
    assert upstream.for_target("api.example.com", 443, tunnel=True) is None
