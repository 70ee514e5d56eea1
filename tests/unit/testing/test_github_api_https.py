"""The fake GitHub's HTTPS mode: the throw-away certificates, the TLS
listener routing by host name, and the CONNECT proxy in front of it."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from copilot_driver.testing.fixtures import missing_component
from copilot_driver.testing.github_api import FakeGitHubCopilot
from copilot_driver.testing.github_api.tls import TestCertificates

Response = tuple[int, dict[str, str], Any]


def need_openssl() -> None:
    """Skip without `openssl`, but fail under CI (`CI=true`)."""
    if shutil.which("openssl") is None:
        missing_component("openssl", FileNotFoundError("the `openssl` command is not on PATH"))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGitHubCopilot]:
    need_openssl()
    with FakeGitHubCopilot(
        https=True, ghe_host="acme.ghe.com", extra_hosts={"x.test": "github"}
    ) as running:
        yield running


def proxy_port(fake: FakeGitHubCopilot) -> int:
    return int(fake.proxy_url.rsplit(":", 1)[1])


def through_proxy(
    fake: FakeGitHubCopilot, host: str, method: str, path: str, body: Any = None
) -> Response:
    """One HTTPS request to `host` tunnelled through the fake's proxy."""
    context = ssl.create_default_context(cafile=str(fake.ca_file))
    connection = http.client.HTTPSConnection("127.0.0.1", proxy_port(fake), context=context)
    connection.set_tunnel(host, 443)
    headers = {"Authorization": f"Bearer {fake.token}", "Content-Type": "application/json"}
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        got = {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()
    decoded = json.loads(payload) if payload else None
    return response.status, got, decoded


def connect(fake: FakeGitHubCopilot, target: str) -> bytes:
    """A raw CONNECT to the proxy; returns its status line."""
    with socket.create_connection(("127.0.0.1", proxy_port(fake)), timeout=5) as sock:
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return sock.recv(1024).split(b"\r\n", 1)[0]


def test_the_certificate_covers_the_real_hosts_and_speaks_http1_only(
    fake: FakeGitHubCopilot,
) -> None:
    context = ssl.create_default_context(cafile=str(fake.ca_file))
    context.set_alpn_protocols(["h2", "http/1.1"])
    with (
        socket.create_connection(("127.0.0.1", fake.tls_port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="api.github.com") as tls,
    ):
        certificate: Any = tls.getpeercert()
        names = {value for kind, value in certificate["subjectAltName"] if kind == "DNS"}
        assert tls.selected_alpn_protocol() == "http/1.1"
    for plan in ("individual", "business", "enterprise"):
        for prefix in ("api", "telemetry", "proxy", "origin-tracker"):
            assert f"{prefix}.{plan}.githubcopilot.com" in names
    assert {
        "api.github.com",
        "github.com",
        "api.githubcopilot.com",
        "copilot-proxy.githubusercontent.com",
        "origin-tracker.githubusercontent.com",
        "copilot-telemetry.githubusercontent.com",
        "api.acme.ghe.com",
        "copilot-api.acme.ghe.com",
        "x.test",
    } <= names


def test_the_user_answer_names_the_real_copilot_hosts(fake: FakeGitHubCopilot) -> None:
    status, headers, body = through_proxy(fake, "api.github.com", "GET", "/copilot_internal/user")
    assert status == 200
    assert headers["x-github-request-id"]
    assert body["endpoints"] == {
        "api": "https://api.individual.githubcopilot.com",
        "telemetry": "https://telemetry.individual.githubcopilot.com",
        "proxy": "https://proxy.individual.githubcopilot.com",
        "origin-tracker": "https://origin-tracker.individual.githubcopilot.com",
    }
    request = fake.requests_to("/copilot_internal/user")[-1]
    assert (request.host, request.secure) == ("api.github.com", True)


def test_the_plan_picks_the_endpoint_hosts(fake: FakeGitHubCopilot) -> None:
    fake.switch(plan="business")
    try:
        body = through_proxy(fake, "api.github.com", "GET", "/copilot_internal/user")[2]
    finally:
        fake.switch(plan="individual")
    assert body["endpoints"]["api"] == "https://api.business.githubcopilot.com"


def test_a_ghe_host_has_its_own_copilot_hosts(fake: FakeGitHubCopilot) -> None:
    body = through_proxy(fake, "api.acme.ghe.com", "GET", "/copilot_internal/user")[2]
    assert body["endpoints"]["api"] == "https://copilot-api.acme.ghe.com"
    assert body["endpoints"]["telemetry"] == "https://copilot-telemetry-service.acme.ghe.com"
    assert through_proxy(fake, "copilot-api.acme.ghe.com", "GET", "/models")[0] == 200
    assert through_proxy(fake, "x.test", "GET", "/copilot_internal/user")[0] == 200


def test_each_host_serves_only_its_own_paths(fake: FakeGitHubCopilot) -> None:
    copilot = "api.individual.githubcopilot.com"
    assert through_proxy(fake, copilot, "GET", "/models")[0] == 200
    assert through_proxy(fake, "api.github.com", "GET", "/models")[0] == 404
    assert through_proxy(fake, copilot, "GET", "/copilot_internal/user")[0] == 404
    assert through_proxy(fake, "github.com", "GET", "/copilot_internal/user")[0] == 404
    status, _, body = through_proxy(
        fake, "telemetry.individual.githubcopilot.com", "POST", "/telemetry", {"a": 1}
    )
    assert status == 200
    assert body["itemsAccepted"] == 1


def test_the_proxy_tunnels_served_hosts_and_refuses_others(fake: FakeGitHubCopilot) -> None:
    before = len(fake.connected_hosts())
    assert connect(fake, "example.com:443") == b"HTTP/1.1 403 Forbidden"
    assert connect(fake, "api.github.com:80") == b"HTTP/1.1 403 Forbidden"
    # A probe: the tunnel opens and closes before any TLS, which the fake takes quietly.
    assert connect(fake, "API.GitHub.com:443") == b"HTTP/1.1 200 Connection established"
    assert fake.connected_hosts()[before:] == ["example.com", "api.github.com", "api.github.com"]
    assert fake.refused_hosts()[-2:] == ["example.com", "api.github.com"]
    tunnelled = [record.tunnelled for record in fake.log.connects()[before:]]
    assert tunnelled == [False, False, True]


def test_the_proxy_refuses_anything_but_connect(fake: FakeGitHubCopilot) -> None:
    with socket.create_connection(("127.0.0.1", proxy_port(fake)), timeout=5) as sock:
        sock.sendall(b"GET http://api.github.com/ HTTP/1.1\r\nHost: api.github.com\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 405")


def test_the_sidecar_variables_of_the_https_mode(fake: FakeGitHubCopilot) -> None:
    env = fake.https_sidecar_env()
    assert env == {
        "COPILOT_GITHUB_TOKEN": fake.token,
        "HTTPS_PROXY": fake.proxy_url,
        "https_proxy": fake.proxy_url,
        "NODE_EXTRA_CA_CERTS": str(fake.ca_file),
    }
    assert "COPILOT_DEBUG_GITHUB_API_URL" not in env
    assert fake.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")


def test_close_removes_the_certificates_and_ends_open_tunnels() -> None:
    need_openssl()
    before = set(threading.enumerate())
    fake = FakeGitHubCopilot(https=True)
    folder = fake.ca_file.parent
    context = ssl.create_default_context(cafile=str(fake.ca_file))
    raw = socket.create_connection(("127.0.0.1", proxy_port(fake)), timeout=5)
    raw.sendall(b"CONNECT api.github.com:443 HTTP/1.1\r\n\r\n")
    assert raw.recv(1024).startswith(b"HTTP/1.1 200")
    tls = context.wrap_socket(raw, server_hostname="api.github.com")  # an idle tunnel
    fake.close()
    tls.close()
    assert not folder.exists()
    assert fake.active_requests() == 0
    assert set(threading.enumerate()) <= before


def test_certificates_need_a_host_and_clean_up_after_themselves() -> None:
    with pytest.raises(ValueError, match="host"):
        TestCertificates([])
    need_openssl()
    certificates = TestCertificates(["Example.TEST"])
    assert certificates.hosts == ["example.test"]
    assert not (certificates.folder / "ca.key").exists()  # nothing more is signed
    certificates.remove()
    assert not certificates.folder.exists()
