"""The OS sandbox in the text report, the markdown report and the step summary."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import given, settings

from copilot_driver.report import (
    STEP_SUMMARY_LIMIT,
    RunOutcome,
    SandboxSummary,
    Timeline,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_step_summary,
    render_text,
)
from copilot_driver.report.markdown import cell
from copilot_driver.report.policy import NOT_RECORDED
from copilot_driver.report.summary import SANDBOX_LISTED, SANDBOX_OFF_WARNING
from helpers.report_samples import (
    DATA,
    HOSTILE_HOSTS,
    SIDECAR_FAILURE,
    UNESCAPED_PIPE,
    event,
    many_calls,
    sandbox_session,
    sandbox_summaries,
    table_rows,
)

WORKSPACE = SandboxSummary(
    mode="workspace",
    allowed_hosts=("127.0.0.1:43121", "githubcopilot.com:443"),
    egress_denied=(("evil.example:443", 1200), ("pypi.org:443", 3)),
    passed_env=("NPM_CONFIG_REGISTRY", "PIP_INDEX_URL"),
    egress_allowed=(("api.github.com:443", 2), ("api.individual.githubcopilot.com:443", 11)),
)
OFF = SandboxSummary(mode="off")
SUCCESS = RunOutcome(0, None, None, None)
WARNING_BLOCK = f"> [!WARNING]\n> {SANDBOX_OFF_WARNING}\n"
POLICY_TABLE = f"| Field | Value |\n|---|---|\n| Policy | {cell(NOT_RECORDED)} |\n"
"""A success at the first try: the policy alone (these runs' files do not record one)."""


def _with(sandbox: SandboxSummary | None) -> Timeline:
    """A one-turn session whose folder held `sandbox` (None: no sandbox.json)."""
    timeline = parse_timeline([event("user.message", {"content": "work"})])
    timeline.sandbox = sandbox
    return timeline


def _text_block(text: str) -> list[str]:
    """The lines from `Sandbox:` to the blank line after it."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Sandbox: "))
    return lines[start : lines.index("", start)]


def test_text_shows_the_mode_the_hosts_and_the_denials() -> None:
    assert _text_block(render_text(_with(WORKSPACE))) == [
        "Sandbox: workspace",
        "  allowed hosts  127.0.0.1:43121, githubcopilot.com:443",
        "  passed env     NPM_CONFIG_REGISTRY, PIP_INDEX_URL",
        "  egress allowed 11  api.individual.githubcopilot.com:443",
        "                  2  api.github.com:443",
        "  egress denied  1,200  evil.example:443",
        "                     3  pypi.org:443",
    ]
    assert _text_block(render_text(_with(SandboxSummary("workspace")))) == [
        "Sandbox: workspace",
        "  allowed hosts  none",
        "  egress allowed none",
        "  egress denied  none",
    ]


def test_text_warns_when_the_sandbox_was_off() -> None:
    text = render_text(_with(OFF))

    assert _text_block(text) == [
        "Sandbox: off",
        "  WARNING: The OS sandbox was off (--sandbox off): tools ran with the runner's full "
        "file system,",
        "           network and environment.",
    ]
    assert "Sandbox:" not in render_text(_with(None))


def test_text_of_a_file_that_does_not_say() -> None:
    block = _text_block(render_text(_with(SandboxSummary("unknown"))))

    assert block[0] == "Sandbox: unknown (sandbox.json does not say)"
    assert "WARNING" not in "\n".join(block)


def test_markdown_shows_the_sandbox_after_the_summary_table() -> None:
    markdown = render_markdown(_with(WORKSPACE))

    assert "## Copilot session timeline\n\n| Field | Value |\n" in markdown  # no warning
    assert "[!WARNING]" not in markdown
    section = markdown.split("### Sandbox\n\n", 1)[1].split("\n\n### ", 1)[0]
    assert section == (
        "| Field | Value |\n"
        "|---|---|\n"
        "| Mode | workspace |\n"
        "| Allowed hosts | 127.0.0.1:43121, githubcopilot.com:443 |\n"
        "| Passed environment | NPM\\_CONFIG\\_REGISTRY, PIP\\_INDEX\\_URL |\n"
        "| Egress allowed | 13 connections to 2 hosts |\n"
        "| Egress denied | 1,203 connections to 2 hosts |\n"
        "\n"
        "| Egress allowed | Connections |\n"
        "|---|---:|\n"
        "| api.individual.githubcopilot.com:443 | 11 |\n"
        "| api.github.com:443 | 2 |\n"
        "\n"
        "| Egress denied | Connections |\n"
        "|---|---:|\n"
        "| evil.example:443 | 1,200 |\n"
        "| pypi.org:443 | 3 |"
    )
    assert (
        markdown.index("| Outcome |")
        < markdown.index("### Sandbox")
        < markdown.index("### Tool calls")
    )


def test_markdown_opens_with_a_warning_when_the_sandbox_was_off() -> None:
    markdown = render_markdown(_with(OFF))

    assert markdown.startswith(
        f"## Copilot session timeline\n\n{WARNING_BLOCK}\n| Field | Value |\n"
    )
    section = markdown.split("### Sandbox\n\n", 1)[1].split("\n\n", 1)[0]
    assert section == "| Field | Value |\n|---|---|\n| Mode | off |"  # no proxy figures recorded
    assert "### Sandbox" not in render_markdown(_with(None))


def test_the_step_summary_shows_the_sandbox_before_the_session() -> None:
    markdown = render_step_summary(RunOutcome(0, None, None, None, sandbox=WORKSPACE), _with(None))

    assert markdown.startswith(f"## Copilot run succeeded\n\n{POLICY_TABLE}\n### Sandbox\n\n")
    assert "| Mode | workspace |" in markdown
    assert table_rows(markdown, "| Egress denied | Connections |") == [
        "| evil.example:443 | 1,200 |",
        "| pypi.org:443 | 3 |",
    ]
    assert markdown.index("### Sandbox") < markdown.index("### Session")
    assert "[!WARNING]" not in markdown


def test_the_step_summary_warns_when_the_sandbox_was_off() -> None:
    outcome = RunOutcome(1, "driver_failed", "It failed", "why\nfix", sandbox=OFF)
    markdown = render_step_summary(outcome, None)

    assert f"> why\n> fix\n\n{WARNING_BLOCK}\n### Sandbox\n\n" in markdown
    assert "| Mode | off |" in markdown
    success = render_step_summary(RunOutcome(0, None, None, None, sandbox=OFF), None)
    assert success.startswith(
        f"## Copilot run succeeded\n\n{POLICY_TABLE}\n{WARNING_BLOCK}\n### Sandbox\n"
    )


def test_the_step_summary_shows_one_sandbox_the_outcomes_first(tmp_path: Path) -> None:
    folder = sandbox_session(tmp_path / "session", {"mode": "off"})
    timeline = load_timeline(folder)

    from_file = render_step_summary(SUCCESS, timeline)
    assert from_file.count("### Sandbox") == 1
    assert from_file.count("[!WARNING]") == 1

    from_outcome = render_step_summary(RunOutcome(0, None, None, None, sandbox=WORKSPACE), timeline)
    assert from_outcome.count("### Sandbox") == 1
    assert "| Mode | workspace |" in from_outcome
    assert "[!WARNING]" not in from_outcome


def test_many_hosts_are_listed_up_to_the_cap() -> None:
    count = SANDBOX_LISTED + 450
    sandbox = SandboxSummary(
        mode="workspace",
        allowed_hosts=tuple(f"allowed-{n}.example:443" for n in range(count)),
        egress_denied=tuple((f"denied-{n:04}.example:443", count - n) for n in range(count)),
        passed_env=tuple(f"VAR_{n}" for n in range(count)),
        egress_allowed=tuple((f"reached-{n:04}.example:443", count - n) for n in range(count)),
    )

    markdown = render_markdown(_with(sandbox))
    for title in ("| Egress denied | Connections |", "| Egress allowed | Connections |"):
        rows = table_rows(markdown, title)
        assert len(rows) == SANDBOX_LISTED + 1
        assert rows[-1] == "| _... and 450 more hosts_ | |"
    hosts_row = next(line for line in markdown.split("\n") if line.startswith("| Allowed hosts |"))
    assert hosts_row.count("allowed-") == SANDBOX_LISTED
    assert hosts_row.endswith(", _... and 450 more hosts_ |")
    assert "_... and 450 more variables_ |" in markdown

    text = render_text(_with(sandbox))
    block = _text_block(text)
    assert sum("allowed-" in line for line in block) < 20
    assert " ".join(block).count("allowed-") == SANDBOX_LISTED
    assert sum(".example:443" in line and "denied-" in line for line in block) == SANDBOX_LISTED
    assert sum(".example:443" in line and "reached-" in line for line in block) == SANDBOX_LISTED
    assert block.count("                 ... and 450 more hosts") == 2
    assert all(len(line) <= 96 for line in block)


def test_hostile_host_names_are_escaped() -> None:
    sandbox = SandboxSummary(
        mode="workspace",
        allowed_hosts=HOSTILE_HOSTS,
        egress_denied=tuple((host, 1) for host in sorted(HOSTILE_HOSTS)),
        passed_env=("A|B", "<b>"),
        egress_allowed=tuple((host, 2) for host in sorted(HOSTILE_HOSTS)),
    )

    for markdown in (
        render_markdown(_with(sandbox)),
        render_step_summary(RunOutcome(0, None, None, None, sandbox=sandbox), None),
    ):
        section = markdown.split("### Sandbox\n\n", 1)[1].split("\n\n### ", 1)[0]
        assert "<script>" not in section
        assert "<b>" not in section
        assert "\\<script\\>alert(1)\\</script\\>:443" in section
        assert "a\\|b\\|c:80" in section
        assert "\\`x\\`\\*\\_\\[y\\](z)\\~\\&\\$\\\\:1" in section
        assert "# heading - list:2" in section  # one line: no heading, no list
        assert "?\\[2Jterminal?:3" in section  # no terminal escape, no bidi override
        assert "\x1b" not in section
        assert "\u202e" not in section
        rows = [line for line in section.split("\n") if line.startswith("|")]
        assert all(len(UNESCAPED_PIPE.findall(row)) == 3 for row in rows), rows
        denied = table_rows(markdown, "| Egress denied | Connections |")
        assert len(denied) == len(HOSTILE_HOSTS)
        reached = table_rows(markdown, "| Egress allowed | Connections |")
        assert len(reached) == len(HOSTILE_HOSTS)

    text = "\n".join(_text_block(render_text(_with(sandbox))))
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "?[2Jterminal?:3" in text


def test_the_byte_cap_holds_with_thousands_of_denied_hosts() -> None:
    wide = "\U0001f600|<>" * 300
    sandbox = SandboxSummary(
        mode="off",
        allowed_hosts=tuple(f"{wide}{n}" for n in range(5_000)),
        egress_denied=tuple((f"{wide}{n}", 5_000 - n) for n in range(5_000)),
        passed_env=tuple(f"{wide}{n}" for n in range(5_000)),
        egress_allowed=tuple((f"{wide}{n}", 5_000 - n) for n in range(5_000)),
    )
    timeline = parse_timeline(many_calls(5_000))
    timeline.sandbox = sandbox

    started = time.monotonic()
    step_summary = render_step_summary(
        RunOutcome(1, "x", "t", "m", SIDECAR_FAILURE.attempts, sandbox=sandbox), timeline
    )
    markdown = render_markdown(timeline)
    elapsed = time.monotonic() - started

    for rendered in (step_summary, markdown):
        assert len(rendered.encode("utf-8")) <= STEP_SUMMARY_LIMIT
        assert WARNING_BLOCK in rendered
        rows = table_rows(rendered, "| Egress denied | Connections |")
        assert len(rows) == SANDBOX_LISTED + 1
        assert rows[-1] == f"| _... and {5_000 - SANDBOX_LISTED:,} more hosts_ | |"
    assert len(step_summary.encode("utf-8")) < STEP_SUMMARY_LIMIT / 2  # capped, not cut
    assert elapsed < 5, f"took {elapsed:.1f} s"


@settings(max_examples=150, deadline=None)
@given(sandbox_summaries)
def test_any_sandbox_renders_bounded_and_warns_only_when_off(sandbox: SandboxSummary) -> None:
    timeline = _with(sandbox)
    for markdown in (
        render_markdown(timeline),
        render_step_summary(RunOutcome(0, None, None, None, sandbox=sandbox), None),
    ):
        assert len(markdown.encode("utf-8")) <= STEP_SUMMARY_LIMIT
        assert ("> [!WARNING]" in markdown) == (sandbox.mode == "off")
        # One section heading (a passed variable's name may itself read "### Sandbox").
        assert [line for line in markdown.splitlines() if line.startswith("### Sandbox")] == [
            "### Sandbox"
        ]
    text = render_text(timeline)
    assert ("WARNING:" in text) == (sandbox.mode == "off")


def test_the_example_in_the_docs_is_a_real_render(tmp_path: Path) -> None:
    docs = (DATA.parent.parent / "docs" / "report.md").read_text(encoding="utf-8")
    section = docs.split("## The OS sandbox", 1)[1].split("\n## ", 1)[0]
    record = json.loads(section.split("```json\n", 1)[1].split("```\n", 1)[0])
    example = section.split("block is:\n\n```\n", 1)[1].split("```\n", 1)[0]

    timeline = load_timeline(sandbox_session(tmp_path / "session", record))

    assert "\n".join(_text_block(render_text(timeline))) + "\n" == example
    assert SANDBOX_OFF_WARNING in " ".join(section.split())
