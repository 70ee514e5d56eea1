"""What a reader sees of the markdown report and its chart, asked of the real renderers:
markdown-it-py (CommonMark with GitHub's tables) for the markdown, Mermaid's own renderer
(tests/helpers/mermaid_render.mjs) for the chart. A value is shown as the value: a
backtick in it never shows as a stray backtick beside a code span, a `:` in a chart
label is kept."""

from __future__ import annotations

import random
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.report import parse_timeline, render_markdown
from copilot_driver.report.markdown_text import code, prose
from helpers.markdown_render import code_spans, rendered_text
from helpers.mermaid_render import rendered_labels
from helpers.report_samples import bash_call, event, mermaid_block
from helpers.report_samples import mermaid_parse as mermaid_grammar

_VISIBLE = string.ascii_letters + string.digits + string.punctuation + "äé日😀"
words = st.text(string.ascii_letters + string.digits + "-./=_$*~+%@äé日😀", min_size=1, max_size=8)
values = st.text(_VISIBLE + " ", min_size=1, max_size=40).filter(lambda v: v.strip() != "")


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- code spans and quoted values, through markdown-it-py ---------------------------------


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_code_span_renders_as_its_value_whatever_backticks_it_holds(value: str) -> None:
    paragraph = f"x {code(value)} y"
    row = f"| Field | Value |\n|---|---|\n| v | {code(value, in_table=True)} |"

    assert code_spans(paragraph) == [_flat(value)]
    assert code_spans(row) == [_flat(value)]


@st.composite
def commands(draw: st.DrawFn) -> str:
    """A command as the policy quotes it: words, some of them in backticks (a command
    substitution: bash's own backticks come in pairs). Its words hold no quote or
    bracket beside a backtick: there a quote's end cannot be told from a command's own
    backtick (`prose` documents how it reads the quotes)."""
    tokens = draw(st.lists(st.tuples(words, st.booleans()), min_size=1, max_size=5))
    return " ".join(f"`{word}`" if quoted else word for word, quoted in tokens)


@settings(max_examples=300, deadline=None)
@given(commands(), commands(), st.sampled_from(["", ".", ",", ";", ":", ")"]))
def test_quoted_values_in_a_sentence_render_as_code(first: str, rule: str, stop: str) -> None:
    sentence = f"`{first}` matches no shell rule{stop} allow with `shell({rule})`{stop}"

    shown = prose(sentence)

    assert code_spans(shown) == [first, f"shell({rule})"]
    assert rendered_text(shown) == sentence.replace(f"`{first}`", first, 1).replace(
        f"`shell({rule})`", f"shell({rule})"
    )


def test_real_reasons_render_without_stray_backticks() -> None:
    cases = {
        "denied: `rm victim.txt` matches no shell rule": ["rm victim.txt"],
        "denied: `echo `date` now` matches no shell rule": ["echo `date` now"],
        "denied: ``date` x` matches no shell rule": ["`date` x"],
        "`--exec` sets configuration or the program path, which can run programs": ["--exec"],
        "the awk program uses `system`, which can run commands": ["system"],
        "a `|` in a table": ["|"],
    }
    for sentence, spans in cases.items():
        assert code_spans(prose(sentence)) == spans, sentence
        assert "`" not in rendered_text(prose(sentence)).replace(spans[0], ""), sentence
        row = f"| Field | Value |\n|---|---|\n| Error | {prose(sentence, in_table=True)} |"
        assert code_spans(row) == spans, sentence


def test_backticks_that_quote_nothing_show_as_typed() -> None:
    for text in ["don`t", "a ` b", "unclosed `quote here", "``", "`", "x`y`z"]:
        assert rendered_text(prose(text)) == text
        assert code_spans(prose(text)) == []


