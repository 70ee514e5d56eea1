"""Keep secrets out of everything the driver writes.

Defence in depth: the driver never logs the connection token or the
provider key on purpose, but a secret can still arrive by accident: in an
SDK error message, in a tool's output the model echoes, in an event. Every
sink (logs, the events file, stdout, result.json) passes its output through
one Redactor, whatever the code path.

Text is redacted by substring replacement. Structured data is redacted value
by value (and key by key), so a secret that happens to be short can never
corrupt the JSON around it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

MASK = "***"


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        needles: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            needles.add(secret)
            # The form the secret takes inside a JSON string, when it differs.
            needles.add(json.dumps(secret, ensure_ascii=True)[1:-1])
            needles.add(json.dumps(secret, ensure_ascii=False)[1:-1])
            # ... and the form it takes inside a Python repr (`{value!r}` in a message).
            needles.add(repr(secret)[1:-1])
        # Longest first, so a secret that contains another is masked whole.
        self._needles = tuple(sorted(needles, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self._needles)

    def found_in(self, text: str) -> bool:
        return any(needle in text for needle in self._needles)

    def text(self, text: str) -> str:
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, MASK)
        return text

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (keys included)."""
        if not self._needles:
            return value
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

        The fast path serialises once and only walks the structure when a
        secret is actually present.
        """
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
        if self._needles and self.found_in(line):
            line = json.dumps(
                self.value(record), ensure_ascii=False, separators=(",", ":"), default=str
            )
        return line
