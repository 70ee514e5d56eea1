"""Unit tests for `copilot_driver.redaction.Redactor`."""

from __future__ import annotations

import base64
import binascii
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copilot_driver.redaction import (
    MASK,
    MIN_BASE64_CHARS,
    MIN_FRAGMENT_CHARS,
    MIN_SUBSTRING_SECRET_CHARS,
    Redactor,
    base64_stable_parts,
    is_short_secret,
    mask_url_userinfo,
    url_userinfo_secrets,
)

SECRET = "tok-RED-4e2b77"


def _strings(value: Any) -> list[str]:
    """Every string (keys included) inside a decoded JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


# -- text -----------------------------------------------------------------------------


def test_mask_is_three_stars() -> None:
    assert MASK == "***"


def test_text_masks_every_occurrence() -> None:
    redactor = Redactor([SECRET])
    assert redactor.text(f"a {SECRET} b {SECRET}{SECRET}") == "a *** b ******"


def test_text_without_secret_is_unchanged() -> None:
    assert Redactor([SECRET]).text("nothing to see") == "nothing to see"


def test_text_masks_several_secrets() -> None:
    redactor = Redactor(["alpha-one-1", "beta-two-2"])
    assert redactor.text("alpha-one-1/beta-two-2/gamma") == "***/***/gamma"


def test_longest_secret_is_masked_first() -> None:
    # "abcdefgh" is contained in "abcdefghijk": the longer one must be masked whole.
    for secrets in (["abcdefgh", "abcdefghijk"], ["abcdefghijk", "abcdefgh"]):
        redactor = Redactor(secrets)
        assert redactor.text("x abcdefghijk y abcdefgh z") == "x *** y *** z"


@pytest.mark.parametrize("secrets", [[], [""], ["", ""], ("",)])
def test_empty_secrets_are_ignored(secrets: list[str]) -> None:
    redactor = Redactor(secrets)
    assert not redactor.found_in("a  b\n\tc x")
    assert redactor.text("abc") == "abc"
    assert redactor.found_in("abc") is False
    record = {"k": ["v"]}
    assert redactor.value(record) == record
    assert redactor.json_line(record) == '{"k":["v"]}'


def test_empty_secret_next_to_a_real_one() -> None:
    redactor = Redactor(["", SECRET])
    assert redactor
    assert redactor.text(f"ab{SECRET}cd") == "ab***cd"


def test_secrets_may_be_any_iterable() -> None:
    redactor = Redactor(secret for secret in (SECRET,))
    assert redactor.text(SECRET) == MASK


# -- found_in -------------------------------------------------------------------------


def test_found_in() -> None:
    redactor = Redactor([SECRET])
    assert redactor.found_in(f"xx{SECRET}xx")
    # A cut fragment of 12 characters or more may need masking; a shorter one never does.
    assert redactor.found_in(SECRET[:-1])
    assert not redactor.found_in(SECRET[:11])
    assert not redactor.found_in(SECRET[-11:])
    assert not redactor.found_in("")


def test_found_in_false_means_text_leaves_it_unchanged() -> None:
    redactor = Redactor([SECRET])
    for text in ("", "nothing", SECRET[:11], SECRET[1:12], f"{SECRET[:11]} and {SECRET[-11:]}"):
        assert not redactor.found_in(text)
        assert redactor.text(text) == text


@pytest.mark.parametrize(
    "secret", ['quote"d-in', "back\\slash", "pässwörd", "tab\there-x", "日本語のパスワード"]
)
def test_found_in_recognises_json_escaped_forms(secret: str) -> None:
    redactor = Redactor([secret])
    for ensure_ascii in (True, False):
        encoded = json.dumps({"k": f"<{secret}>"}, ensure_ascii=ensure_ascii)
        assert redactor.found_in(encoded), encoded
        masked = redactor.text(encoded)
        assert json.loads(masked) == {"k": "<***>"}


# -- value ----------------------------------------------------------------------------


def test_value_redacts_nested_structures_and_keys() -> None:
    redactor = Redactor([SECRET])
    record = {
        "plain": "ok",
        "token": SECRET,
        SECRET: "as a key",
        "nested": {"list": [1, f"<{SECRET}>", {"deep": (SECRET, 2.5)}], "none": None},
        "flag": True,
    }
    assert redactor.value(record) == {
        "plain": "ok",
        "token": "***",
        "***": "as a key",
        "nested": {"list": [1, "<***>", {"deep": ["***", 2.5]}], "none": None},
        "flag": True,
    }
    # the input is left alone
    assert record["token"] == SECRET


def test_value_leaves_non_strings_alone() -> None:
    redactor = Redactor([SECRET])
    for value in (1, 2.5, None, True):
        assert redactor.value(value) == value
    assert redactor.value(SECRET) == MASK


# -- json_line ------------------------------------------------------------------------


def test_json_line_is_compact_and_one_line() -> None:
    redactor = Redactor([SECRET])
    line = redactor.json_line({"type": "x", "data": {"text": "a\nb", "n": 1, "é": "ü"}})
    assert line == '{"type":"x","data":{"text":"a\\nb","n":1,"é":"ü"}}'
    assert "\n" not in line


def test_json_line_masks_a_secret() -> None:
    redactor = Redactor([SECRET])
    record = {"type": "tool", "data": {"out": f"token={SECRET}", SECRET: [SECRET]}}
    line = redactor.json_line(record)
    assert SECRET not in line
    assert json.loads(line) == {"type": "tool", "data": {"out": "token=***", "***": ["***"]}}


@pytest.mark.parametrize(
    "secret",
    ['q"uote-123', "back\\slash", "ünïcødé-x", "new\nline", "ctl\x01x-long", 'mix"\\é-1234'],
)
def test_json_line_masks_secrets_that_need_escaping(secret: str) -> None:
    redactor = Redactor([secret])
    line = redactor.json_line({"k": f"before {secret} after", "list": [secret]})
    assert json.loads(line) == {"k": "before *** after", "list": ["***"]}
    assert secret not in line
    assert json.dumps(secret, ensure_ascii=False)[1:-1] not in line
    assert json.dumps(secret, ensure_ascii=True)[1:-1] not in line


def test_json_line_secret_in_keys_keeps_json_valid() -> None:
    redactor = Redactor(["abcdefgh"])
    line = redactor.json_line({"xabcdefghx": {"label": "abcdefgh", "c": ["abcdefghabcdefgh"]}})
    assert json.loads(line) == {"x***x": {"label": "***", "c": ["******"]}}


# -- short secrets: whole values only -----------------------------------------------


@pytest.mark.parametrize("secret", ["1", "none", "abc1234", " x \n"])
def test_a_short_secret_is_masked_only_as_a_whole_value(secret: str) -> None:
    assert is_short_secret(secret)
    redactor = Redactor([secret])
    stripped = secret.strip()
    for text in (secret, stripped, f"  {stripped}\n"):
        assert redactor.found_in(text)
        assert redactor.text(text) == MASK
    for text in (
        f"127.0.0.{stripped}",
        f"tool permissions: {stripped} (unrestricted)",
        "2026-11-28T11:53:03Z",
    ):
        assert redactor.text(text) == text
    record = {"key": stripped, "list": [f" {stripped} ", f"a {stripped} b"], stripped: 1}
    assert redactor.value(record) == {"key": MASK, "list": [MASK, f"a {stripped} b"], MASK: 1}
    assert json.loads(redactor.json_line(record)) == redactor.value(record)


def test_short_secrets_leave_addresses_and_timestamps_whole() -> None:
    # The demo's connection token `1` and a local model server's key `none`.
    redactor = Redactor(["1", "none"])
    line = '{"time":"2026-11-28T11:53:03.123Z","sdkUri":"127.0.0.1:4321","mode":"none (x)"}'
    assert redactor.json_line(json.loads(line)) == line
    assert redactor.text("tool permissions: none (unrestricted)") == (
        "tool permissions: none (unrestricted)"
    )


@given(st.text(min_size=1, max_size=7).filter(lambda s: s.strip() != ""), st.text(), st.text())
def test_a_short_secret_never_changes_other_text(secret: str, before: str, after: str) -> None:
    text = before + secret + after
    assume(text.strip() != secret.strip())
    assert Redactor([secret]).text(text) == text


def test_the_short_secret_threshold_is_eight() -> None:
    assert MIN_SUBSTRING_SECRET_CHARS == 8
    assert is_short_secret("1234567")
    assert not is_short_secret("12345678")
    assert not is_short_secret("   ")


# -- URLs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:KEY-123456@host/v1", "https://***@host/v1"),
        ("https://u:ab+c/d==@host/v1", "https://***@host/v1"),
        ("https://u:a?b#c@host:8443/v1", "https://***@host:8443/v1"),
        ("http://host/v1", "http://host/v1"),
        ("user@host/v1", "***@host/v1"),
    ],
)
def test_everything_before_the_last_at_of_a_url_is_masked(url: str, shown: str) -> None:
    assert mask_url_userinfo(url) == shown


def test_a_key_holding_a_slash_in_a_url_is_a_secret() -> None:
    secrets = url_userinfo_secrets("https://u:ab+c/d==@host/v1")
    assert "ab+c/d==" in secrets
    assert "ab+c/d==" not in Redactor(secrets).text("error: ab+c/d== refused")


def test_json_line_default_str_for_other_objects() -> None:
    line = Redactor([SECRET]).json_line({"path": Path("/tmp/x")})
    assert json.loads(line) == {"path": "/tmp/x"}


def test_json_line_masks_secrets_inside_non_json_objects() -> None:
    # json_line serialises unknown objects with str(); a secret inside one must not leak.
    redactor = Redactor([SECRET])
    line = redactor.json_line({"path": Path(f"/work/{SECRET}"), "error": ValueError(SECRET)})
    assert SECRET not in line
    assert json.loads(line)["path"] == "/work/***"


# -- properties -----------------------------------------------------------------------

# Secrets hold no "*" (masking around a secret that contains the mask could spell it
# again) and are not blank (a blank value is no secret: the Redactor ignores it).
# Shorter secrets are masked only as whole values (tested above).
secret_text = st.text(min_size=8).filter(
    lambda s: "*" not in s and len(s.strip()) >= MIN_SUBSTRING_SECRET_CHARS
)


@given(st.lists(secret_text, min_size=1, max_size=3), st.text(), st.text())
def test_text_never_contains_a_secret(secrets: list[str], prefix: str, suffix: str) -> None:
    redactor = Redactor(secrets)
    masked = redactor.text(prefix + secrets[0] + suffix + "".join(secrets))
    for secret in secrets:
        assert secret not in masked
    assert MASK in masked


@given(secret_text, st.text(), st.text())
def test_json_line_parses_and_hides_the_secret(secret: str, prefix: str, suffix: str) -> None:
    redactor = Redactor([secret])
    line = redactor.json_line({"k": prefix + secret + suffix})
    assert "\n" not in line
    decoded = json.loads(line)
    assert isinstance(decoded, dict)
    for text in _strings(decoded):
        assert secret not in text


# Characters that never need escaping in JSON and never form JSON syntax, so that the
# raw line itself can be searched for the secret.
_plain = st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters='"\\{}[]:,*')


@given(
    st.text(_plain, min_size=8).filter(lambda s: len(s.strip()) >= MIN_SUBSTRING_SECRET_CHARS),
    st.text(_plain),
    st.text(_plain),
)
def test_json_line_raw_text_never_contains_the_secret(
    secret: str, prefix: str, suffix: str
) -> None:
    line = Redactor([secret]).json_line({"k": prefix + secret + suffix})
    json.loads(line)
    assert secret not in line


# -- whitespace around a secret -------------------------------------------------------

TOKEN = "ghu_Zq9canaryTOKEN4471abcdefXYZ0123456789"
"""A token-like secret of 41 characters."""

_AROUND = ["\n", "\r\n", " ", "  ", "\t", " \n"]


def _spellings(form: str) -> list[str]:
    """`form` raw, JSON-escaped (ASCII and not) and as inside a repr."""
    return [
        form,
        json.dumps(form, ensure_ascii=True)[1:-1],
        json.dumps(form, ensure_ascii=False)[1:-1],
        repr(form)[1:-1],
    ]


@pytest.mark.parametrize("before", ["", *_AROUND])
@pytest.mark.parametrize("after", ["", *_AROUND])
def test_a_secret_given_with_whitespace_is_masked_as_given_and_stripped(
    before: str, after: str
) -> None:
    given_value = before + TOKEN + after
    redactor = Redactor([given_value])
    for form in (given_value, TOKEN):
        for spelling in _spellings(form):
            masked = redactor.text(f"<<{spelling}>>")
            assert TOKEN not in masked
            assert masked.startswith("<<")
            assert masked.endswith(">>")
            assert MASK in masked


@pytest.mark.parametrize("given_value", [f"{TOKEN}\n", f"  {TOKEN} ", f"\t{TOKEN}\r\n"])
def test_whitespace_forms_in_structured_values(given_value: str) -> None:
    redactor = Redactor([given_value])
    record = {"stripped": f"token={TOKEN};", "given": f"[{given_value}]", TOKEN: 1}
    assert redactor.value(record) == {"stripped": "token=***;", "given": "[***]", "***": 1}
    line = redactor.json_line(record)
    assert TOKEN not in line
    assert json.loads(line) == {"stripped": "token=***;", "given": "[***]", "***": 1}


def test_a_secret_with_a_trailing_newline_in_a_json_line() -> None:
    # The runtime may echo the token as given, stripped, or as an already escaped
    # string (a backslash and an "n" inside the value): each is masked whole.
    redactor = Redactor([TOKEN + "\n"])
    line = redactor.json_line({"a": f"{TOKEN}\n", "b": f"x {TOKEN} y", "c": f"{TOKEN}\\n"})
    assert TOKEN not in line
    assert json.loads(line) == {"a": "***", "b": "x *** y", "c": "***"}


@pytest.mark.parametrize("secrets", [[" "], ["\n"], ["  \t\r\n"], ["", " \n "]])
def test_blank_secrets_are_ignored(secrets: list[str]) -> None:
    redactor = Redactor(secrets)
    assert not redactor.found_in("a  b\n\tc x")
    assert redactor.text("a  b\n\tc") == "a  b\n\tc"


# -- base64 ---------------------------------------------------------------------------

_ENCODERS = {"standard": base64.b64encode, "urlsafe": base64.urlsafe_b64encode}


def _decodes_to(text: str, secret: bytes) -> bool:
    """Whether any run of base64 characters in `text`, read from any character
    offset and in either alphabet, decodes to bytes holding `secret`."""
    for alphabet, altchars in ((r"[A-Za-z0-9+/]", b"+/"), (r"[A-Za-z0-9_-]", b"-_")):
        for run in re.findall(alphabet + "+", text):
            for start in range(4):
                chunk = run[start:]
                if len(chunk) % 4 == 1:
                    chunk = chunk[:-1]
                chunk += "=" * (-len(chunk) % 4)
                try:
                    decoded = base64.b64decode(chunk, altchars=altchars)
                except (binascii.Error, ValueError):
                    continue
                if secret in decoded:
                    return True
    return False


def _brute_force_stable_run(data: bytes, offset: int) -> str:
    """The characters of `data`'s encoding at `offset` that stay the same whatever
    the neighbouring bytes: encoded once between 0x00 bytes, once between 0xFF."""
    trailing = 3 + -(offset + len(data)) % 3  # a whole number of groups: no "=" padding
    low = base64.b64encode(b"\x00" * offset + data + b"\x00" * trailing).decode()
    high = base64.b64encode(b"\xff" * offset + data + b"\xff" * trailing).decode()
    return "".join(x for x, y in zip(low, high, strict=True) if x == y)


@pytest.mark.parametrize(
    "data", [TOKEN.encode(), b"\x00\xff" * 9, "pässwörd-日本-token".encode(), bytes(range(40))]
)
def test_base64_stable_parts_are_what_the_secret_alone_determines(data: bytes) -> None:
    expected = {_brute_force_stable_run(data, offset) for offset in range(3)}
    assert base64_stable_parts(data) == expected


def test_base64_stable_parts_below_the_threshold_are_left_out() -> None:
    # 9 bytes give 12 stable characters at offset 0 but 11 at offsets 1 and 2.
    assert [len(part) for part in base64_stable_parts(b"123456789")] == [12]
    assert base64_stable_parts(b"12345678") == set()
    assert MIN_BASE64_CHARS == 12


@pytest.mark.parametrize("alphabet", sorted(_ENCODERS))
@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("extra", [0, 3, 7])
def test_base64_forms_are_masked_at_each_alignment(alphabet: str, offset: int, extra: int) -> None:
    # Bytes chosen so both alphabets differ (the encoding holds "+" or "/").
    secret = "tok~~~>>>???" + TOKEN
    data = secret.encode()
    assert re.search(r"[+/]", base64.b64encode(data).decode())
    before = bytes(range(200, 200 + offset + 3 * extra))
    blob = _ENCODERS[alphabet](before + data + b"tail").decode()
    assert _decodes_to(blob, data)
    redactor = Redactor([secret])
    for text in (blob, f"data:application/json;base64,{blob}\n", f'{{"b64":"{blob}"}}'):
        masked = redactor.text(text)
        assert MASK in masked
        assert not _decodes_to(masked, data)
    value = redactor.value({"attachment": blob, "list": [f"x {blob} y"]})
    assert not _decodes_to(json.dumps(value), data)
    line = redactor.json_line({"attachment": blob})
    assert MASK in line
    assert not _decodes_to(line, data)


@pytest.mark.parametrize("given_value", [f"{TOKEN}\n", f" {TOKEN} "])
def test_base64_of_the_given_and_the_stripped_form_is_masked(given_value: str) -> None:
    redactor = Redactor([given_value])
    for form in (given_value, TOKEN):
        for offset in range(3):
            blob = base64.b64encode(b"x" * offset + form.encode() + b"yz").decode()
            assert not _decodes_to(redactor.text(blob), form.strip().encode())


def test_base64_of_a_short_secret_is_not_masked() -> None:
    # 8 bytes give at most 10 stable characters: too short a needle to mask.
    redactor = Redactor(["s3cr3t!!"])
    blob = base64.b64encode(b"s3cr3t!!").decode()
    assert redactor.text(blob) == blob
    assert redactor.text("s3cr3t!!") == MASK


def test_base64_masking_leaves_unrelated_base64_alone() -> None:
    redactor = Redactor([TOKEN])
    blob = base64.b64encode(bytes(range(256))).decode()
    assert redactor.text(blob) == blob


# -- fragments cut at the edge of a value ---------------------------------------------


def _fragment_lengths(secret: str) -> list[int]:
    return [MIN_FRAGMENT_CHARS, MIN_FRAGMENT_CHARS + 1, len(secret) - 1]


def test_min_fragment_chars_is_twelve() -> None:
    assert MIN_FRAGMENT_CHARS == 12


@pytest.mark.parametrize("length", _fragment_lengths(TOKEN))
def test_a_value_ending_with_a_prefix_of_a_secret(length: int) -> None:
    redactor = Redactor([TOKEN])
    assert redactor.text(f"token: {TOKEN[:length]}") == "token: ***"
    assert redactor.text(TOKEN[:length]) == MASK
    assert redactor.value({"k": [f"cut {TOKEN[:length]}"]}) == {"k": ["cut ***"]}


@pytest.mark.parametrize("length", _fragment_lengths(TOKEN))
def test_a_value_beginning_with_a_suffix_of_a_secret(length: int) -> None:
    redactor = Redactor([TOKEN])
    assert redactor.text(f"{TOKEN[-length:]} was the token") == "*** was the token"
    assert redactor.text(TOKEN[-length:]) == MASK
    assert redactor.value({TOKEN[-length:] + "!": 1}) == {"***!": 1}


def test_fragments_at_both_edges_of_one_value() -> None:
    redactor = Redactor([TOKEN])
    assert redactor.text(f"{TOKEN[-20:]} middle {TOKEN[:15]}") == "*** middle ***"
    # A value that is one long middle piece reaching the end: masked whole.
    assert redactor.text(TOKEN[3:]) == MASK


def test_fragments_of_eleven_characters_are_not_masked() -> None:
    redactor = Redactor([TOKEN])
    for text in (f"token: {TOKEN[:11]}", f"{TOKEN[-11:]} rest", TOKEN[:11], TOKEN[-11:]):
        assert redactor.text(text) == text
    record = {"a": f"x {TOKEN[:11]}", "b": f"{TOKEN[-11:]} y"}
    assert json.loads(redactor.json_line(record)) == record


def test_fragments_are_masked_only_at_the_edges() -> None:
    # Inside a value a fragment is not masked: only a cut leaves one at an edge.
    redactor = Redactor([TOKEN])
    text = f"a {TOKEN[:20]} b"
    assert redactor.text(text) == text


def test_a_fragment_that_is_not_a_prefix_is_not_masked() -> None:
    redactor = Redactor([TOKEN])
    text = f"x {TOKEN[:12]}Q"
    assert redactor.text(text) == text


@pytest.mark.parametrize("length", _fragment_lengths(TOKEN))
def test_json_line_masks_fragments_in_values_and_keys(length: int) -> None:
    redactor = Redactor([TOKEN, "another-secret-value-1234"])
    record = {
        "type": "tool.execution_complete",
        "data": {
            "result": {"content": f"Authorization: Bearer {TOKEN[:length]}"},
            "lines": [f"{TOKEN[-length:]}\nnext line", "plain"],
            TOKEN[-length:]: "a key",
        },
    }
    line = redactor.json_line(record)
    assert json.loads(line) == {
        "type": "tool.execution_complete",
        "data": {
            "result": {"content": "Authorization: Bearer ***"},
            "lines": ["***\nnext line", "plain"],
            "***": "a key",
        },
    }


def test_json_line_masks_a_fragment_of_a_secret_that_needs_escaping() -> None:
    secret = 'p"ss\\wörd-0123456789-abcdef'
    redactor = Redactor([secret])
    line = redactor.json_line({"out": f"echo {secret[:14]}", "err": f"{secret[-13:]} end"})
    assert json.loads(line) == {"out": "echo ***", "err": "*** end"}


def test_fragments_of_the_stripped_form() -> None:
    redactor = Redactor([f"  {TOKEN}\n"])
    assert redactor.text(f"log: {TOKEN[:16]}") == "log: ***"
    assert redactor.text(f"{TOKEN[-16:]} log") == "*** log"


def test_fragment_search_on_a_periodic_secret() -> None:
    secret = "ab" * 20
    redactor = Redactor([secret])
    assert redactor.text("x" + "ab" * 7) == "x***"
    assert redactor.text("ab" * 7 + "x") == "***x"
    assert redactor.text("x" + "ab" * 5 + "a") == "x" + "ab" * 5 + "a"


# -- properties of the new forms ------------------------------------------------------

_printable = st.characters(
    blacklist_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp"), blacklist_characters="*"
).filter(str.isprintable)


@given(
    secret=st.text(_printable, min_size=16, max_size=80).filter(lambda s: s.strip() != ""),
    around=st.sampled_from(["", "\n", "  ", " \t"]),
    before=st.text(),
    middle=st.text(),
    after=st.text(),
    neighbours=st.tuples(st.binary(max_size=5), st.binary(max_size=5)),
    alphabet=st.sampled_from(sorted(_ENCODERS)),
)
def test_text_leaves_neither_the_secret_nor_a_base64_form_that_decodes_back(
    secret: str,
    around: str,
    before: str,
    middle: str,
    after: str,
    neighbours: tuple[bytes, bytes],
    alphabet: str,
) -> None:
    data = secret.encode()
    blob = _ENCODERS[alphabet](neighbours[0] + data + neighbours[1]).decode()
    redactor = Redactor([around + secret + around])
    masked = redactor.text(before + secret + middle + blob + after)
    assert secret not in masked
    assert not _decodes_to(masked, data)


@given(
    secret=st.text(_printable, min_size=13, max_size=60).filter(lambda s: s.strip() != ""),
    cut=st.integers(min_value=MIN_FRAGMENT_CHARS, max_value=60),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
)
def test_json_line_fast_path_agrees_with_the_walk(
    secret: str, cut: int, before: str, after: str
) -> None:
    # The probe must fire whenever the walk would mask something: a whole secret, a
    # base64 form or a fragment at an edge of any value or key.
    blob = base64.b64encode(before.encode() + secret.encode()).decode()
    record = {
        "a": before + secret[:cut],
        "b": [secret[-cut:] + after, before + secret + after],
        secret[-cut:]: blob,
    }
    redactor = Redactor([secret])
    walked = json.dumps(redactor.value(record), ensure_ascii=False, separators=(",", ":"))
    assert redactor.json_line(record) == walked


# -- what is masked whatever the secrets ---------------------------------------------------

_GITHUB_TOKENS = (
    "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "gho_" + "z" * 36,
    "ghu_" + "0" * 36,
    "ghs_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "ghr_" + "9" * 36,
    "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
)


@pytest.mark.parametrize("token", _GITHUB_TOKENS)
def test_github_tokens_are_masked_by_their_format_without_being_given(token: str) -> None:
    redactor = Redactor()
    assert redactor.text(f"GH_TOKEN={token}\n") == "GH_TOKEN=***\n"
    line = redactor.json_line({"output": f"token: {token}", "n": 1})
    assert token not in line
    assert json.loads(line) == {"output": "token: ***", "n": 1}
    assert redactor.value([{"k": token}]) == [{"k": MASK}]


def test_words_that_look_a_little_like_tokens_stay() -> None:
    redactor = Redactor()
    for text in ("ghp_short", "see github_pat_ docs", "the ghost_ of x", "ghx_" + "a" * 40):
        assert redactor.text(text) == text


@pytest.mark.parametrize(
    "encode",
    [
        str.upper,
        str.lower,
        lambda s: urllib.parse.quote(s, safe=""),
        lambda s: urllib.parse.quote(s),
        lambda s: s.encode().hex(),
        lambda s: s.encode().hex().upper(),
    ],
    ids=["upper", "lower", "url-encoded", "url-quoted", "hex", "HEX"],
)
def test_a_secret_is_masked_cased_url_encoded_and_in_hex(encode: Any) -> None:
    secret = "s3cr+t/Value=Xy9"
    shown = encode(secret)
    assert Redactor([secret]).text(f"before {shown} after") == "before *** after"
