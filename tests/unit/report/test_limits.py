"""`copilot_driver.report.limits`: the last-resort cut, and quotes read in bounded time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_driver.formatting import shorten
from copilot_driver.report.limits import clip, fit


def test_text_within_the_limit_is_kept() -> None:
    assert fit("# a\n\nb\n", 100) == "# a\n\nb\n"


def test_text_over_the_limit_is_cut_at_a_line_with_a_note() -> None:
    text = "".join(f"line {n}\n" for n in range(10_000))

    cut = fit(text, 4096)

    assert len(cut.encode()) <= 4096
    assert cut.endswith("\n\n_(This summary was cut here: it is limited to 4 KiB.)_\n")
    kept = cut.split("\n\n_(This summary")[0].split("\n")
    assert kept == [f"line {n}" for n in range(len(kept))]


def test_a_code_fence_left_open_is_closed() -> None:
    text = "intro\n```mermaid\n" + "    bar :done, t1, 0, 1\n" * 1000 + "```\nafter\n"

    cut = fit(text, 2048)

    assert len(cut.encode()) <= 2048
    fences = [line for line in cut.split("\n") if line.startswith("```")]
    assert fences == ["```mermaid", "```"]


def test_lone_surrogates_become_question_marks() -> None:
    assert fit("bad \ud800 text\n", 100) == "bad ? text\n"


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(min_value=1024, max_value=4096))
def test_fit_always_holds_the_limit(text: str, limit: int) -> None:
    fitted = fit(text * 20, limit)

    assert len(fitted.encode("utf-8")) <= limit


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(min_value=4, max_value=300))
def test_clip_is_shorten_for_what_fits_its_window(text: str, limit: int) -> None:
    clipped = clip(text, limit)

    assert len(clipped) <= limit
    if len(text) <= 4 * limit + 64:
        assert clipped == shorten(text, limit)


def test_clip_marks_a_cut_even_when_the_window_is_mostly_blank() -> None:
    clipped = clip("a" + " " * 10_000 + "b", 50)

    assert clipped == "a ..."
