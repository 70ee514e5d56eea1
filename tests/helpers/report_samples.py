"""Events files for the run report's tests, and readers of what it renders.

The files under tests/data were captured from the real runtime (a scripted model, a
real Copilot CLI sidecar, this project's driver); `event`, `bash_call`, `shutdown` and
`many_calls` write the lines other drivers, crashed runs and long runs leave behind,
`sandbox_session` adds the harness's `sandbox.json` to a real session folder, and
`mermaid_parse` runs Mermaid's own parser on the charts.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from copilot_driver.report import SANDBOX_FILE, Attempt, RunOutcome, SandboxSummary

DATA = Path(__file__).resolve().parents[1] / "data"
TOOLS_AND_DENIAL = DATA / "events-tools-and-denial.jsonl"
GUARD_STOP = DATA / "events-guard-stop.jsonl"
ANSWER = "Git is installed; I was not allowed to remove victim.txt."

CALL_LINE = re.compile(
    r"^ +(?P<at>[+-]\d+\.\d\ds) +(?P<tool>\S+) +(?P<what>.+?) +"
    r"(?P<outcome>ok|DENIED|FAILED|no result)(?: +(?P<ms>\d+) ms)?$"
)
TASK_LINE = re.compile(
    r"^    (?P<label>[^:]+) :(?P<tag>done|crit|active), t(?P<n>\d+), (?P<start>\d+), (?P<end>\d+)$"
)
CHART_HEADER = 7
"""Lines before the first tool call's section of a gantt chart: gantt, title,
dateFormat, axisFormat, todayMarker, and the session's own section and bar."""
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


EVENT_ZERO = datetime(2026, 11, 21, 7, 35, 10, tzinfo=UTC)


def event(event_type: str, data: dict[str, Any], second: float = 0.0) -> str:
    """One events-file line, `second` seconds after 07:35:10 UTC (`EVENT_ZERO`)."""
    moment = EVENT_ZERO + timedelta(seconds=second)
    timestamp = moment.isoformat(timespec="milliseconds")
    return json.dumps({"type": event_type, "timestamp": timestamp, "data": data})


def bash_call(call_id: str, command: str, second: float, *, ok: bool = True) -> list[str]:
    return [
        event(
            "tool.execution_start",
            {"toolCallId": call_id, "toolName": "bash", "arguments": {"command": command}},
            second,
        ),
        event("tool.execution_complete", {"toolCallId": call_id, "success": ok}, second + 0.05),
    ]


def call_lines(text: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := CALL_LINE.match(line))]


