"""The OS sandbox a run's tools ran in, as the harness records it in `sandbox.json`.

The harness writes the file into the session folder (beside `events.jsonl` and
`sidecar.log`) with `sandbox_record`; the report reads it back with
`read_sandbox_file`. Reading is tolerant like the rest of the report: a field
that is missing or of the wrong type is a field that is absent, and the file's
content never makes it raise. Only variable *names* are recorded, never values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SANDBOX_FILE = "sandbox.json"
"""In the session folder, beside `events.jsonl` and `sidecar.log`."""
MODE_OFF = "off"
MODE_UNKNOWN = "unknown"
"""The mode of a file that does not say which (unreadable, not JSON, no `mode` string):
the report cannot vouch for a sandbox, so it says so rather than guess."""
_MAX_COUNT = 2**63


@dataclass(frozen=True)
class SandboxSummary:
    """How the tools were confined, and what the egress proxy let through and refused."""

    mode: str
    """`workspace` or `off` (`unknown` when the file does not say)."""
    allowed_hosts: tuple[str, ...] = ()
    """`host:port` the egress proxy lets through, e.g. `githubcopilot.com:443`."""
    egress_denied: tuple[tuple[str, int], ...] = ()
    """(`host:port`, connections refused), most refused first, then by name (put in
    that order whatever order it is given in)."""
    passed_env: tuple[str, ...] = ()
    """Names of the variables passed to the tools with `--pass-env` (never values)."""
    egress_allowed: tuple[tuple[str, int], ...] = ()
    """(`host:port`, connections let through): what the run reached, ordered as
    `egress_denied` is."""
    git_neutralised: tuple[str, ...] = ()
    """What the harness did after the run to the git control files a tool wrote in the
    workspace, one sentence each (`harness/sandbox/git_controls.py`)."""

    def __post_init__(self) -> None:
        # The order is part of the value: whoever builds one, the renderers list the
        # busiest hosts first and the cap cuts the least used.
        object.__setattr__(self, "egress_denied", _most_first(self.egress_denied))
        object.__setattr__(self, "egress_allowed", _most_first(self.egress_allowed))

    @property
    def off(self) -> bool:
        return self.mode == MODE_OFF

    @property
    def denied_connections(self) -> int:
        return sum(count for _, count in self.egress_denied)

    @property
    def allowed_connections(self) -> int:
        return sum(count for _, count in self.egress_allowed)


def sandbox_record(summary: SandboxSummary) -> dict[str, object]:
    """The JSON object of `sandbox.json`: `{"mode": str, "allowedHosts": [str],
    "egressAllowed": {host: count}, "egressDenied": {host: count}, "passedEnv": [str]}`,
    and `"gitNeutralised": [str]` when the harness put git control files away."""
    record: dict[str, object] = {
        "mode": summary.mode,
        "allowedHosts": list(summary.allowed_hosts),
        "egressAllowed": dict(summary.egress_allowed),
        "egressDenied": dict(summary.egress_denied),
        "passedEnv": list(summary.passed_env),
    }
    if summary.git_neutralised:
        record["gitNeutralised"] = list(summary.git_neutralised)
    return record


def read_sandbox_file(path: Path) -> SandboxSummary | None:
    """`sandbox.json` at `path`; None when there is no such file. A file that cannot
    be read or is not a JSON object has mode `unknown` and nothing else; each field of
    the wrong type is ignored on its own (list items that are not strings, counts that
    are not whole numbers from 0 up)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return SandboxSummary(MODE_UNKNOWN)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return SandboxSummary(MODE_UNKNOWN)
    return sandbox_from_json(value)


def sandbox_from_json(value: Any) -> SandboxSummary:
    """`sandbox.json`'s content as a summary, whatever its shape."""
    data: Mapping[str, Any] = value if isinstance(value, dict) else {}
    mode = data.get("mode")
    return SandboxSummary(
        mode=mode if isinstance(mode, str) and mode.strip() else MODE_UNKNOWN,
        allowed_hosts=_strings(data.get("allowedHosts")),
        egress_denied=_counts(data.get("egressDenied")),
        passed_env=_strings(data.get("passedEnv")),
        egress_allowed=_counts(data.get("egressAllowed")),
        git_neutralised=_strings(data.get("gitNeutralised")),
    )


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


def _counts(value: Any) -> tuple[tuple[str, int], ...]:
    """Whole counts from 0 to 2**63 only (JSON `true` and `3.0` are not counts)."""
    if not isinstance(value, dict):
        return ()
    return tuple(
        (host, count)
        for host, count in value.items()
        if type(count) is int and 0 <= count < _MAX_COUNT
    )


def _most_first(counts: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts, key=lambda item: (-item[1], item[0])))
