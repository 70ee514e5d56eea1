"""Which failed tries the harness runs again, and when. Pure.

The Copilot CLI already retries a failing model call itself (5 retries over
about 15-25 s, honouring a provider's `Retry-After`; measured on 1.0.102)
before it ends the turn with a `session.error` that carries the last HTTP
status. The harness retries once more around that, as gh-aw's harness does,
with a fresh session each time, and only when a new try cannot repeat
anything the failed one did:

- the failure is transient: the model's HTTP status was 5xx or 429 (the
  runtime's `errorType` `rate_limit`), or the connection to the provider
  was reset or refused;
- the failed try started no tool (a tool may have changed files; running the
  prompt again could do it twice) and printed no answer;
- tries and waiting are bounded: `RetryPolicy.tries` in all, a delay of
  `first_delay_s` doubling up to `max_delay_s`, never past the deadline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot_driver.vocabulary import DriverErrorKind

_TRANSIENT_TEXT = re.compile(
    r"ECONNRESET|connection reset|socket hang up|ECONNREFUSED|Could not connect to "
    r"(?:the )?(?:local )?model provider|Last error: (?:5\d\d|429)\b",
    re.IGNORECASE,
)
"""The runtime's words for a provider that failed or vanished (read after its own retries)."""


@dataclass(frozen=True)
class RetryPolicy:
    tries: int = 3
    """Tries in all, the first included (1: never retry)."""
    first_delay_s: float = 5.0
    max_delay_s: float = 60.0

    def delay_before(self, try_number: int) -> float:
        """The wait before try `try_number` (2, 3, ...): 5 s, 10 s, 20 s, ... capped."""
        doubled: float = self.first_delay_s * 2 ** max(0, try_number - 2)
        return min(self.max_delay_s, doubled)


@dataclass(frozen=True)
class FailedTry:
    """What the harness saw of one try that did not succeed."""

    exit_code: int
    error_kind: str | None
    """From the driver's last `error` log entry."""
    message: str | None
    status_code: int | None = None
    """The HTTP status of the runtime's `session.error`, when it names one."""
    error_type: str | None = None
    """The runtime's `session.error` `errorType` (`rate_limit`, `query`, ...)."""
    started_tools: bool = False
    printed_answer: bool = False


def transient_cause(failed: FailedTry) -> str | None:
    """Why `failed` is worth another try (a few words), or None when it is not."""
    if failed.started_tools or failed.printed_answer:
        return None  # another try could repeat a side effect, or a half answer was used
    if failed.exit_code == 1 and failed.error_kind == DriverErrorKind.RATE_LIMITED:
        return "Copilot is rate limiting the account"
    if failed.exit_code == 1 and failed.error_kind == DriverErrorKind.COPILOT_API_ERROR:
        return "the Copilot API failed"
    if failed.exit_code != 1 or failed.error_kind != DriverErrorKind.SESSION_ERROR:
        return None
    if failed.status_code is not None and 500 <= failed.status_code <= 599:
        return f"the model provider answered HTTP {failed.status_code}"
    if failed.status_code == 429 or failed.error_type == "rate_limit":
        return "the model provider is rate limiting"
    if failed.message and _TRANSIENT_TEXT.search(failed.message):
        return "the connection to the model provider failed"
    return None


def next_delay(
    policy: RetryPolicy, failed: FailedTry, try_number: int, seconds_left: float | None
) -> tuple[float, str] | None:
    """(seconds to wait, why) before another try after try `try_number` failed,
    or None: not transient, out of tries, or it would end past the deadline."""
    cause = transient_cause(failed)
    if cause is None or try_number >= policy.tries:
        return None
    delay = policy.delay_before(try_number + 1)
    if seconds_left is not None and delay >= seconds_left:
        return None
    return delay, cause