def mermaid_block(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("```mermaid")
    return lines[start + 1 : lines.index("```", start)]


def table_rows(markdown: str, header: str) -> list[str]:
    """The rows of the markdown table whose header line starts with `header`."""
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


# --- report v2: a real session folder with the driver's own denial record ---------------

POLICY_DENIAL_SESSION = DATA / "session-policy-denial"
"""events.jsonl and result.json of a real run: `git --version` allowed, `rm victim.txt`
denied by `shell(git:*)`, the driver's `policy.denial` record beside the runtime's (a
driver from before the `policy.in_force` record)."""
POLICY_IN_FORCE_SESSION = DATA / "session-policy-in-force"
"""A real run of the driver under GH_AW_COPILOT_SDK_PERMISSIONS (`write`, `shell(rm old.txt)`,
`shell(git:*)`): `create` adds new.txt, a shell `rm` removes old.txt, `rm victim.txt` is
denied; the answer has blank lines. Paths under /WORKSPACE-ROOT."""
POLICY_REASON = "`rm victim.txt` matches no shell rule"


def shutdown(models: dict[str, Any] | None = None, *, second: float = 9.0, **fields: Any) -> str:
    """A `session.shutdown` line: `models` as `modelMetrics`, `fields` added to `data`."""
    return event("session.shutdown", {"modelMetrics": models or {}, **fields}, second)


def model_metrics(count: int, cost: float, tokens: tuple[int, int, int, int]) -> dict[str, Any]:
    """One `modelMetrics` entry: request count and cost; input, output, cache read and
    cache write tokens."""
    names = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
    return {
        "requests": {"count": count, "cost": cost},
        "usage": dict(zip(names, tokens, strict=True)),
    }


def many_calls(count: int, *, answer: str = "done") -> list[str]:
    """A session of `count` bash calls, one a millisecond, a few of them overlapping:
    every 50th fails, every 70th is denied (with the driver's record), every 90th never
    finishes, and call 7 is the slowest by far."""
    start = datetime(2026, 11, 21, 7, 0, tzinfo=UTC)

    def at(ms: float) -> str:
        return (start + timedelta(milliseconds=ms)).isoformat()

    lines = [
        _record("session.start", {"sessionId": "many", "copilotVersion": "1.0.102"}, at(0)),
        _record("user.message", {"content": "many calls"}, at(1)),
    ]
    for n in range(count):
        call_id, begin = f"call-{n}", 10 + n
        command = f"echo {n}"
        lines.append(
            _record(
                "tool.execution_start",
                {"toolCallId": call_id, "toolName": "bash", "arguments": {"command": command}},
                at(begin),
            )
        )
        if n % 90 == 89:
            continue
        if n % 70 == 69:
            summary = f"shell({command})"
            denial = {"requestSummary": summary, "reason": "no rule", "allowRule": summary}
            lines.append(_record("policy.denial", {**denial, "toolCallId": call_id}, at(begin)))
            result = {"kind": "denied-interactively-by-user"}
            lines.append(
                _record(
                    "permission.completed", {"toolCallId": call_id, "result": result}, at(begin)
                )
            )
        length = 5000 if n == 7 else 3
        done = {"toolCallId": call_id, "success": n % 50 != 49 and n % 70 != 69}
        lines.append(_record("tool.execution_complete", done, at(begin + length)))
    lines.append(_record("assistant.message", {"content": answer}, at(count + 20)))
    lines.append(_record("session.shutdown", {"totalApiDurationMs": 12}, at(count + 30)))
    return lines


def _record(event_type: str, data: dict[str, Any], timestamp: str) -> str:
    return json.dumps({"type": event_type, "timestamp": timestamp, "data": data})


# --- Mermaid's own parser (tests/helpers/mermaid_parse.mjs) -------------------------------

MERMAID_SCRIPT = Path(__file__).resolve().with_name("mermaid_parse.mjs")
MERMAID_MODULES = Path(
    os.environ.get("MERMAID_NODE_MODULES")
    or Path(__file__).resolve().parents[2] / ".cache" / "mermaid" / "node_modules"
)


def mermaid_parse(tmp_path: Path, *charts: list[str]) -> subprocess.CompletedProcess[str]:
    """Each chart (its lines, fences excluded) through Mermaid's parser; one JSON line per
    accepted chart on stdout. Skips without node or Mermaid (`make test` installs it),
    but fails under CI (`CI=true`)."""
    return run_mermaid_script(MERMAID_SCRIPT, tmp_path, charts)


def run_mermaid_script(
    script: Path, tmp_path: Path, charts: tuple[list[str], ...]
) -> subprocess.CompletedProcess[str]:
    """`node SCRIPT FILE...` on Mermaid's install, a file per chart (its lines, fences
    excluded). Skips without node or Mermaid, but fails under CI (`CI=true`)."""
    node = shutil.which("node")
    if node is None or not (MERMAID_MODULES / "mermaid" / "package.json").is_file():
        message = f"node and Mermaid in {MERMAID_MODULES} (installed by `make test`) are required"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    files = []
    for number, chart in enumerate(charts):
        path = tmp_path / f"{script.stem}-{number}.mmd"
        path.write_text("\n".join(chart) + "\n", encoding="utf-8")
        files.append(str(path))
    return subprocess.run(
        [node, str(script), *files],
        env={**os.environ, "MERMAID_NODE_MODULES": str(MERMAID_MODULES)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


# --- any events file: hypothesis strategies -------------------------------------------------

TYPES = [
    "session.start",
    "session.shutdown",
    "session.error",
    "user.message",
    "assistant.turn_start",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "permission.requested",
    "permission.completed",
    "policy.denial",
    "abort",
    "guard.tool_denials_exceeded",
    "system.message",
]

FIELDS = [
    "sessionId",
    "copilotVersion",
    "context",
    "cwd",
    "content",
    "toolCallId",
    "toolName",
    "mcpServerName",
    "arguments",
    "command",
    "path",
    "url",
    "success",
    "result",
    "error",
    "message",
    "code",
    "requestId",
    "permissionRequest",
    "kind",
    "fullCommandText",
    "serverName",
    "feedback",
    "denialCount",
    "threshold",
    "reason",
    "requestSummary",
    "allowRule",
    "modelMetrics",
    "requests",
    "count",
    "cost",
    "usage",
    "inputTokens",
    "accountingSnapshot",
    "totalPremiumRequestCost",
    "totalApiDurationMs",
    "codeChanges",
    "filesModified",
    "linesAdded",
]

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["c1", "c2", "bash", "shell", "url", "approved", "denied-by-rules"])
)

keys = st.sampled_from(FIELDS) | st.text(max_size=6)

json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)

