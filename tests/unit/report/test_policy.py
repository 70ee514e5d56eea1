"""The policy in force in the report: read from the events file's `policy.in_force`
record, else from result.json's `policy`; shown near the top of the text, the markdown
and the step summary; `not recorded` for files that hold neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copilot_driver import records
from copilot_driver.report import (
    RunOutcome,
    load_timeline,
    parse_timeline,
    render_markdown,
    render_step_summary,
    render_text,
)
from copilot_driver.report.policy import NOT_RECORDED, RULES_LISTED, headline, rules
from copilot_driver.vocabulary import PolicyInForce
from helpers.markdown_render import code_spans, rendered_text
from helpers.report_samples import POLICY_DENIAL_SESSION, POLICY_IN_FORCE_SESSION, event

SCOPED = PolicyInForce(
    mode="scoped",
    source="GH_AW_COPILOT_SDK_PERMISSIONS",
    allowed_tools=("read", "shell(git log:*)"),
    denied_tools=("shell(rm:*)",),
    summary="2 rules: read, shell(git log:*); 1 deny rule: shell(rm:*) (from ...)",
)
NONE = PolicyInForce(mode="unrestricted", source=None, summary="none (unrestricted): ...")


def _policy_line(policy: PolicyInForce) -> str:
    return json.dumps(records.policy_record(policy))


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        (
            SCOPED,
            "2 allow rules, 1 deny rule (from GH_AW_COPILOT_SDK_PERMISSIONS): only what an "
            "allow rule allows was approved",
        ),
        (NONE, "NONE: every tool request was approved (no permission configuration)"),
        (
            PolicyInForce("unrestricted", "none"),  # the word, as the record's schema has it
            "NONE: every tool request was approved (no permission configuration)",
        ),
        (
            PolicyInForce("unrestricted", "GH_AW_COPILOT_SDK_PERMISSIONS", (), ("shell(rm:*)",)),
            "NONE: every tool request was approved but what the 1 deny rule denied "
            "(GH_AW_COPILOT_SDK_PERMISSIONS holds no allow rule)",
        ),
        (
            PolicyInForce("allow-all", "GH_AW_COPILOT_SDK_SERVER_ARGS", (), ("a", "b")),
            "ALLOW-ALL: every tool request was approved but what the 2 deny rules denied "
            "(from GH_AW_COPILOT_SDK_SERVER_ARGS)",
        ),
        (PolicyInForce("future", None, summary="it says"), "future: it says"),
        (None, NOT_RECORDED),
    ],
)
def test_the_headline_says_what_was_approved(policy: PolicyInForce | None, said: str) -> None:
    assert headline(policy) == said


def test_rules_are_listed_whole_and_bounded() -> None:
    many = PolicyInForce("scoped", "X", tuple(f"shell(cmd{n} --flag value)" for n in range(40)))

    listed = rules(many)

    assert listed[0] == ("allow", "shell(cmd0 --flag value)")
    assert len(listed) == RULES_LISTED + 1
    assert listed[-1] == ("...", "and 10 more allow rules")
    assert rules(SCOPED) == [
        ("allow", "read"),
        ("allow", "shell(git log:*)"),
        ("deny", "shell(rm:*)"),
    ]


def test_the_record_in_the_events_file_is_read_first(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    other = PolicyInForce("scoped", "GH_AW_COPILOT_SDK_SERVER_ARGS", ("read",))
    lines = [_policy_line(SCOPED), _policy_line(other), event("user.message", {"content": "x"})]
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = {"exitCode": 0, "policy": NONE.to_json()}
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")

    timeline = load_timeline(folder)

    assert timeline.policy == SCOPED  # the file's first record, not result.json's
    assert "event types not shown" not in render_text(timeline)


def test_result_json_stands_in_for_a_missing_record(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "events.jsonl").write_text(event("user.message", {"content": "x"}) + "\n")
    (folder / "result.json").write_text(json.dumps({"exitCode": 0, "policy": NONE.to_json()}))

    assert load_timeline(folder).policy == NONE


def test_a_malformed_record_is_not_a_policy() -> None:
    broken = json.dumps({"type": "policy.in_force", "data": {"mode": 3}})

    timeline = parse_timeline([broken])

    assert timeline.policy is None
    assert f"  policy       {NOT_RECORDED[:40]}" in render_text(timeline)


def test_files_from_older_drivers_say_the_policy_is_not_recorded() -> None:
    timeline = load_timeline(POLICY_DENIAL_SESSION)

    assert " ".join(render_text(timeline).split()).count(f"policy {NOT_RECORDED}") == 1
    assert f"Policy | {NOT_RECORDED}" in rendered_text(render_markdown(timeline))


def test_a_real_run_names_its_policy_in_every_rendering() -> None:
    timeline = load_timeline(POLICY_IN_FORCE_SESSION)
    said = (
        "3 allow rules (from GH_AW_COPILOT_SDK_PERMISSIONS): only what an allow rule allows "
        "was approved"
    )

    text = render_text(timeline)
    header = text.split("\n\n", 1)[0]
    assert said in " ".join(header.split())
    assert header.endswith(
        "\n                 allow  write"
        "\n                 allow  shell(rm old.txt)"
        "\n                 allow  shell(git:*)"
    )
    markdown = render_markdown(timeline)
    assert f"Policy | {said}; allow write, shell(rm old.txt), shell(git:*)" in rendered_text(
        markdown
    )
    assert code_spans(markdown)[:3] == ["write", "shell(rm old.txt)", "shell(git:*)"]
    summary = rendered_text(render_step_summary(RunOutcome(0, None, None, None), timeline))
    assert summary.split("\n")[2].startswith(f"Policy | {said}")
    assert summary.count("Policy |") == 1


def test_a_policy_that_approved_everything_is_bold_in_markdown() -> None:
    timeline = parse_timeline([_policy_line(NONE)])

    markdown = render_markdown(timeline)

    assert (
        "| Policy | **NONE: every tool request was approved (no permission configuration)** |"
    ) in markdown
    none = "NONE: every tool request was approved (no permission configuration)"
    assert f"  policy       {none}\n" in render_text(timeline)


def test_a_rule_holding_a_pipe_or_backticks_renders_whole_in_the_table() -> None:
    odd = PolicyInForce("scoped", "X", ("shell(echo `date` | tee log)",))

    markdown = render_markdown(parse_timeline([_policy_line(odd)]))

    assert code_spans(markdown) == ["shell(echo `date` | tee log)"]


def test_the_outcomes_policy_wins_in_the_step_summary() -> None:
    timeline = parse_timeline([_policy_line(SCOPED)])

    outcome = RunOutcome(0, None, None, None, policy=NONE)
    shown = rendered_text(render_step_summary(outcome, timeline))

    assert "Policy | NONE: every tool request was approved" in shown
    assert "2 allow rules" not in shown
    before_any_session = render_step_summary(RunOutcome(1, "config_error", "Bad", "x"), None)
    assert f"Policy | {NOT_RECORDED}" in rendered_text(before_any_session)
