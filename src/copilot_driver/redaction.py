"""Keep secrets out of everything the driver writes.

Defence in depth: the driver never logs the connection token or the
provider key on purpose, but a secret can still arrive by accident: in an
SDK error message, in a tool's output the model echoes, in an event. Every
sink (logs, the events file, stdout, result.json) passes its output through
one Redactor, whatever the code path.

What is masked, for each secret:
- the secret as given and its whitespace-stripped form (an environment
  variable may carry a pasted newline or spaces that a runtime or a log line
  strips), each also in the form it takes inside a JSON string (escaped
  ASCII or not) and inside a Python repr;
- its base64 forms, standard and URL-safe alphabet: for each of the three
  byte alignments inside a larger encoded blob, the run of base64 characters
  that the secret's bytes alone determine (when at least MIN_BASE64_CHARS
  long);
- a fragment of at least MIN_FRAGMENT_CHARS characters cut at the edge of a
  value: a string that ends with a prefix of the secret (a truncated
  message, a line cut at a length limit) or begins with a suffix of it;
- the secret upper- and lower-cased, URL-encoded and in hex.

And whatever the secrets:
- every GitHub token by its format (GITHUB_TOKEN), raw;
- every GitHub token inside base64 (standard or URL-safe alphabet, at any
  byte alignment, in a whole blob or a piece of one cut mid-group): the run
  of at least MIN_ENCODED_TOKEN_CHARS base64 characters holding it is masked
  whole (actions/checkout's `AUTHORIZATION: basic <base64 of
  x-access-token:TOKEN>`, a `user:TOKEN` Basic credential);
- an HTTP Authorization header's credential in text, whatever it holds:
  `Authorization: <Basic|Bearer|token> VALUE` (also `Proxy-Authorization`;
  the word capitalised, lower- or upper-case) when VALUE is a run of at least
  MIN_HEADER_CREDENTIAL_CHARS token68 characters (letters, digits, `-._~+/`,
  then `=` padding); the header and scheme stay. Shorter words (`Bearer
  token`, `Basic realm`) and prose after the scheme are left alone, so
  ordinary logs about authorization are not mangled.

A secret shorter than MIN_SUBSTRING_SECRET_CHARS (a connection token `1`, a
provider key `none` for a local model server) is masked only where a whole value
is exactly it (a JSON value, a whole line, as given or stripped): searched for as
a substring it would punch masks into addresses, timestamps and words
(`127.0.0.1`, `none (unrestricted)`). The driver says so at start.

Not masked: other transformations (a secret split, reversed, re-encoded
twice), base64 runs under MIN_BASE64_CHARS, a cut fragment under
MIN_FRAGMENT_CHARS characters, and a short secret inside other text.

Text is redacted by substring replacement. Structured data is redacted value
by value (and key by key), so a secret that happens to be short can never
corrupt the JSON around it, and the fragment rule applies to every string
value on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote

from copilot_driver.secret_shapes import (
    GITHUB_TOKEN,
    MASK,
    TO_URLSAFE,
    mask_shaped,
    shaped_secret_in,
    stable_run,
)

__all__ = [
    "GITHUB_TOKEN",
    "MASK",
    "MIN_BASE64_CHARS",
    "MIN_FRAGMENT_CHARS",
    "MIN_SUBSTRING_SECRET_CHARS",
    "Redactor",
    "base64_stable_parts",
    "is_short_secret",
    "mask_url_userinfo",
    "url_userinfo_secrets",
]


MIN_BASE64_CHARS = 12
"""Shortest base64 run of a secret that is masked.

12 characters carry 72 bits of the secret: a chance match in unrelated base64
data (hashes, ids, attachments) is practically impossible, whereas a needle of
a few characters would punch masks into ordinary encoded content. A secret too
short to give 12 stable characters at an alignment (under about 10 bytes) is
simply not masked in that base64 alignment; its raw forms still are.
"""

MIN_SUBSTRING_SECRET_CHARS = 8
"""Shorter secrets (stripped) are masked only as whole values, never inside text."""

MIN_FRAGMENT_CHARS = 12
"""Shortest cut fragment (prefix at the end, suffix at the start of a value) masked.

