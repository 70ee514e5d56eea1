"""GitHub tokens masked by their format inside base64, and Authorization header
credentials, whatever the process was given."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copilot_driver.redaction import MASK, Redactor, base64_stable_parts

REDACTOR = Redactor([])
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN = st.builds(
    lambda prefix, body: prefix + body,
    st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    st.text(_ALNUM, min_size=24, max_size=60),
)
CHECKOUT_TOKEN = "ghs_" + "a1B2" * 9
CHECKOUT_HEADER = "AUTHORIZATION: basic " + base64.b64encode(
    f"x-access-token:{CHECKOUT_TOKEN}".encode()
).decode("ascii")


def test_the_checkouts_persisted_header_is_masked() -> None:
    said = REDACTOR.text(f"http.https://github.com/.extraheader {CHECKOUT_HEADER}")
    assert said == f"http.https://github.com/.extraheader AUTHORIZATION: basic {MASK}"


def test_the_header_inside_an_event_line_is_masked() -> None:
    line = REDACTOR.json_line({"data": {"result": f"[http]\n\textraheader = {CHECKOUT_HEADER}\n"}})
    assert CHECKOUT_HEADER.split()[-1] not in line
    assert (
        json.loads(line)["data"]["result"]
        == f"[http]\n\textraheader = AUTHORIZATION: basic {MASK}\n"
    )


@given(_TOKEN, st.binary(max_size=40), st.binary(max_size=40), st.booleans())
def test_a_token_inside_any_base64_blob_is_masked(
    token: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(before + token.encode() + after).decode()
    said = REDACTOR.text(f"value: {blob} end")
    assert blob not in said
    assert said.startswith("value: ")
    assert said.endswith(" end")
    assert REDACTOR.found_in(f"value: {blob} end")


@given(_TOKEN, st.booleans())
def test_a_tokens_base64_cut_out_of_a_blob_at_any_alignment_is_masked(
    token: str, urlsafe: bool
) -> None:
    for part in base64_stable_parts(token.encode()):
        piece = part.translate(str.maketrans("+/", "-_")) if urlsafe else part
        assert REDACTOR.text(f"[{piece}]") == f"[{MASK}]"


@given(_TOKEN, st.text(_ALNUM + "+/", max_size=7), st.text(_ALNUM + "+/", max_size=7))
def test_a_blob_cut_anywhere_around_the_token_is_masked(
    token: str, before: str, after: str
) -> None:
    """Characters of other groups glued to either side (a blob cut at any character)."""
    for part in base64_stable_parts(token.encode()):
        assert REDACTOR.text(f"{before}{part}{after} ok") == f"{MASK} ok"


@given(st.binary(min_size=1, max_size=200), st.booleans())
def test_base64_without_a_token_is_left_alone(data: bytes, urlsafe: bool) -> None:
    assume(re.search(rb"gh[pousr]_|github_pat_", data) is None)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(data).decode()
    assert REDACTOR.text(f"sha: {blob}") == f"sha: {blob}"


def test_ordinary_long_runs_are_never_touched() -> None:
    for text in (
        "3882636b-9c52-4a90-8725-c5c11275a26a",
        "a" * 200,
        "sha256:" + "0123456789abcdef" * 4,
        "/home/runner/work/project/project/node_modules/.bin/some-long-tool-name",
        base64.b64encode(b"the gh CLI and ghs tokens: ghs_short").decode(),
    ):
        assert REDACTOR.text(text) == text


def test_an_ordinary_line_takes_the_cheap_path() -> None:
    assert not REDACTOR.found_in('{"type":"assistant.message","data":{"content":"done"}}')


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("Authorization: Bearer sk-abcdefghijklmnop1234", f"Authorization: Bearer {MASK}"),
        ("authorization: basic dXNlcjpwYXNzd29yZDEyMw==", f"authorization: basic {MASK}"),
        ("-H 'AUTHORIZATION: token 0123456789abcdef0123'", f"-H 'AUTHORIZATION: token {MASK}'"),
        (
            "Proxy-Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l x",
            f"Proxy-Authorization: Basic {MASK} x",
        ),
        ("Authorization:Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", f"Authorization:Bearer {MASK}"),
    ],
)
def test_an_authorization_headers_credential_is_masked_whatever_it_holds(
    line: str, said: str
) -> None:
    assert REDACTOR.text(line) == said


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Bearer token required",
        "the Authorization: Basic realm header was missing",
        "authorization: bearer <your-token-here>",
        "Authorization header: Bearer abcdefghijklmnopqrstuvwxyz",
        "no authorization configured",
    ],
)
def test_ordinary_text_about_authorization_is_left_alone(line: str) -> None:
    assert REDACTOR.text(line) == line


@pytest.mark.parametrize(
    ("word", "masked"),
    [
        ("Authorization", True),
        ("authorization", True),
        ("AUTHORIZATION", True),
        ("AuThOrIzAtIoN", False),  # found_in does not look for it: left whole, never half-masked
    ],
)
def test_the_header_is_recognised_as_found_in_spells_it(word: str, masked: bool) -> None:
    line = f"{word}: bEaReR abcdefghijklmnopqrstuvwxyz"
    said = f"{word}: bEaReR {MASK}" if masked else line
    assert REDACTOR.found_in(line) is masked
    assert REDACTOR.text(line) == said
    # the same when another secret makes the line searched
    assert Redactor(["other-secret-value"]).text(f"{line} other-secret-value") == f"{said} {MASK}"
