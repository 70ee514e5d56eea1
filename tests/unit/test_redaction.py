"""Unit tests for `copilot_driver.redaction.Redactor`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.redaction import MASK, Redactor

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
    redactor = Redactor(["alpha-1", "beta-2"])
    assert redactor.text("alpha-1/beta-2/gamma") == "***/***/gamma"


def test_longest_secret_is_masked_first() -> None:
    # "abc" is contained in "abcdef": the longer one must be masked whole.
    for secrets in (["abc", "abcdef"], ["abcdef", "abc"]):
        redactor = Redactor(secrets)
        assert redactor.text("x abcdef y abc z") == "x *** y *** z"


@pytest.mark.parametrize("secrets", [[], [""], ["", ""], ("",)])
def test_empty_secrets_are_ignored(secrets: list[str]) -> None:
    redactor = Redactor(secrets)
    assert not redactor
    assert redactor.text("abc") == "abc"
    assert redactor.found_in("abc") is False
    record = {"k": ["v"]}
    assert redactor.value(record) is record
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
    assert not redactor.found_in(SECRET[:-1])
    assert not redactor.found_in("")


@pytest.mark.parametrize("secret", ['a"b', "a\\b", "pässwörd", "tab\there", "日本"])
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
    "secret", ['q"uote', "back\\slash", "ünïcødé", "new\nline", "ctl\x01x", 'mix"\\é']
)
def test_json_line_masks_secrets_that_need_escaping(secret: str) -> None:
    redactor = Redactor([secret])
    line = redactor.json_line({"k": f"before {secret} after", "list": [secret]})
    assert json.loads(line) == {"k": "before *** after", "list": ["***"]}
    assert secret not in line
    assert json.dumps(secret, ensure_ascii=False)[1:-1] not in line
    assert json.dumps(secret, ensure_ascii=True)[1:-1] not in line


def test_json_line_short_secret_in_keys_keeps_json_valid() -> None:
    redactor = Redactor(["ab"])
    line = redactor.json_line({"table": {"label": "ab", "cab": ["abab"]}})
    assert json.loads(line) == {"t***le": {"l***el": "***", "c***": ["******"]}}


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

secret_text = st.text(min_size=1).filter(lambda s: "*" not in s)


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


@given(st.text(_plain, min_size=1), st.text(_plain), st.text(_plain))
def test_json_line_raw_text_never_contains_the_secret(
    secret: str, prefix: str, suffix: str
) -> None:
    line = Redactor([secret]).json_line({"k": prefix + secret + suffix})
    json.loads(line)
    assert secret not in line