Long enough that ordinary text never ends with 12 characters of a random token
by chance, short enough that what stays visible of a cut secret is too little
to use. It is also the length of the probes `json_line` searches a whole line
for, so the no-secret path costs a fixed number of substring searches.
"""

_URL_USERINFO = re.compile(r"^(\s*(?:[A-Za-z][A-Za-z0-9+.-]*://)?)(\S*@)")
"""Everything of a URL (its scheme optional) before its last `@`: the `user:password@`
part, taken wide on purpose. A password holding `/`, `?` or `#` unencoded
(`https://u:ab+c/d==@host/v1`) ends the userinfo early for a URL parser, which then
sees no credentials at all; masking up to the last `@` anywhere never writes it."""

MIN_USERINFO_SECRET_CHARS = 6
"""Shorter userinfo parts (`u` in `https://u:KEY@host`) are not registered as secrets:
masking every `u` would mangle the logs. The URL itself is always written masked."""


def mask_url_userinfo(url: str) -> str:
    """`url` with its userinfo (`user:key@`) written as `***@`: scheme, host, port and
    path kept, so a provider key in a base URL is never logged."""
    return _URL_USERINFO.sub(rf"\1{MASK}@", url, count=1)


def url_userinfo_secrets(url: str) -> tuple[str, ...]:
    """The user name and password of `url`'s userinfo, as written and percent-decoded,
    for a Redactor (an SDK error that echoes the URL is masked too)."""
    found = _URL_USERINFO.match(url)
    if found is None:
        return ()
    userinfo = found.group(2)[:-1]
    parts = [userinfo, *userinfo.split(":", 1)]
    forms = (form for part in parts for form in (part, unquote(part)))
    return tuple(dict.fromkeys(f for f in forms if len(f.strip()) >= MIN_USERINFO_SECRET_CHARS))


def is_short_secret(secret: str) -> bool:
    """Whether `secret` is masked only as a whole value (see MIN_SUBSTRING_SECRET_CHARS)."""
    return 0 < len(secret.strip()) < MIN_SUBSTRING_SECRET_CHARS


def _encodings(form: str) -> set[str]:
    """`form` as written raw, inside a JSON string, inside a Python repr, upper- and
    lower-cased, URL-encoded (every reserved character, or `+/=` only) and in hex."""
    data = _utf8(form)
    return {
        form,
        json.dumps(form, ensure_ascii=True)[1:-1],
        json.dumps(form, ensure_ascii=False)[1:-1],
        repr(form)[1:-1],
        form.upper(),
        form.lower(),
        quote(form, safe=""),
        quote(form),
        data.hex(),
        data.hex().upper(),
    }


def _utf8(form: str) -> bytes:
    """The bytes a secret had in the environment (undecodable bytes included)."""
    try:
        return form.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return form.encode("utf-8", "surrogatepass")


def base64_stable_parts(data: bytes) -> set[str]:
    """The base64 text `data` produces inside any larger blob, standard alphabet.

    Base64 turns each 3-byte group into 4 characters of 6 bits. When `data`
    starts at byte offset `a` (0, 1 or 2 mod 3) of a blob, its bits occupy
    bits [8a, 8a + 8n) counted from the start of its first group; character
    k covers bits [6k, 6k + 6), so it depends on `data` alone exactly when
    8a <= 6k and 6k + 6 <= 8a + 8n. Encoding `a` zero bytes followed by
    `data` and keeping characters ceil(8a/6) .. floor(8(a+n)/6) - 1 gives
    that run; the characters around it mix in the neighbouring bytes.
    Runs shorter than MIN_BASE64_CHARS are left out.
    """
    runs = (stable_run(data, offset)[0] for offset in range(3))
    return {run for run in runs if len(run) >= MIN_BASE64_CHARS}


def _common_window(part: str) -> str | None:
    """A MIN_BASE64_CHARS window of `part` spelled alike in both base64 alphabets."""
    start = 0
    for index, char in enumerate(part):
        if char in "+/":
            start = index + 1
        elif index + 1 - start >= MIN_BASE64_CHARS:
            return part[start : index + 1]
    return None


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        literals: set[str] = set()
        encoded: set[str] = set()
        probes: set[str] = set()
        whole: set[str] = set()
        for secret in secrets:
            # A blank value is no secret (the configuration treats it as unset), and
            # masking runs of spaces would only mangle the output.
            if not secret.strip():
                continue
            if is_short_secret(secret):
                whole.add(secret.strip())
                continue
            for form in {secret, secret.strip()}:
                literals |= _encodings(form)
                for part in base64_stable_parts(_utf8(form)):
                    urlsafe = part.translate(TO_URLSAFE)
                    encoded |= {part, urlsafe}
                    # One probe finds the part in either alphabet when some window of
                    # it has neither "+" nor "/" (nearly always): fewer searches per line.
                    window = _common_window(part)
                    probes |= {window} if window else {part, urlsafe}
        for literal in literals:
            if len(literal) <= MIN_FRAGMENT_CHARS:
                probes.add(literal)
            else:
                # Every occurrence, and every fragment cut at either edge, holds one of these.
                probes |= {literal[:MIN_FRAGMENT_CHARS], literal[-MIN_FRAGMENT_CHARS:]}
        # Longest first, so a secret that contains another is masked whole; ties in a
        # fixed order, so the output does not depend on hashing.
        self._needles = tuple(sorted(literals | encoded, key=lambda s: (-len(s), s)))
        self._fragment_sources = tuple(
            sorted(literal for literal in literals if len(literal) > MIN_FRAGMENT_CHARS)
        )
        self._probes = tuple(sorted(probes))
        self._whole_values = frozenset(whole)
        # A whole value inside a JSON line: the quoted string, JSON whitespace escapes
        # or blanks around it (`"1"`, `" 1\\n"`), so a line holding it is walked.
        around = r"(?:\s|\\[nrt])*"
        self._quoted_whole = (
            re.compile(
                "|".join(
                    f'"{around}{re.escape(json.dumps(value, ensure_ascii=False)[1:-1])}{around}"'
                    for value in sorted(whole)
                )
            )
            if whole
            else None
        )

    def found_in(self, text: str) -> bool:
        """Whether `text` may hold a secret; False means `text()` leaves it unchanged.

        It searches for every short needle whole and, for longer ones, for a
        MIN_FRAGMENT_CHARS window that any occurrence or cut fragment contains:
        a fixed number of substring searches, whatever the secrets' lengths.
        """
        if self._whole_values and text.strip() in self._whole_values:
            return True
        # A plain loop: this runs on every events line, and any() over a generator
        # adds a measurable cost per probe.
        for probe in self._probes:
            if probe in text:
                return True
        return shaped_secret_in(text)

    def text(self, text: str) -> str:
        """`text` with every secret form masked, and a fragment cut at either edge."""
        if not self.found_in(text):
            return text
        if text.strip() in self._whole_values:
            return MASK
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, MASK)
        return mask_shaped(self._mask_cut_fragments(text))

    def _mask_cut_fragments(self, text: str) -> str:
        head_end = 0  # text[:head_end] is the end of a secret
        tail_start = len(text)  # text[tail_start:] is the beginning of a secret
        for secret in self._fragment_sources:
            head_end = max(head_end, _leading_suffix(text, secret))
            tail_start = min(tail_start, _trailing_prefix(text, secret))
        if head_end == 0 and tail_start == len(text):
            return text
        if head_end >= tail_start:
            return MASK
        return (
            (MASK if head_end else "")
            + text[head_end:tail_start]
            + (MASK if tail_start < len(text) else "")
        )

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        # Anything else would reach JSON as str(value): mask that string now.
        return self.text(str(value))

    def json_line(self, record: dict[str, Any]) -> str:
        """Serialise `record` as one compact JSON line, secrets masked.

        The fast path serialises once and only walks the structure when the
        line may hold a secret, a base64 form of one or a fragment of one
        (`found_in`); the walk masks value by value.
        """
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
        if self.found_in(line) or (
            self._quoted_whole is not None and self._quoted_whole.search(line) is not None
        ):
            line = json.dumps(
                self.value(record), ensure_ascii=False, separators=(",", ":"), default=str
            )
        return line


def _leading_suffix(text: str, secret: str) -> int:
    """Length of the longest start of `text` that ends `secret` (0 if under the minimum).

    Such a start holds the secret's last MIN_FRAGMENT_CHARS characters and is
    no longer than the secret, so only that window of `text` is searched.
    """
    tail = secret[-MIN_FRAGMENT_CHARS:]
    end = min(len(text), len(secret))
    while (found := text.rfind(tail, 0, end)) >= 0:
        length = found + MIN_FRAGMENT_CHARS
        if secret.endswith(text[:length]):
            return length
        end = length - 1
    return 0


def _trailing_prefix(text: str, secret: str) -> int:
    """Where the longest end of `text` that begins `secret` starts (len(text) if none).

    Such an end holds the secret's first MIN_FRAGMENT_CHARS characters and is
    no longer than the secret, so only that window of `text` is searched.
    """
    head = secret[:MIN_FRAGMENT_CHARS]
    found = text.find(head, max(0, len(text) - len(secret)))
    while found >= 0:
        if secret.startswith(text[found:]):
            return found
        found = text.find(head, found + 1)
    return len(text)
