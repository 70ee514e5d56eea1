"""A throw-away certificate authority and one server certificate for the
real host names, made with the system `openssl` in a temporary folder.

The CLI is told to trust the authority with `NODE_EXTRA_CA_CERTS=<ca.pem>`
(its native HTTP stack honours it too). Both keys are P-256 (fast to make,
accepted by rustls); both certificates last two days.
"""

from __future__ import annotations

import secrets
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

OPENSSL_TIMEOUT_S = 30.0
CA_NAME = "copilot-driver test CA (throw-away)"

_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = {cn}
[ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = {sans}
"""


def _openssl(folder: Path, *args: str) -> None:
    """Run `openssl ARGS` in `folder`: FileNotFoundError when there is no
    `openssl`, RuntimeError (quoting its stderr) when it fails."""
    binary = shutil.which("openssl")
    if binary is None:
        raise FileNotFoundError("the `openssl` command is not on PATH (the HTTPS mode needs it)")
    try:
        subprocess.run(
            [binary, *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=OPENSSL_TIMEOUT_S,
            check=True,
        )
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"openssl {args[0]} failed: {error.stderr.strip()}") from error
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuntimeError(f"openssl {args[0]} failed: {error}") from error


class TestCertificates:
    """`ca_file` (the authority to trust) and a server certificate whose
    subject alternative names are `hosts` (and 127.0.0.1), in a fresh
    temporary folder that `remove()` deletes."""

    __test__ = False  # not a pytest test class

    def __init__(self, hosts: Iterable[str]) -> None:
        self.hosts = sorted({host.lower() for host in hosts})
        if not self.hosts:
            raise ValueError("at least one host name is needed")
        self.folder = Path(tempfile.mkdtemp(prefix="fake-github-tls-"))
        try:
            self._make()
        except BaseException:
            self.remove()
            raise

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def cert_file(self) -> Path:
        return self.folder / "server.pem"

    @property
    def key_file(self) -> Path:
        return self.folder / "server.key"

    def _make(self) -> None:
        sans = ", ".join([*(f"DNS:{host}" for host in self.hosts), "IP:127.0.0.1"])
        config = self.folder / "openssl.cnf"
        config.write_text(_CONFIG.format(cn=CA_NAME, sans=sans), encoding="utf-8")
        new_key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
        _openssl(
            self.folder, "req", "-x509", "-config", "openssl.cnf", "-extensions", "ca",
            *new_key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        )  # fmt: skip
        _openssl(
            self.folder, "req", "-new", "-config", "openssl.cnf", *new_key,
            "-subj", f"/CN={self.hosts[0]}", "-keyout", "server.key", "-out", "server.csr",
        )  # fmt: skip
        _openssl(
            self.folder, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem",
            "-CAkey", "ca.key", "-set_serial", f"0x{secrets.token_hex(12)}", "-days", "2",
            "-extfile", "openssl.cnf", "-extensions", "leaf", "-out", "server.pem",
        )  # fmt: skip
        (self.folder / "ca.key").unlink()  # nothing more is signed with it

    def server_context(self) -> ssl.SSLContext:
        """A server-side context: this certificate, TLS 1.2+, ALPN http/1.1 only."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_file, self.key_file)
        context.set_alpn_protocols(["http/1.1"])
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts only this authority (for tests)."""
        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.set_alpn_protocols(["http/1.1"])
        return context

    def remove(self) -> None:
        """Delete the folder and everything in it."""
        shutil.rmtree(self.folder, ignore_errors=True)
