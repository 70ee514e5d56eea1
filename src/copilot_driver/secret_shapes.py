"""Secrets masked by their shape, whoever printed them: GitHub tokens by their format,
raw and inside base64 (at any byte alignment, in a whole blob or a piece of one cut
mid-group), and an HTTP Authorization header's credential. The Redactor applies these
to every line beside the secrets it was given; they need no list of secrets, so a
token the process was never given (a tool's `printenv`, a model that repeats one) is
masked all the same.
"""

from __future__ import annotations

import base64
import re

MASK = "***"

TO_URLSAFE = str.maketrans("+/", "-_")

GITHUB_TOKEN = re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
"""GitHub's token formats (personal, OAuth, user-to-server, server-to-server, refresh, and
fine-grained personal tokens), masked wherever they appear, as GitHub's own log masking
does: a token the process was never given (a tool's `printenv`, a model that repeats one)
is masked all the same."""


def stable_run(data: bytes, offset: int) -> tuple[str, int]:
    """`data`'s stable base64 characters at byte `offset` of its first group, and how
    many characters of that group come before them (see `base64_stable_parts`)."""
    encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
    first = -(-8 * offset // 6)
    return encoded[first : 8 * (offset + len(data)) // 6], first


MIN_ENCODED_TOKEN_CHARS = 32
"""Shortest base64 run searched for a GitHub token: a token has at least 24
characters (a prefix and 20 more), 32 base64 characters at any alignment."""
_TOKEN_BODY = re.compile(rb"[A-Za-z0-9]{20}")
_PAT_BODY = re.compile(rb"[A-Za-z0-9_]{20}")
_PREFIX_PROBES = tuple(
    (*stable_run(prefix, offset), offset + len(prefix), body)
    for prefix, body in (
        *((p.encode("ascii"), _TOKEN_BODY) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
        (b"github_pat_", _PAT_BODY),
    )
    for offset in range(3)
)
"""For each token prefix at each byte alignment: its stable base64 characters (the
probe), how many characters of its first group precede them, the index of the
token body's first byte counted from that group, and the body's pattern (as in
GITHUB_TOKEN)."""
_PROBE_FORMS = sorted(
    {f for probe, *_ in _PREFIX_PROBES for f in (probe, probe.translate(TO_URLSAFE))}
)
_ENCODED_TOKEN_PROBES = tuple(
    (head, tuple(form for form in _PROBE_FORMS if form.startswith(head)))
    for head in sorted({form[:2] for form in _PROBE_FORMS})
)
"""The probes in either alphabet, grouped by their first two characters: a line
without any of the few heads costs a few substring searches."""
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_ENCODED_TOKEN_CHARS},}}={{0,2}}")
_TO_STANDARD = str.maketrans("-_", "+/")


def _mask_encoded_tokens(text: str) -> str:
    """Every base64 run of `text` that encodes a GitHub token, masked whole."""
    return _BASE64_RUN.sub(lambda run: MASK if _holds_token(run.group(0)) else run.group(0), text)


def _holds_token(run: str) -> bool:
    """Whether some token prefix's probe in `run` is followed by a token body.

    A probe fixes where its base64 groups start, so decoding from there reads
    the body at its own alignment, wherever the run starts or ends: a whole
    blob, or a piece of one cut mid-group. Only the probes' neighbourhoods are
    decoded (32 characters each), so a long run costs little.
    """
    chars = run.rstrip("=").translate(_TO_STANDARD)
    for probe, first, body_byte, body in _PREFIX_PROBES:
        at = chars.find(probe)
        while at >= 0:
            start = at - first + 4 * (body_byte // 3)  # the group of the body's first byte
            if body.match(_decode_head(chars[start : start + 32]), body_byte % 3):
                return True
            at = chars.find(probe, at + 1)
    return False


def _decode_head(chars: str) -> bytes:
    """The whole bytes `chars` (standard base64, a group boundary first) encode."""
    usable = len(chars) - 1 if len(chars) % 4 == 1 else len(chars)
    try:
        return base64.b64decode(chars[:usable] + "=" * (-usable % 4), validate=True)
    except ValueError:
        return b""


MIN_HEADER_CREDENTIAL_CHARS = 16
"""Shortest Authorization header credential masked: 96 bits of base64, longer
than the words that follow a scheme in prose."""
_AUTHORIZATION_CREDENTIAL = re.compile(
    # spelled as found_in looks for it; the scheme in any case
    rf"((?:[Aa]uthorization|AUTHORIZATION):[ \t]*(?i:basic|bearer|token)[ \t]+)"
    rf"[A-Za-z0-9._~+/-]{{{MIN_HEADER_CREDENTIAL_CHARS},}}=*"
)


def _mask_header_credentials(text: str) -> str:
    """`text` with every Authorization header's credential masked, header kept."""
    return _AUTHORIZATION_CREDENTIAL.sub(rf"\1{MASK}", text)


def shaped_secret_in(text: str) -> bool:
    """Whether `text` may hold a token or a header credential (cheap substring probes
    first); False means `mask_shaped` leaves it unchanged."""
    if ("gh" in text or "github_pat_" in text) and GITHUB_TOKEN.search(text) is not None:
        return True
    if ("uthorization" in text or "UTHORIZATION" in text) and (
        _AUTHORIZATION_CREDENTIAL.search(text) is not None
    ):
        return True
    for head, probes in _ENCODED_TOKEN_PROBES:
        if head in text:
            for probe in probes:
                if probe in text:
                    return _BASE64_RUN.search(text) is not None
    return False


def mask_shaped(text: str) -> str:
    """`text` with every GitHub token (raw or in base64) and header credential masked."""
    return GITHUB_TOKEN.sub(MASK, _mask_header_credentials(_mask_encoded_tokens(text)))