timestamps = st.sampled_from(
    ["2026-11-21T07:35:10.123000+00:00", "2026-11-21T07:35:11Z", "2026-11-21", "0001-01-01T00:00"]
) | st.text(max_size=30)

events = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(TYPES) | st.text(max_size=12) | json_values,
        "timestamp": timestamps | json_values,
        "data": st.dictionaries(keys, json_values, max_size=6) | json_values,
        "id": st.text(max_size=4),
    },
)

event_lines = st.lists(
    st.text(max_size=40) | events.map(json.dumps) | json_values.map(json.dumps), max_size=15
)
"""Any events file: lines that are not JSON, records of any shape, known or not."""


# --- the harness's outcomes ------------------------------------------------------------------

SIDECAR_FAILURE = RunOutcome(
    exit_code=1,
    error_kind="sidecar_unreachable",
    title="The Copilot CLI sidecar could not start",
    message=(
        "The sidecar exited before it listened on 127.0.0.1:4321 (exit status 1).\n"
        "Check COPILOT_GITHUB_TOKEN, then sidecar.log beside the events file."
    ),
    attempts=(
        Attempt(
            1,
            1,
            "sidecar_unreachable",
            "the sidecar exited before it listened (exit status 1)",
            2.0,
        ),
        Attempt(
            2,
            1,
            "sidecar_unreachable",
            "the sidecar exited before it listened (exit status 1)",
            None,
        ),
    ),
)
"""A run that failed before any session existed, after two attempts (the docs' example)."""

_texts = st.text(max_size=60) | st.sampled_from(["", "# x", "```", "| a |", "<b>", "\n\n"])
attempts = st.builds(
    Attempt,
    number=st.integers(min_value=-5, max_value=10**30),
    exit_code=st.integers(min_value=-(10**20), max_value=10**20),
    error_kind=st.none() | _texts,
    message=st.none() | _texts,
    retry_in_s=st.none() | st.floats(),
)


# --- the harness's sandbox.json ---------------------------------------------------------------

HOSTILE_HOSTS = (
    "<script>alert(1)</script>:443",
    "a|b|c:80",
    "`x`*_[y](z)~&$\\:1",
    "# heading\n- list:2",
    "\x1b[2Jterminal\u202e:3",
    "> [!NOTE]:4",
)
"""Host names a tool could make the egress proxy record: markdown, HTML, table pipes, line
breaks, terminal escapes, a bidi override."""

hosts = st.sampled_from(
    ["githubcopilot.com:443", "127.0.0.1:43121", "[::1]:8080", *HOSTILE_HOSTS]
) | st.text(max_size=40)


sandbox_summaries = st.builds(
    SandboxSummary,
    mode=st.sampled_from(["workspace", "off"]) | st.text(min_size=1, max_size=20).filter(str.strip),
    allowed_hosts=st.lists(hosts, max_size=60).map(tuple),
    egress_denied=st.dictionaries(hosts, st.integers(0, 2**63 - 1), max_size=60).map(
        lambda counts: tuple(counts.items())
    ),
    passed_env=st.lists(st.text(max_size=20), max_size=60).map(tuple),
    egress_allowed=st.dictionaries(hosts, st.integers(0, 2**63 - 1), max_size=60).map(
        lambda counts: tuple(counts.items())
    ),
)
"""Any summary the harness could record (hosts unique per count, as in the JSON object)."""


def sandbox_session(folder: Path, content: dict[str, Any] | str) -> Path:
    """A copy of the real session folder `POLICY_DENIAL_SESSION` with `sandbox.json`
    holding `content` (an object as JSON, a string as it is)."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in POLICY_DENIAL_SESSION.iterdir():
        shutil.copyfile(source, folder / source.name)
    text = content if isinstance(content, str) else json.dumps(content)
    (folder / SANDBOX_FILE).write_text(text, encoding="utf-8")
    return folder


outcomes = st.builds(
    RunOutcome,
    exit_code=st.integers(min_value=-300, max_value=300),
    error_kind=st.none() | _texts,
    title=st.none() | _texts,
    message=st.none() | _texts,
    attempts=st.lists(attempts, max_size=30).map(tuple),
    sandbox=st.none() | sandbox_summaries,
)
"""Anything the harness could pass: odd numbers, markdown, blank or missing text, any
sandbox."""