def test_the_report_renders_a_denial_with_its_reason_and_rule_as_code() -> None:
    reason = "`echo `date` | tee log` matches no shell rule"
    denial = {
        "requestSummary": "shell(echo `date` | tee log)",
        "reason": reason,
        "allowRule": "shell(echo `date` | tee log)",
        "toolCallId": "c1",
    }
    lines = [*bash_call("c1", "echo `date` | tee log", 0.1, ok=False)]
    lines.append(event("policy.denial", denial, 0.12))
    lines.append(event("session.error", {"message": "`gh` failed: exit `1`"}, 0.2))

    shown = render_markdown(parse_timeline(lines))

    text = rendered_text(shown)
    assert (
        "shell(echo `date` | tee log): denied: echo `date` | tee log matches no shell rule; "
        "allow with shell(echo `date` | tee log)"
    ) in text
    assert "session.error (+0.10s): gh failed: exit 1" in text
    assert "Outcome | error: gh failed: exit 1" in text
    spans = code_spans(shown)
    assert spans.count("echo `date` | tee log") == 1
    assert spans.count("shell(echo `date` | tee log)") == 1


# --- the chart's labels, through Mermaid's renderer ---------------------------------------

LABEL_CHARS = 48
"""A label's length in the chart, at most."""
LABEL_CASES = [
    "curl https://example.com:8443/x",
    "git log --format=%H:%s -- a;b",
    "echo a:b; echo `c` # d %% e <br>",
    "x &amp; &#58; #58; &colon;",
    "printf 'ﬂ°°58¶ß ﬂ° ¶'",
    "echo 'title: x' ; section y",
    "python -c 'print(1)'",
    "日本語 😀 äé",
]


def _corpus(count: int, seed: int) -> list[str]:
    chooser = random.Random(seed)
    alphabet = _VISIBLE + "ﬂ°¶ß  "
    return [
        "".join(chooser.choice(alphabet) for _ in range(chooser.randint(1, 40)))
        for _ in range(count)
    ]


def _chart_of(commands: list[str]) -> list[str]:
    lines = []
    for n, command in enumerate(commands):
        lines += bash_call(f"c{n}", command, n / 10)
    return mermaid_block(render_markdown(parse_timeline(lines)))


def test_chart_labels_render_as_the_calls_commands(tmp_path: Path) -> None:
    commands = LABEL_CASES + _corpus(80, seed=40)
    chart = _chart_of(commands)

    (labels,) = rendered_labels(tmp_path, chart)

    assert labels[0] == "whole session"
    assert len(labels) == 1 + len(commands)
    for label, command in zip(labels[1:], commands, strict=True):
        shown = _flat(f"bash {command}")
        if len(shown) <= LABEL_CHARS:
            assert label == shown
        else:  # shortened, and says so
            assert label.endswith("...")
            assert shown.startswith(label.removesuffix("...").rstrip())
    (parsed,) = [
        line for line in mermaid_grammar(tmp_path, chart).stdout.splitlines() if line.strip()
    ]
    assert '"tasks":' in parsed


def test_a_web_fetch_label_keeps_the_scheme_of_its_url(tmp_path: Path) -> None:
    call = {"toolCallId": "w1", "toolName": "web_fetch", "arguments": {"url": "https://x.io/a"}}
    lines = [
        event("tool.execution_start", call, 0.1),
        event("tool.execution_complete", {"toolCallId": "w1", "success": True}, 0.2),
    ]

    (labels,) = rendered_labels(tmp_path, mermaid_block(render_markdown(parse_timeline(lines))))

    assert labels == ["whole session", "web_fetch https://x.io/a"]


def test_a_chart_of_labels_made_of_syntax_stays_under_mermaids_size_limit(tmp_path: Path) -> None:
    # Each character written as an entity code: the longest labels the chart can hold.
    commands = [("ﬂ" if n % 2 else ":") * 300 for n in range(500)]

    chart = _chart_of(commands)

    completed = mermaid_grammar(tmp_path, chart)
    assert completed.returncode == 0, completed.stderr
    assert '"tasks":101' in completed.stdout  # the whole session and the 100 bars drawn
